import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Bucket, Gate } from "@tideward/limiters";
import {
  InvariantError,
  defineScenario,
  isInvariantError,
  keys,
  knobArbitrary,
  latency,
  policy,
  seedKnob,
  simulate,
  traffic,
} from "@tideward/sim";
import type { PolicySpec } from "@tideward/sim";
import { STARTS } from "./helpers";

/** A bucket adapter with a bug, declaring the envelope a correct bucket keeps. */
function brokenBucket(rate: number, bug: "leaks" | "double-charges", after = 0): PolicySpec {
  return {
    name: `bucket that ${bug}`,
    create: (context) => {
      const b = new Bucket(rate, { now: context.start });
      let refusals = 0;
      return {
        name: `bucket that ${bug}`,
        side: "client",
        reason: "bucket",
        envelopes: [{ kind: "rate", label: "bucket", rate, burst: rate, exact: true }],
        admit: (now, _key, cost) => {
          if (bug === "double-charges")
            return b.take(now, cost) && (++refusals <= after || b.take(now, cost)) ? true : undefined;
          if (b.take(now, cost)) return true;
          // Under sustained overload it lets a refused call through anyway.
          return ++refusals > after ? true : undefined;
        },
        settle: () => {},
      };
    },
  };
}

/** A gate adapter that forgets to give its place back when a call fails. */
function leakyGate(limit: number): PolicySpec {
  return {
    name: "leaky gate",
    create: () => {
      const g = new Gate(limit);
      return {
        name: "leaky gate",
        side: "server",
        reason: "gate",
        admit: () => (g.enter() ? true : undefined),
        settle: (_t, _now, ok) => {
          if (ok) g.leave();
        },
        release: () => g.leave(),
        held: () => g.held,
      };
    },
  };
}

function caught(run: () => unknown): InvariantError {
  try {
    run();
  } catch (e) {
    if (isInvariantError(e)) return e;
    throw e;
  }
  throw new Error("no invariant was broken");
}

describe.each(STARTS)("invariants (start %s)", (start) => {
  const overload = { start, duration: 20_000, traffic: traffic.poisson({ rate: 50 }), invariants: true };

  it("catch a limiter admitting past its bound", () => {
    const e = caught(() => simulate({ ...overload, policies: [brokenBucket(10, "leaks", 5)] }));
    expect(e).toBeInstanceOf(InvariantError);
    expect(e.policy).toBe("bucket that leaks");
    expect(e.message).toMatch(/past its bound \(burst 10, 10\/s\)/);
    expect(e.offset).toBeLessThan(2_000);
    expect(e.time - e.offset).toBe(start);
  });

  it("catch a limiter that counts a charge twice (it refuses with room left)", () => {
    const e = caught(() => simulate({ ...overload, policies: [brokenBucket(10, "double-charges", 3)] }));
    expect(e.invariant).toBe("refused with room");
    expect(e.message).toMatch(/counted twice/);
  });

  it("catch a gate whose held drifts from the calls inside it", () => {
    const e = caught(() =>
      simulate({ ...overload, backend: { latency: latency.fixed(30), failures: 0.2 }, policies: [leakyGate(5)] }),
    );
    expect(e.invariant).toBe("held");
    expect(e.message).toMatch(/holds \d+ where \d+ of its admitted attempts are unsettled/);
  });

  it("pass the real policies under heavy, bursty, many-key traffic", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000 }), fc.integer({ min: 5, max: 400 }), (seed, rate) => {
        const r = simulate({
          seed,
          start,
          duration: 5_000,
          traffic: traffic.merge(
            traffic.poisson({ rate, keys: keys.zipf({ count: 20 }) }),
            traffic.bursts({ size: 30, spacing: 0.5, every: 1_300 }),
          ),
          backend: { latency: latency.exponential(15), failures: 0.1, workers: 4, queue: 10 },
          client: { timeout: 50, retry: { backoff: { attempts: 2, base: 5 } } },
          policies: [
            policy.bucket(40, { perKey: true }),
            policy.gcra(60, { burst: 5 }),
            policy.sliding(30, 1_000, { perKey: true }),
            policy.period(50, 1_000, { align: true }),
            policy.gate(3),
            policy.shedder({ cpu: 500 }),
            policy.breaker(),
          ],
          invariants: true,
        });
        expect(r.summary.calls).toBeGreaterThan(0);
      }),
      { numRuns: 15 },
    );
  });
});

// Found by these checks before issue #11's fix: under sustained overload on a Date.now()-scale
// clock, Gcra's absolute TAT gathered rounding with each admission and it refused with a little
// over a token left. The invariant check throws on the first call outside the envelope.
it("gcra keeps its exact envelope under overload on a Date.now()-scale clock", () => {
  const r = simulate({
    start: STARTS[1],
    duration: 5_000,
    traffic: traffic.poisson({ rate: 200 }),
    policies: [policy.gcra(60, { burst: 5 })],
    invariants: true,
  });
  // 5 at rest, then 60 a second: the flow stays at the envelope, not a token under it.
  expect(r.summary.admitted).toBeGreaterThanOrEqual(5 + 60 * 5 - 1);
  expect(r.summary.admitted).toBeLessThanOrEqual(5 + 60 * 5);
});

describe("a failing seed shrinks to a small scenario", () => {
  // The bug shows only after five refusals in a run, so a short, light run hides it.
  const probe = defineScenario<{ seed: number; rate: number; seconds: number }>({
    name: "probe",
    title: "a broken bucket under load",
    summary: "Calls at a rate through a bucket of 10 a second that leaks under sustained overload.",
    knobs: [
      seedKnob,
      {
        kind: "integer",
        name: "rate",
        label: "rate",
        doc: "calls a second",
        default: 100,
        min: 1,
        max: 1_000,
        step: 1,
      },
      { kind: "integer", name: "seconds", label: "length", doc: "seconds", default: 60, min: 1, max: 120, step: 1 },
    ],
    run: (p) => {
      const run = simulate({
        seed: p.seed,
        duration: p.seconds * 1_000,
        traffic: traffic.poisson({ rate: p.rate }),
        policies: [brokenBucket(10, "leaks", 5)],
        invariants: true,
      });
      return { runs: [run], figures: {}, report: "" };
    },
  });

  it("fast-check finds the breach and shrinks the knobs to their small end", () => {
    const result = fc.check(
      fc.property(knobArbitrary(fc, probe.knobs) as fc.Arbitrary<Record<string, number>>, (params) => {
        probe.run(params);
      }),
      { seed: 42, numRuns: 200 },
    );
    expect(result.failed).toBe(true);
    const [params] = result.counterexample as [{ seed: number; rate: number; seconds: number }];
    // Shrunk from runs of up to 120 s at up to 1 000 calls a second to a few seconds at a rate
    // just past what the bucket (10, plus 10 a second) and its five forgiven refusals absorb.
    expect(params.seconds).toBeLessThanOrEqual(5);
    expect(params.rate).toBeLessThan(40);
    expect(params.rate * params.seconds).toBeLessThan(100);
    expect(params.rate * params.seconds).toBeGreaterThan(15);
    expect(() => probe.run(params)).toThrow(InvariantError);
  });
});
