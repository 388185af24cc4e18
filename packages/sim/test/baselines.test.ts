import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { failures, latency, policy, simulate, traffic } from "@tideward/sim";
import { STARTS } from "./helpers";

describe.each(STARTS)("baselines (start %s)", (start) => {
  it("classic breaker: opens after threshold failures in a row, refuses for openFor, then one probe", () => {
    const r = simulate({
      start,
      duration: 5_000,
      step: 100,
      traffic: traffic.constant({ rate: 10 }),
      backend: { latency: latency.fixed(5), failures: failures.outage({ from: 1_000, to: 3_000 }) },
      policies: [policy.classicBreaker({ threshold: 3, openFor: 500 })],
    });
    const when = (xs: readonly number[]) => xs.flatMap((n, i) => (n > 0 ? [r.series.t[i]] : []));
    // Calls at 1 000, 1 100 and 1 200 fail; it opens at 1 205 until 1 705; the probe at 1 800
    // fails (open until 2 305), so does the one at 2 400; the one at 3 000 succeeds and closes it.
    expect(when(r.series.failed)).toEqual([1_000, 1_100, 1_200, 1_800, 2_400]);
    expect(when(r.series.refused)).toEqual([
      1_300, 1_400, 1_500, 1_600, 1_700, 1_900, 2_000, 2_100, 2_200, 2_300, 2_500, 2_600, 2_700, 2_800, 2_900,
    ]);
    expect(r.summary.refused).toBe(15);
    expect(r.policies[0].stats).toMatchObject({ opened: 1, open: 0 });
    expect(r.policies[0].stats.openTime).toBeCloseTo(1_800, 6);
  });

  it("classic breaker: a success resets the count of failures in a row", () => {
    const r = simulate({
      start,
      duration: 60_000,
      traffic: traffic.constant({ rate: 20 }),
      backend: { latency: latency.fixed(5), failures: 0.3 },
      policies: [policy.classicBreaker({ threshold: 10 })],
    });
    // Ten failures in a row at 30 % come about once in 170 000 calls: 1 200 calls rarely open it.
    expect(r.policies[0].stats.opened).toBe(0);
  });

  it("sampling breaker: opens on the share of failures in its window, not on a run of them", () => {
    const run = (rate: number) =>
      simulate({
        start,
        duration: 20_000,
        traffic: traffic.constant({ rate: 50 }),
        backend: { latency: latency.fixed(5), failures: failures.brownout({ from: 5_000, to: 15_000, rate }) },
        policies: [policy.samplingBreaker({ threshold: 0.5, duration: 2_000, minimumRps: 5, openFor: 1_000 })],
      });
    const heavy = run(0.7);
    const light = run(0.3);
    expect(heavy.policies[0].stats.opened).toBeGreaterThan(0);
    expect(heavy.summary.refused).toBeGreaterThan(0);
    // Refusals only while the brown-out lasts (and one open time after).
    const t = heavy.series.t;
    heavy.series.refused.forEach((n, i) => {
      if (t[i] < 5_000 || t[i] >= 16_000) expect(n).toBe(0);
    });
    expect(light.policies[0].stats.opened).toBe(0);
    expect(light.summary.refused).toBe(0);
  });

  it("sampling breaker: counts its window as cockatiel does, opens past the share strictly, and needs its minimum rate", () => {
    const run = (threshold: number, minimumRps?: number) =>
      simulate({
        start,
        duration: 3_000,
        step: 100,
        traffic: traffic.constant({ rate: 10 }),
        backend: { latency: latency.fixed(5), failures: failures.outage({ from: 1_000, to: 1_500 }) },
        policies: [
          policy.samplingBreaker({
            threshold,
            duration: 1_050,
            openFor: 500,
            ...(minimumRps === undefined ? {} : { minimumRps }),
          }),
        ],
      });
    // Five buckets of 210 ms, each started by the first outcome after the last one's time was up:
    // outcomes at 5, 305, 605, 905 and 1 205 start them, three in each, so when the fifth failure
    // (the call at 1 400) ends, the window holds 15 outcomes, 5 of them failures: a third.
    const opened = run(0.33, 0);
    expect(opened.policies[0].stats.opened).toBe(1);
    const t = opened.series.t;
    expect(opened.series.refused.findIndex((n) => n > 0)).toBe(t.indexOf(1_500));
    // 5 failures of 15 are not more than 0.34 of them.
    expect(run(0.34, 0).policies[0].stats.opened).toBe(0);
    // By default it needs 5 / threshold calls a second: 15.2, so 15 calls in 1 050 ms are too few.
    expect(run(0.33).policies[0].stats.opened).toBe(0);
  });

  it("opossum breaker: opens past half the fired calls failing in its rolling window, refusals counted as fired", () => {
    const r = simulate({
      start,
      duration: 5_000,
      step: 100,
      traffic: traffic.constant({ rate: 10 }),
      backend: { latency: latency.fixed(5), failures: failures.outage({ from: 1_000, to: 3_000 }) },
      // Buckets of 103 ms, so no call lands on a bucket's edge.
      policies: [policy.opossumBreaker({ rollingCountTimeout: 1_030, resetTimeout: 500 })],
    });
    const when = (xs: readonly number[]) => xs.flatMap((n, i) => (n > 0 ? [r.series.t[i]] : []));
    // Ten calls in the window: the fifth failure in a row is 50 %, not past it; the sixth opens
    // it at 1 505 (a consecutive breaker of threshold 3 would have opened at 1 205). Half-open
    // at 2 005, the call at 2 100 fails and opens it again, as does the one at 2 700; the one at
    // 3 300 succeeds and closes it, the window still holding a failure in ten fired calls.
    expect(when(r.series.failed)).toEqual([1_000, 1_100, 1_200, 1_300, 1_400, 1_500, 2_100, 2_700]);
    expect(when(r.series.refused)).toEqual([
      1_600, 1_700, 1_800, 1_900, 2_000, 2_200, 2_300, 2_400, 2_500, 2_600, 2_800, 2_900, 3_000, 3_100, 3_200,
    ]);
    expect(r.policies[0].stats).toMatchObject({ opened: 1, open: 0 });
    expect(r.policies[0].stats.openTime).toBeCloseTo(1_800, 6);
  });

  it("opossum breaker: a share of failures under its percentage never opens it, however long the run of them", () => {
    const run = (rate: number, volumeThreshold = 0) =>
      simulate({
        start,
        duration: 20_000,
        traffic: traffic.constant({ rate: 50 }),
        backend: { latency: latency.fixed(5), failures: failures.brownout({ from: 5_000, to: 15_000, rate }) },
        policies: [policy.opossumBreaker({ resetTimeout: 1_000, volumeThreshold })],
      });
    expect(run(0.4).summary.refused).toBe(0);
    expect(run(0.8).summary.refused).toBeGreaterThan(0);
    // Its window never holds 5 000 calls, so with that volume threshold nothing opens it.
    expect(run(0.8, 5_000).summary.refused).toBe(0);
  });

  it("every baseline, once open on a dead backend, lets through at most one call per open time", () => {
    const makers = [
      (openFor: number) => policy.classicBreaker({ openFor }),
      // Its default minimumRps (25 a second at a 0.2 threshold) keeps it shut at rates under that
      // by design; 5 a second lets the property's slowest traffic (20 a second) open it too.
      (openFor: number) => policy.samplingBreaker({ openFor, duration: 2_000, minimumRps: 5 }),
      (openFor: number) => policy.opossumBreaker({ resetTimeout: openFor }),
    ];
    fc.assert(
      fc.property(
        fc.integer({ min: 20, max: 300 }),
        fc.integer({ min: 100, max: 3_000 }),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 1, max: 1_000 }),
        (rate, openFor, which, seed) => {
          const r = simulate({
            seed,
            start,
            duration: 10_000,
            step: 100,
            traffic: traffic.poisson({ rate }),
            backend: { latency: latency.exponential(5), failures: 1 },
            policies: [makers[which](openFor)],
          });
          const s = r.series;
          const first = s.refused.findIndex((n) => n > 0);
          expect(first).toBeGreaterThanOrEqual(0);
          // From the first refusal on, the backend sees the probes alone: one an open time at most
          // (plus calls already sent when it opened, answered within a few latencies).
          const after = s.backendLoad.slice(first + 1).reduce((a, b) => a + b, 0);
          const span = r.duration - s.t[first + 1];
          expect(after).toBeLessThanOrEqual(Math.ceil(span / openFor) + 1);
          expect(r.policies[0].stats.opened).toBe(1);
        },
      ),
      { numRuns: 15 },
    );
  });

  it("input checks name the field", () => {
    expect(() => policy.classicBreaker({ threshold: 0 })).toThrow(/threshold must be 1 or more/);
    expect(() => policy.classicBreaker({ openfor: 1 } as never)).toThrow(/did you mean "openFor"/);
    expect(() => policy.samplingBreaker({ threshold: 1 })).toThrow(/between 0 and 1/);
    expect(() => policy.opossumBreaker({ errorThresholdPercentage: 0 })).toThrow(
      /opossumBreaker errorThresholdPercentage must be in \(0, 100\], got 0/,
    );
    expect(() => policy.opossumBreaker({ rollingCountBuckets: 1e9 })).toThrow(/rollingCountBuckets must be at most/);
    expect(() => policy.opossumBreaker({ resetTimeOut: 1 } as never)).toThrow(/did you mean "resetTimeout"/);
  });
});

describe.each(STARTS)("tideward adapters (start %s)", (start) => {
  it("breaker: refuses most calls to a dead backend and reports its standing ratio", () => {
    const r = simulate({
      start,
      duration: 30_000,
      traffic: traffic.poisson({ rate: 100 }),
      backend: { failures: 1 },
      policies: [policy.breaker()],
    });
    expect(r.summary.refusalRate as number).toBeGreaterThan(0.8);
    expect(r.policies[0].stats.ratio).toBeGreaterThan(0.8);
    expect(r.policies[0].side).toBe("client");
  });

  it("shedder: sheds only when the backend is hot and full", () => {
    const hot = { latency: latency.exponential(20), workers: 4 };
    // 100 calls a second on 200 a second of capacity: cool, nothing shed.
    const cool = simulate({
      start,
      duration: 30_000,
      traffic: traffic.poisson({ rate: 100 }),
      backend: hot,
      policies: [policy.shedder()],
    });
    expect(cool.summary.refused).toBe(0);
    // 400 a second: the CPU climbs to 1 000 (its reading, smoothed as LoadSampler's, is hot after
    // about 11 s) and the queue grows without bound unless it sheds.
    const over = simulate({
      start,
      duration: 60_000,
      traffic: traffic.poisson({ rate: 400 }),
      backend: hot,
      policies: [policy.shedder()],
    });
    const none = simulate({ start, duration: 60_000, traffic: traffic.poisson({ rate: 400 }), backend: hot });
    expect(over.summary.refusedBy.shedder).toBeGreaterThan(0);
    expect(over.series.refused.slice(0, 10).every((n) => n === 0)).toBe(true);
    // Once the backlog of its first seconds is served, admitted calls stay fast; unshed, they wait ever longer.
    const late = (r: typeof over) => r.series.p99.slice(40) as number[];
    expect(Math.max(...late(over))).toBeLessThan(Math.min(...late(none)) / 10);
  });

  it("gate: at most limit calls inside the server at once, all given back when traffic stops", () => {
    const r = simulate({
      start,
      duration: 10_000,
      traffic: traffic.poisson({ rate: 300 }),
      backend: { latency: latency.exponential(30) },
      policies: [policy.gate(5)],
      invariants: true,
    });
    expect(r.summary.refusedBy.gate).toBeGreaterThan(0);
    expect(Math.max(...r.series.backendBusy)).toBeLessThanOrEqual(5);
  });
});
