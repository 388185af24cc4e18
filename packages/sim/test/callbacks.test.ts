// Every function a run is handed may throw or answer garbage. The rule: the run stops there and
// `simulate` throws a CallbackError naming the function, the instant and the seed (with what was
// thrown as its cause); nothing outlives the run, so the next one is as if the failed one had
// never been.
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, perSecond } from "@tideward/quota-engine";
import { CallbackError, FailureSchedule, Simulator, keys, latency, policy, simulate, traffic } from "@tideward/sim";
import type { Adapter, Distribution, PolicySpec, SimulationOptions, Traffic } from "@tideward/sim";
import { STARTS, caught } from "./helpers";

const boom = new Error("boom");

/** A switch a faulty part reads: while on, it misbehaves. */
const faulty = { on: true };

/** A distribution that draws like `exponential(10)` until told to answer `bad` (or throw). */
function flaky(bad: number | "throw", after = 50): Distribution {
  let n = 0;
  return {
    label: "flaky",
    mean: 10,
    sample: (random) => {
      if (faulty.on && ++n > after) {
        if (bad === "throw") throw boom;
        return bad;
      }
      return -10 * Math.log(1 - random());
    },
  };
}

/** A policy whose `method` misbehaves once `after` calls to it have gone well. */
function brokenPolicy(
  method: "admit" | "settle" | "release" | "held" | "stats" | "reason" | "delay",
  after = 20,
): PolicySpec {
  return {
    name: `broken ${method}`,
    create: () => {
      let n = 0;
      let inside = 0;
      const bad = (): boolean => faulty.on && ++n > after;
      const adapter: Adapter = {
        name: `broken ${method}`,
        side: method === "release" ? "server" : "client",
        get reason() {
          return method === "reason" && faulty.on ? (42 as unknown as string) : "broken";
        },
        get delay() {
          return method === "delay" && bad() ? NaN : 0;
        },
        admit: () => {
          if (method === "admit" && bad()) throw boom;
          if (method === "reason" && bad()) return undefined;
          inside++;
          return true;
        },
        settle: () => {
          inside--;
          if (method === "settle" && bad()) throw boom;
        },
        release: () => {
          inside--;
          if (method === "release" && bad()) throw boom;
        },
        held: () => {
          if (method === "held" && bad()) throw boom;
          return inside;
        },
        stats: () => {
          if (method === "stats" && faulty.on) throw boom;
          return {};
        },
      };
      return adapter;
    },
  };
}

/** A traffic of `rate` calls a second whose arrivals go wrong after `after` calls, as `how` says. */
function brokenTraffic(how: "throw" | "NaN" | "backwards" | "key" | "cost", after = 30): Traffic {
  const inner = traffic.constant({ rate: 100 });
  return {
    label: "broken",
    keys: inner.keys,
    open(context) {
      const a = inner.open(context);
      let n = 0;
      const out = { key: 0, cost: 1, next: () => Infinity };
      out.next = () => {
        const t = a.next();
        if (faulty.on && ++n > after) {
          if (how === "throw") throw boom;
          if (how === "NaN") return NaN;
          if (how === "backwards") return t - 1_000;
          if (how === "key") out.key = 7;
          if (how === "cost") out.cost = -1;
        }
        return t;
      };
      return out;
    },
  };
}

class BrokenSchedule extends FailureSchedule {
  override rate(offset: number): number {
    if (faulty.on && offset > 500) return 1.5;
    return 0.1;
  }
}

describe.each(STARTS)("a function handed to the run misbehaves (start %s)", (start) => {
  const base: SimulationOptions = { start, seed: 7, duration: 2_000, traffic: traffic.poisson({ rate: 100 }) };

  // [what, options, the callback named, the detail's start]
  const cases: readonly [string, SimulationOptions, string, RegExp][] = [
    ["a latency sample throws", { ...base, backend: { latency: flaky("throw") } }, "the backend", /^boom$/],
    [
      "a latency sample is NaN",
      { ...base, backend: { latency: flaky(NaN) } },
      "the backend",
      /^backend latency: the distribution flaky drew NaN; a duration is a finite number of milliseconds, 0 or more$/,
    ],
    ["a latency sample is negative", { ...base, backend: { latency: flaky(-1) } }, "the backend", /drew -1;/],
    [
      "a latency sample is Infinity",
      { ...base, backend: { latency: flaky(Infinity) } },
      "the backend",
      /drew Infinity;/,
    ],
    [
      "a failed call's latency throws",
      { ...base, backend: { failures: 0.5, failLatency: flaky("throw", 10) } },
      "the backend",
      /^boom$/,
    ],
    [
      "a network leg is NaN",
      { ...base, network: { request: flaky(NaN) } },
      "the network",
      /^simulate network request: the distribution flaky drew NaN/,
    ],
    [
      "a contention window throws",
      { ...base, backend: { contention: { window: flaky("throw") } } },
      "the backend",
      /^boom$/,
    ],
    [
      "a failure schedule answers 1.5",
      { ...base, backend: { failures: new BrokenSchedule() } },
      "the backend",
      /^backend failures: the schedule's rate\(\d+(\.\d+)?\) answered 1\.5; a share is in \[0, 1\]$/,
    ],
    ["the traffic throws", { ...base, traffic: brokenTraffic("throw") }, "the traffic", /^boom$/],
    [
      "the traffic's next arrival is NaN",
      { ...base, traffic: brokenTraffic("NaN") },
      "the traffic",
      /^the traffic's next arrival must be a time no earlier than the last \(.+ ms\), got NaN$/,
    ],
    [
      "the traffic goes back in time",
      { ...base, traffic: brokenTraffic("backwards") },
      "the traffic",
      /^the traffic's next arrival must be a time no earlier than the last/,
    ],
    [
      "the traffic gives a key it does not have",
      { ...base, traffic: brokenTraffic("key") },
      "the traffic",
      /^the traffic gave key 7; keys are whole numbers from 0 to 0$/,
    ],
    [
      "the traffic gives a negative cost",
      { ...base, traffic: brokenTraffic("cost") },
      "the traffic",
      /^the traffic gave a cost of -1; a cost is a finite number, 0 or more$/,
    ],
    [
      "a shaped traffic's rate throws",
      {
        ...base,
        traffic: traffic.shaped({
          peak: 100,
          rate: (o) => {
            if (faulty.on && o > 500) throw boom;
            return 100;
          },
        }),
      },
      "the traffic",
      /^boom$/,
    ],
    [
      "a shaped traffic's rate passes its peak",
      { ...base, traffic: traffic.shaped({ peak: 100, rate: (o) => (faulty.on && o > 500 ? 150 : 100) }) },
      "the traffic",
      /^traffic\.shaped rate\(\d+(\.\d+)?\) must answer calls per second from 0 to the peak \(100\), got 150$/,
    ],
    [
      "a shaped traffic's rate is NaN (even arrivals)",
      {
        ...base,
        traffic: traffic.shaped({ peak: 100, process: "even", rate: (o) => (faulty.on && o > 500 ? NaN : 100) }),
      },
      "the traffic",
      /got NaN$/,
    ],
    ["a policy's admit throws", { ...base, policies: [brokenPolicy("admit")] }, "policy broken admit admit", /^boom$/],
    [
      "a policy's settle throws",
      { ...base, policies: [brokenPolicy("settle")] },
      "policy broken settle settle",
      /^boom$/,
    ],
    [
      "a server-side policy's release throws",
      { ...base, policies: [brokenPolicy("release"), policy.gate(1)] },
      "policy broken release release",
      /^boom$/,
    ],
    [
      "a policy's held throws (invariants on)",
      { ...base, invariants: true, policies: [brokenPolicy("held")] },
      "policy broken held held",
      /^boom$/,
    ],
    ["a policy's stats throws", { ...base, policies: [brokenPolicy("stats")] }, "policy broken stats stats", /^boom$/],
    [
      "a policy's reason is not text",
      { ...base, policies: [brokenPolicy("reason")] },
      "policy broken reason reason",
      /^policy broken reason reason must be text, got 42$/,
    ],
    [
      "a policy's delay is NaN",
      { ...base, policies: [brokenPolicy("delay")] },
      "policy broken delay delay",
      /^policy broken delay delay must be a finite number of milliseconds, 0 or more, got NaN$/,
    ],
    [
      "a quota's key function throws",
      {
        ...base,
        traffic: traffic.poisson({ rate: 100, keys: keys.uniform({ count: 50 }) }),
        policies: [
          policy.quota({
            dimensions: [
              {
                limit: perSecond("user", 10),
                key: (k, name) => {
                  if (faulty.on && k === 49) throw boom;
                  return new QuotaKey("sim", name, "user");
                },
              },
            ],
          }),
        ],
      },
      "policy quota admit",
      /^boom$/,
    ],
    [
      "a quota store throws",
      {
        ...base,
        policies: [
          policy.quota({
            dimensions: [{ limit: perSecond("user", 10) }, { limit: perSecond("all", 50) }],
            store: () => {
              const engine = new QuotaEngine();
              let n = 0;
              const check = engine.checkAtomic.bind(engine);
              engine.checkAtomic = (...args) => {
                if (faulty.on && ++n > 20) throw boom;
                return check(...args);
              };
              return engine;
            },
          }),
        ],
      },
      "policy quota admit",
      /^boom$/,
    ],
  ];

  it.each(cases)(
    "%s: the run stops with a CallbackError naming it, and the next run is untouched",
    (_, options, callback, detail) => {
      faulty.on = true;
      const e = caught(() => simulate(options));
      expect(e).toBeInstanceOf(CallbackError);
      expect(e.callback).toBe(callback);
      expect(e.message.startsWith(`simulate: ${callback} failed at ${e.offset} ms after the start (seed 7): `)).toBe(
        true,
      );
      expect(e.message.slice(e.message.indexOf("(seed 7): ") + 10)).toMatch(detail);
      if (detail.source === "^boom$") expect(e.cause).toBe(boom);
      expect(e.seed).toBe(7);
      expect(e.time).toBe(start + e.offset);
      expect(e.offset).toBeGreaterThanOrEqual(0);
      expect(e.offset).toBeLessThan(Infinity);
      // The same options with the fault switched off: exactly a run that never met it.
      faulty.on = false;
      const again = simulate(options);
      const fresh = simulate(options);
      expect(again).toEqual(fresh);
      expect(again.summary.calls).toBeGreaterThan(0);
    },
  );

  it("a policy's create, a traffic's open and a key's name failing stop the run before or after it, named", () => {
    const throwing: PolicySpec = {
      name: "eager",
      create: () => {
        throw boom;
      },
    };
    const e = caught(() => simulate({ ...base, policies: [throwing] }));
    expect(e.message).toBe("simulate: policy eager create failed before the run started (seed 7): boom");
    expect(e.cause).toBe(boom);
    expect(Number.isNaN(e.time)).toBe(true);
    const garbage = caught(() => simulate({ ...base, policies: [{ name: "empty", create: () => null as never }] }));
    expect(garbage.message).toBe(
      "simulate: policy empty create failed before the run started (seed 7): policy empty create must return an adapter (an object with admit and settle), got null",
    );
    const closed: Traffic = { label: "closed", keys: { count: 1, name: () => "a" }, open: () => null as never };
    expect(caught(() => simulate({ ...base, traffic: closed })).message).toMatch(
      /^simulate: the traffic failed before the run started \(seed 7\): the traffic's open must return arrivals/,
    );
    const nameless = traffic.poisson({ rate: 100, keys: { ...keys.uniform({ count: 3 }), name: () => 5 as never } });
    expect(caught(() => simulate({ ...base, traffic: nameless, perKey: true })).message).toMatch(
      /^simulate: the traffic's keys name failed at 20\d\d(\.\d+)? ms after the start \(seed 7\): key 0's name must be text, got 5$/,
    );
    const uncounted = { ...traffic.poisson({ rate: 1 }), keys: { count: 0, name: () => "a" } };
    expect(caught(() => simulate({ ...base, traffic: uncounted })).message).toMatch(
      /the traffic's keys count must be a whole number from 1 to 2 147 483 647, got 0$/,
    );
  });

  it("a Simulator's event that throws passes the error on; the event is spent and run goes on after it", () => {
    const sim = new Simulator({ start });
    const fired: number[] = [];
    sim.at(start + 1, () => {
      throw boom;
    });
    sim.at(start + 2, (now) => void fired.push(now - start));
    expect(() => sim.run()).toThrow(boom);
    expect(sim.now()).toBe(start + 1);
    sim.run();
    expect(fired).toEqual([2]);
  });
});

it("a latency distribution from outside must say what it is", () => {
  expect(() =>
    simulate({
      duration: 10,
      traffic: traffic.constant({ rate: 1 }),
      backend: { latency: { mean: 1, sample: () => 1 } as never },
    }),
  ).toThrow(
    "backend latency (ms) must be a number or a distribution (fixed, uniform, exponential, logNormal, normal, bimodal), got [object Object]",
  );
  expect(latency.fixed(3).label).toBe("fixed(3)");
});
