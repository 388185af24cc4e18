import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Backoff, Jitter } from "@tideward/backoff";
import { failures, latency, policy, simulate, traffic } from "@tideward/sim";
import type { Traffic } from "@tideward/sim";
import { STARTS } from "./helpers";

/** One call at `at` ms. */
const once = (at = 0): Traffic => traffic.replay([{ t: at }]);

describe.each(STARTS)("client (start %s)", (start) => {
  it("retries a failed call after each backoff delay, attempts counting the first", () => {
    const r = simulate({
      start,
      duration: 1_000,
      step: 10,
      drain: 10_000,
      traffic: once(),
      backend: { latency: latency.fixed(5), failures: 1 },
      client: { retry: { backoff: new Backoff({ base: 100, factor: 2, attempts: 4, jitter: Jitter.rigid }) } },
    });
    expect(r.summary).toMatchObject({
      calls: 1,
      attempts: 4,
      retries: 3,
      failed: 4,
      gaveUp: 1,
      completed: 0,
      amplification: 4,
    });
    // First at 0, failing at 5; retries at 105 (then fails at 110), 310, 715.
    const at = r.series.attempts.flatMap((n, i) => (n > 0 ? [r.series.t[i]] : []));
    expect(at).toEqual([0, 100, 310, 710]);
  });

  it("stops retrying once a call succeeds", () => {
    const r = simulate({
      start,
      duration: 1_000,
      traffic: once(),
      backend: { latency: latency.fixed(5), failures: failures.outage({ from: 0, to: 150 }) },
      client: { retry: { backoff: { base: 100, attempts: 5, jitter: Jitter.rigid } } },
    });
    expect(r.summary).toMatchObject({ attempts: 3, completed: 1, gaveUp: 0, succeeded: 1, failed: 2 });
  });

  it("a retry budget caps the extra load on a failing backend", () => {
    const base = {
      start,
      duration: 60_000,
      traffic: traffic.poisson({ rate: 100 }),
      backend: { latency: latency.fixed(5), failures: 1 },
    };
    const unbudgeted = simulate({ ...base, client: { retry: { backoff: { attempts: 4, base: 10, cap: 50 } } } });
    const budgeted = simulate({
      ...base,
      client: { retry: { backoff: { attempts: 4, base: 10, cap: 50 }, budget: { ratio: 0.2, minPerSecond: 0 } } },
    });
    expect(unbudgeted.summary.amplification).toBe(4);
    // A fifth of first attempts may be retried: at most 1.2 attempts per call (and the window's warm-up).
    expect(budgeted.summary.amplification as number).toBeLessThanOrEqual(1.2 + 1e-9);
    expect(budgeted.summary.amplification as number).toBeGreaterThan(1.15);
  });

  it("times an attempt out at the client while the backend keeps working on it", () => {
    const r = simulate({
      start,
      duration: 10_000,
      traffic: traffic.constant({ rate: 10 }),
      backend: { latency: latency.fixed(300), workers: 1 },
      client: { timeout: 100 },
      policies: [policy.breaker()],
    });
    // The one worker serves three calls a second (300 ms each) while ten arrive: the queue grows,
    // every attempt times out at 100 ms, and the backend is busy all the while.
    expect(r.summary.timedOut).toBe(r.summary.admitted);
    expect(r.summary.succeeded).toBe(0);
    expect(r.series.backendBusy[0]).toBeGreaterThan(0.99);
    expect(r.series.backendQueue[0]).toBeGreaterThan(2);
    // The breaker heard each timeout as a failure, so it refuses.
    expect(r.summary.refusedBy.breaker).toBeGreaterThan(0);
  });

  it("hedges a slow attempt with a second copy; the first success wins", () => {
    const slowTail = latency.bimodal({ fast: latency.fixed(10), slow: latency.fixed(500), share: 0.1 });
    const base = { start, duration: 60_000, traffic: traffic.poisson({ rate: 50 }), backend: { latency: slowTail } };
    const plain = simulate(base);
    const hedged = simulate({ ...base, client: { hedge: { after: 50 } } });
    // About a tenth of calls are slow; each sends one hedge, which is itself slow a tenth of the time.
    expect(hedged.summary.hedges / hedged.summary.calls).toBeGreaterThan(0.08);
    expect(hedged.summary.hedges / hedged.summary.calls).toBeLessThan(0.12);
    expect(hedged.summary.completed).toBe(hedged.summary.calls);
    expect(plain.summary.latency.p95 as number).toBeGreaterThan(400);
    // The winning copies answer in 10 ms after the 50 ms wait, and the slow ones are never seen
    // by the call (though they still count as attempts that succeeded).
    const callsFast = hedged.summary.calls * 0.99;
    expect(hedged.summary.succeeded).toBeGreaterThan(callsFast);
  });

  it("a call its first copy answered has ended, though its hedge is still out when the drain cuts the run short", () => {
    // Ten calls at 995 ms, 4 ms each, hedged after 2: the first copies answer at 999, the hedges
    // would at 1 001, past the run's end.
    const r = simulate({
      start,
      duration: 1_000,
      drain: 0,
      traffic: traffic.herd({ clients: 10, at: 995 }),
      backend: { latency: latency.fixed(4) },
      client: { hedge: { after: 2 } },
    });
    expect(r.summary).toMatchObject({ calls: 10, completed: 10, hedges: 10, unfinished: 0, completionTime: 999 });
  });

  it("every call ends in a success, is given up or is unfinished, whatever the drain and the hedge", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        (drain, after, max, failing) => {
          const r = simulate({
            start,
            duration: 500,
            drain,
            traffic: traffic.poisson({ rate: 200 }),
            backend: { latency: latency.exponential(20), failures: failing ? 0.3 : 0 },
            client: { hedge: { after, max }, retry: { backoff: { attempts: 2, base: 5 } } },
          });
          const s = r.summary;
          expect(s.completed + s.gaveUp + s.unfinished).toBe(s.calls);
          expect(s.completionTime === null).toBe(s.unfinished > 0 || s.completed + s.gaveUp === 0);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("retries refusals only when asked to", () => {
    const base = {
      start,
      duration: 1_000,
      traffic: traffic.constant({ rate: 10 }),
      policies: [policy.bucket(1, { burst: 1 })],
    };
    const r = simulate({ ...base, client: { retry: { backoff: { attempts: 3, base: 1_000, jitter: Jitter.rigid } } } });
    expect(r.summary.retries).toBe(0);
    const again = simulate({
      ...base,
      client: { retry: { backoff: { attempts: 3, base: 1_000, jitter: Jitter.rigid }, refusals: true } },
    });
    expect(again.summary.retries).toBeGreaterThan(0);
  });
});

describe.each(STARTS)("retries that would not move the clock (start %s)", (start) => {
  const endless = { attempts: Infinity, backoff: { base: 0 } } as const;
  const base = { start, duration: 1_000, traffic: traffic.constant({ rate: 10 }) };
  const stuck =
    /^simulate client retry: a call retried 10 000 times in a row at one instant \(\d+ ms after the start\), .*client retry backoff wait \(0 ms\) too short to move the clock/;

  it.each([
    ["a failure that takes no time", { backend: { latency: 0, failures: 1 } }, endless],
    ["a refusal retried", { policies: [policy.bucket(1, { burst: 1 })] }, { ...endless, refusals: true }],
    ["a contention window of 0", { backend: { contention: { window: 0 }, failures: 1 } }, endless],
    [
      "a full queue",
      { traffic: traffic.herd({ clients: 2 }), backend: { latency: 5, workers: 1, queue: 0 } },
      { attempts: 1e9, backoff: { base: 0 } },
    ],
  ] as const)("are refused, naming the backoff, after %s", (_, options, retry) => {
    expect(() => simulate({ ...base, ...options, client: { deadline: 100, retry } })).toThrow(stuck);
  });

  it("but many retries at one instant, or waits of 0 after answers that take time, still run", () => {
    const r = simulate({
      ...base,
      backend: { latency: 0, failures: 1 },
      client: { deadline: 100, retry: { attempts: 9_999, backoff: { base: 0 } } },
    });
    expect(r.summary).toMatchObject({ calls: 10, attempts: 99_990, gaveUp: 10, unfinished: 0 });
    const slow = simulate({
      ...base,
      backend: { latency: 1, failures: 1 },
      client: { deadline: 100, retry: { ...endless } },
    });
    // Each call retries every millisecond until its deadline.
    expect(slow.summary.attempts).toBeGreaterThanOrEqual(10 * 99);
    expect(slow.summary.attempts).toBeLessThanOrEqual(10 * 101);
    expect(slow.summary.gaveUp).toBe(10);
  });
});

it("a retry wait below what the clock resolves at Date.now() scale counts as none", () => {
  // A nanosecond moves a clock near 0 (and the deadline ends each call), not one near 1.7e12.
  const run = () =>
    simulate({
      start: STARTS[1],
      duration: 1_000,
      traffic: traffic.constant({ rate: 10 }),
      backend: { latency: 0, failures: 1 },
      client: {
        deadline: 100,
        retry: { attempts: Infinity, backoff: { base: 1e-9, cap: 1e-9, jitter: Jitter.rigid } },
      },
    });
  expect(run).toThrow(/at one instant \(0 ms after the start\), .* \(1e-9 ms\) too short to move the clock/);
});

describe("simulate input checks", () => {
  it("names the option and the value", () => {
    const t = traffic.constant({ rate: 1 });
    expect(() => simulate({ duration: 0, traffic: t })).toThrow(/duration \(ms\) must be above 0, got 0/);
    expect(() => simulate({ duration: 10, traffic: t, polices: [] } as never)).toThrow(/did you mean "policies"/);
    expect(() => simulate({ duration: 10, traffic: t, client: { timout: 5 } } as never)).toThrow(
      /did you mean "timeout"/,
    );
    expect(() => simulate({ duration: 10, traffic: t, backend: { workers: 0 } })).toThrow(/workers must be 1 or more/);
    expect(() => simulate({ duration: 10, traffic: t, policies: [{} as never] })).toThrow(
      /policies\[0\] must be a policy/,
    );
    expect(() => simulate({ duration: 10, traffic: {} as never })).toThrow(/traffic must be a traffic model/);
  });

  it("refuses a boolean option that is not true or false, naming it, rather than reading it as either", () => {
    const t = traffic.constant({ rate: 1 });
    expect(() => simulate({ duration: 10, traffic: t, perKey: "yes" as never })).toThrow(
      new TypeError('simulate perKey must be true or false, got "yes"'),
    );
    expect(() => simulate({ duration: 10, traffic: t, invariants: 1 as never })).toThrow(
      new TypeError("simulate invariants must be true or false, got 1"),
    );
    expect(() => simulate({ duration: 10, traffic: t, client: { retry: { refusals: "yes" as never } } })).toThrow(
      new TypeError('simulate client retry refusals must be true or false, got "yes"'),
    );
    expect(() => policy.bucket(1, { perKey: "no" as never })).toThrow(
      new TypeError('policy.bucket perKey must be true or false, got "no"'),
    );
    expect(() => policy.sliding(5, 1_000, { perKey: null as never })).toThrow(
      /^policy\.sliding perKey must be true or false, got null$/,
    );
    expect(() => policy.period(5, 1_000, { align: "on" as never })).toThrow(
      /^policy\.period align must be true or false/,
    );
    expect(() => traffic.replay([{ t: 0 }], { absolute: "no" as never })).toThrow(
      /^traffic\.replay absolute must be true or false, got "no"$/,
    );
    // true and false still mean what they say.
    const both = simulate({ duration: 10_000, traffic: t, perKey: true, invariants: false });
    expect(both.keys?.names).toEqual(["key-0"]);
    expect(policy.bucket(1, { perKey: false }).name).toBe("bucket");
  });
});
