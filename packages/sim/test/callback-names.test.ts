// A CallbackError names the function that threw or answered garbage, not whichever the run was
// nearest to: a merged traffic's part, the client's backoff, a policy's envelopes.
import { describe, expect, it } from "vitest";
import { Backoff } from "@tideward/backoff";
import { keys, policy, simulate, traffic } from "@tideward/sim";
import type { CallbackError, PolicySpec, SimulationOptions, Traffic } from "@tideward/sim";
import { STARTS, caught } from "./helpers";

/** A one-key traffic model whose arrivals come from `next`, each with key `key`. */
function handmade(label: string, next: () => number, key = 0): Traffic {
  return { label, keys: { count: 1, name: () => label }, open: () => ({ key, cost: 1, next }) };
}

const good = traffic.constant({ rate: 10, keys: keys.single("good") });

describe("traffic.merge names the part", () => {
  it("a part whose next arrival is NaN stops the run, where it used to drop out unseen", () => {
    const e = caught(() =>
      simulate({
        duration: 1_000,
        traffic: traffic.merge(
          good,
          handmade("bad", () => NaN),
        ),
      }),
    );
    expect(e.callback).toBe("traffic.merge model 1 (bad)");
    expect(e.message).toMatch(/its next arrival must be a time no earlier than the run's start \(0 ms\), got NaN$/);
  });

  it("a part's key outside its own keys stops the run, where it used to count as the next part's", () => {
    let n = 0;
    const stray = handmade("stray", () => (n++ < 3 ? n * 100 : Infinity), 1);
    const e = caught(() => simulate({ duration: 1_000, perKey: true, traffic: traffic.merge(stray, good) }));
    expect(e.callback).toBe("traffic.merge model 0 (stray)");
    expect(e.message).toMatch(/it gave key 1; its keys are whole numbers from 0 to 0$/);
  });

  it("a part that throws, or goes back in time, is named with what it did", () => {
    const thrown = new Error("part down");
    let n = 0;
    const e = caught(() =>
      simulate({
        duration: 1_000,
        traffic: traffic.merge(
          good,
          handmade("flaky", () => {
            if (++n > 3) throw thrown;
            return n * 10;
          }),
        ),
      }),
    );
    expect([e.callback, e.cause]).toEqual(["traffic.merge model 1 (flaky)", thrown]);
    let t = 500;
    const back = caught(() =>
      simulate({ duration: 1_000, traffic: traffic.merge(handmade("back", () => (t -= 100))) }),
    );
    expect(back.callback).toBe("traffic.merge model 0 (back)");
    expect(back.message).toMatch(/no earlier than its last \(400 ms\), got 300$/);
  });

  it("a part that is not a traffic model is refused when merged, naming it", () => {
    expect(() => traffic.merge({ open() {} } as never)).toThrow(
      /^traffic\.merge model 0's keys must be a key table \(an object with count and name\), got undefined$/,
    );
    expect(() => traffic.merge(good, { ...good, keys: { count: 0, name: () => "" } })).toThrow(
      /^traffic\.merge model 1's keys count must be a whole number/,
    );
  });

  describe.each(STARTS)("a part of a merge within a merge is named by its full path (start %s)", (start) => {
    /** A one-key model whose `n`-th arrival (from 1) is `at(n)` ms after the run's start. */
    const relative = (label: string, at: (n: number) => number, key = 0): Traffic => ({
      label,
      keys: { count: 1, name: () => label },
      open: (context) => {
        let n = 0;
        return { key, cost: 1, next: () => context.start + at(++n) };
      },
    });
    const late = relative("late", (n) => (n > 3 ? NaN : n * 10));

    it("two deep: part 1 of part 1", () => {
      const e = caught(() =>
        simulate({ start, duration: 1_000, traffic: traffic.merge(good, traffic.merge(good, late)) }),
      );
      expect(e.callback).toBe("traffic.merge model 1 (late) of model 1 (constant(10/s) + late)");
      expect(e.message).toMatch(/its next arrival must be a time no earlier than its last \(.+ ms\), got NaN$/);
    });

    it("three deep, a key outside the part's own, and a part whose open throws", () => {
      const stray = relative("stray", (n) => (n < 3 ? n * 100 : Infinity), 1);
      const e = caught(() =>
        simulate({
          start,
          duration: 1_000,
          perKey: true,
          traffic: traffic.merge(traffic.merge(good, traffic.merge(stray, good)), good),
        }),
      );
      expect(e.callback).toBe(
        "traffic.merge model 0 (stray) of model 1 (stray + constant(10/s)) of model 0 (constant(10/s) + stray + constant(10/s))",
      );
      expect(e.message).toMatch(/it gave key 1; its keys are whole numbers from 0 to 0$/);
      const thrown = new Error("cannot open");
      const shut: Traffic = {
        label: "shut",
        keys: { count: 1, name: () => "shut" },
        open: () => {
          throw thrown;
        },
      };
      const o = caught(() => simulate({ start, duration: 1_000, traffic: traffic.merge(traffic.merge(good, shut)) }));
      expect([o.callback, o.cause]).toEqual([
        "traffic.merge model 1 (shut) of model 0 (constant(10/s) + shut) open",
        thrown,
      ]);
      // One level, as before.
      expect(caught(() => simulate({ start, duration: 1_000, traffic: traffic.merge(good, late) })).callback).toBe(
        "traffic.merge model 1 (late)",
      );
    });
  });

  it("well-behaved parts merge as before: interleaved, keys numbered after the ones before", () => {
    const r = simulate({ duration: 1_000, perKey: true, traffic: traffic.merge(good, traffic.constant({ rate: 5 })) });
    expect(r.keys?.offered).toEqual([10, 5]);
  });
});

describe("the client's backoff is named as the backoff", () => {
  /** A backoff whose delay is `delay`, retried after every failure. */
  class Odd extends Backoff {
    readonly #delay: () => unknown;
    constructor(delay: () => unknown) {
      super({ attempts: 3 });
      this.#delay = delay;
    }
    override delay(): number {
      return this.#delay() as number;
    }
  }
  const run = (delay: () => unknown, policies: PolicySpec[] = []): SimulationOptions => ({
    duration: 1_000,
    traffic: traffic.constant({ rate: 10 }),
    backend: { failures: 1 },
    policies,
    client: { retry: { backoff: new Odd(delay) } },
  });

  it.each([
    ["NaN", () => NaN, /got NaN$/],
    ["negative", () => -1e9, /got -1000000000$/],
    ["Infinity", () => Infinity, /got Infinity$/],
    ["text", () => "5", /got "5"$/],
  ])("a delay of %s is refused, where it used to end or strand every call", (_, delay, message) => {
    for (const policies of [[], [policy.breaker()]]) {
      const e = caught(() => simulate(run(delay, policies)));
      expect(e.callback).toBe("client retry backoff delay");
      expect(e.message).toMatch(/delay\(1\) must answer a wait in ms \(a finite number, 0 or more\) or undefined/);
      expect(e.message).toMatch(message);
    }
  });

  it("a delay that throws is the backoff's, not the policy settled before it", () => {
    const thrown = new Error("bk");
    for (const policies of [[], [policy.breaker()]]) {
      const e = caught(() =>
        simulate(
          run(() => {
            throw thrown;
          }, policies),
        ),
      );
      expect([e.callback, e.cause]).toEqual(["client retry backoff delay", thrown]);
    }
  });
});

describe("a policy's envelopes are checked as it is made, by name", () => {
  const withEnvelopes = (name: string, envelopes: unknown): PolicySpec => ({
    name,
    create: () => ({ name, side: "client", reason: name, admit: () => true, settle: () => {}, envelopes }) as never,
  });
  const run = (envelopes: unknown): CallbackError =>
    caught(() =>
      simulate({
        duration: 1_000,
        traffic: traffic.constant({ rate: 10 }),
        invariants: true,
        policies: [withEnvelopes("first", envelopes), withEnvelopes("second", [])],
      }),
    );

  it.each([
    [[null], "policy first envelopes[0] must be an object, got null"],
    [{}, "policy first envelopes must be an array, got [object Object]"],
    [
      [{ kind: "window", label: "w", quota: NaN, window: 1_000 }],
      "policy first envelopes[0] quota must be 0 or more, got NaN",
    ],
    [[{ kind: "rate", label: "r", rate: 0, burst: 1 }], "policy first envelopes[0] rate must be above 0, got 0"],
    [
      [{ kind: "gate", label: "g" }],
      'policy first envelopes[0] kind must be "rate", "window" or "concurrency", got "gate"',
    ],
    [[{ kind: "concurrency", limit: 1 }], "policy first envelopes[0] label must be text, got undefined"],
    [
      [{ kind: "concurrency", label: "c", limit: 1, scope: 3 }],
      "policy first envelopes[0] scope must be a function, got 3",
    ],
  ])("envelopes %j are refused as the first policy's", (envelopes, message) => {
    const e = run(envelopes);
    expect(e.callback).toBe("policy first create");
    expect(e.message).toBe(`simulate: policy first create failed before the run started (seed 1): ${message}`);
  });

  it("a release, held or stats that is not a function is refused as the policy is made", () => {
    const spec: PolicySpec = {
      name: "odd",
      create: () =>
        ({ name: "odd", side: "client", reason: "odd", admit: () => true, settle: () => {}, release: 5 }) as never,
    };
    const e = caught(() => simulate({ duration: 1_000, traffic: traffic.constant({ rate: 10 }), policies: [spec] }));
    expect(e.callback).toBe("policy odd create");
    expect(e.message).toMatch(/policy odd release must be a function, got 5$/);
  });
});
