import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { keys, latency, simulate, traffic } from "@tideward/sim";
import { STARTS, collect, counts, moments } from "./helpers";

describe.each(STARTS)("traffic models (start %s)", (start) => {
  it("constant: exactly rate a second, evenly spaced without drift", () => {
    const { t } = collect(traffic.constant({ rate: 250 }), 3_600_000, start);
    expect(t).toHaveLength(900_000);
    expect(t[0]).toBe(start);
    // The n-th call is computed from n, so the last is as exact as the first.
    expect(t[899_999] - start).toBeCloseTo(899_999 * 4, 6);
    const per = counts(t, start, 1_000, 3_600);
    expect(Math.min(...per)).toBeGreaterThanOrEqual(249);
    expect(Math.max(...per)).toBeLessThanOrEqual(251);
  });

  it("poisson: per-second counts have mean and variance equal to the rate (within 5 standard errors)", () => {
    const rate = 100;
    const seconds = 2_000;
    const { t } = collect(traffic.poisson({ rate }), seconds * 1_000, start, 3);
    const { mean, variance } = moments(counts(t, start, 1_000, seconds));
    // Standard error of the mean: sqrt(rate / n) = 0.22; of the variance: sqrt(2 rate² / n) = 3.2.
    expect(Math.abs(mean - rate)).toBeLessThan(5 * Math.sqrt(rate / seconds));
    expect(Math.abs(variance - rate)).toBeLessThan(5 * Math.sqrt((2 * rate * rate) / seconds));
    // Gaps are exponential: their coefficient of variation is 1 (a constant stream's is 0).
    const gaps = t.slice(1).map((x, i) => x - t[i]);
    const g = moments(gaps);
    expect(Math.sqrt(g.variance) / g.mean).toBeGreaterThan(0.97);
    expect(Math.sqrt(g.variance) / g.mean).toBeLessThan(1.03);
  });

  it("bursts: size calls, spacing apart, every period, the first at its offset", () => {
    const { t } = collect(traffic.bursts({ size: 40, spacing: 1.5, every: 2_000, at: 970 }), 9_000, start);
    // Bursts at 970, 2 970, 4 970 and 6 970 ms, and the first twenty calls of the one at 8 970 ms.
    expect(t).toHaveLength(4 * 40 + 20);
    t.forEach((x, j) => expect(x - start).toBeCloseTo(970 + Math.floor(j / 40) * 2_000 + (j % 40) * 1.5, 3));
    // Twenty land before each whole second and twenty on or after it.
    const per = counts(t, start, 1_000, 9);
    expect(per).toEqual([20, 20, 20, 20, 20, 20, 20, 20, 20]);
  });

  it("bursts: a count of bursts stops the stream", () => {
    expect(collect(traffic.bursts({ size: 3, spacing: 0, every: 100, count: 2 }), 10_000, start).t).toHaveLength(6);
  });

  it("bursts that overlap come in time order, every call of every burst (none dropped)", () => {
    const { t } = collect(traffic.bursts({ size: 100, spacing: 100, every: 2_000, at: 970, count: 2 }), 4_000, start);
    // The first burst's calls from 970 to 3 970 ms, the second's from 2 970 ms: 31 + 11.
    expect(t).toHaveLength(42);
    const expected = [
      ...Array.from({ length: 31 }, (_, i) => start + 970 + i * 100),
      ...Array.from({ length: 11 }, (_, i) => start + 970 + 2_000 + i * 100),
    ].sort((a, b) => a - b);
    expect(t).toEqual(expected);
    expect(
      simulate({ start, duration: 5_000, traffic: traffic.bursts({ size: 3, spacing: 10, every: 15 }) }).summary.calls,
    ).toBe(
      // Bursts begin every 15 ms from 0 to 4 995 ms; the calls at 5 000, 5 005 and 5 015 ms are past the run.
      334 * 3 - 3,
    );
  });

  it("bursts: whatever their size, spacing, period and count, exactly their calls before the end, in time order", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.oneof(fc.constant(0), fc.double({ min: 0, max: 200, noNaN: true })),
        fc.double({ min: 5, max: 500, noNaN: true }),
        fc.double({ min: 0, max: 300, noNaN: true }),
        fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
        (size, spacing, every, at, count) => {
          const duration = 2_000;
          const { t } = collect(traffic.bursts({ size, spacing, every, at, count }), duration, start);
          // Every call's time as the model computes it, in order.
          const origin = start + at;
          const want: number[] = [];
          for (let k = 0; k < (count ?? Infinity) && origin + k * every < start + duration; k++)
            for (let i = 0; i < size; i++) {
              const x = origin + k * every + i * spacing;
              if (x < start + duration) want.push(x);
            }
          want.sort((a, b) => a - b);
          expect(t).toEqual(want);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("bursts refuses overlap it could not keep in order, naming size, spacing and every", () => {
    expect(() => traffic.bursts({ size: 1e9, spacing: 1_000, every: 0.001 })).toThrow(
      /^traffic\.bursts size 1 000 000 000 × spacing 1000 ms lasts 999999999000 ms, with a burst every 0\.001 ms: more than 4 194 304 bursts would be under way at once; lower size or spacing, or raise every$/,
    );
    // The same bursts, few enough to be under way at once, are taken.
    expect(() => traffic.bursts({ size: 1e9, spacing: 1_000, every: 0.001, count: 4_194_304 })).not.toThrow();
  });

  it("ramp: the rate rises in a straight line (per-10 s counts within 5 standard errors of the line)", () => {
    const { t } = collect(traffic.ramp({ from: 100, to: 1_100 }), 100_000, start, 4);
    const per = counts(t, start, 10_000, 10);
    per.forEach((n, i) => {
      const expected = (100 + 1_000 * ((i + 0.5) / 10)) * 10;
      expect(Math.abs(n - expected)).toBeLessThan(5 * Math.sqrt(expected));
    });
  });

  it("ramp, even: gaps follow the rate of the moment", () => {
    const { t } = collect(traffic.ramp({ from: 10, to: 100, over: 10_000, process: "even" }), 20_000, start);
    expect(t[1] - t[0]).toBeCloseTo(100, 6);
    expect(t[t.length - 1] - t[t.length - 2]).toBeCloseTo(10, 6);
    const per = counts(t, start, 1_000, 20);
    expect(per[15]).toBe(100);
  });

  it("shaped, even: no call lands where the rate is 0, however long the rate stays there", () => {
    // 100 a second for the first 100 ms, then nothing until 700 ms, then 50 a second.
    const t = traffic.shaped({ peak: 100, process: "even", rate: (o) => (o < 100 ? 100 : o < 700 ? 0 : 50) });
    const times = collect(t, 1_000, start).t.map((x) => x - start);
    expect(times.filter((x) => x < 100)).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
    expect(times.filter((x) => x >= 100 && x < 700)).toEqual([]);
    expect(times.filter((x) => x >= 700)).toEqual([
      700, 720, 740, 760, 780, 800, 820, 840, 860, 880, 900, 920, 940, 960, 980,
    ]);
  });

  it("daily: peak and trough where the shape puts them", () => {
    const day = 86_400_000;
    const { t } = collect(traffic.daily({ mean: 20, amplitude: 0.5 }), day, start, 5);
    const hours = counts(t, start, day / 24, 24);
    // cos peaks at half a day: hour 12 is near 1.5 × mean, hour 0 near 0.5 × mean.
    const expected = (h: number) => 20 * 3_600 * (1 + 0.5 * Math.cos((2 * Math.PI * (h + 0.5 - 12)) / 24));
    for (const h of [0, 6, 12, 18]) expect(Math.abs(hours[h] - expected(h)) / expected(h)).toBeLessThan(0.03);
    expect(hours.indexOf(Math.max(...hours))).toBeGreaterThanOrEqual(11);
    expect(hours.indexOf(Math.max(...hours))).toBeLessThanOrEqual(12);
  });

  it("zipf keys: key i is picked in proportion to 1 / (i + 1)^s", () => {
    const n = 1_000;
    const { key } = collect(
      traffic.poisson({ rate: 1_000, keys: keys.zipf({ count: n, exponent: 1.1 }) }),
      500_000,
      start,
      6,
    );
    const freq = new Array<number>(n).fill(0);
    for (const k of key) freq[k]++;
    let h = 0;
    for (let i = 1; i <= n; i++) h += i ** -1.1;
    for (const i of [0, 1, 9, 99]) {
      const p = (i + 1) ** -1.1 / h;
      const expected = key.length * p;
      expect(Math.abs(freq[i] - expected)).toBeLessThan(5 * Math.sqrt(expected));
    }
    expect(Math.min(...freq)).toBeGreaterThan(0);
  });

  it("merge: the union of the parts, in time order, keys numbered after one another", () => {
    const a = traffic.constant({ rate: 10 });
    const b = traffic.constant({ rate: 5, keys: keys.uniform({ count: 3, prefix: "b" }) });
    const m = traffic.merge(a, b);
    expect(m.keys.count).toBe(4);
    expect([m.keys.name(0), m.keys.name(3)]).toEqual(["key-0", "b2"]);
    const { t, key } = collect(m, 10_000, start);
    expect(t).toHaveLength(150);
    for (let i = 1; i < t.length; i++) expect(t[i]).toBeGreaterThanOrEqual(t[i - 1]);
    expect(key.filter((k) => k === 0)).toHaveLength(100);
  });

  it("herd: every client calls once, within the spread, each its own key", () => {
    const { t, key } = collect(traffic.herd({ clients: 500, at: 1_000, spread: 100 }), 10_000, start);
    expect(t).toHaveLength(500);
    expect(new Set(key).size).toBe(500);
    expect(Math.min(...t) - start).toBeGreaterThanOrEqual(1_000);
    expect(Math.max(...t) - start).toBeLessThan(1_100);
  });

  it("replay: a trace plays back in order, moved to the run's start, keys in order of first sight", () => {
    const trace = [
      { t: 1_700_000_000_500, key: "bob" },
      { t: 1_700_000_000_000, key: "alice" },
      { t: 1_700_000_000_250, key: "alice", cost: 3 },
    ];
    const r = traffic.replay(trace);
    const got = collect(r, 10_000, start);
    expect(got.t.map((x) => x - start)).toEqual([0, 250, 500]);
    expect(got.key).toEqual([0, 0, 1]);
    expect(got.cost).toEqual([1, 3, 1]);
    expect([r.keys.name(0), r.keys.name(1)]).toEqual(["alice", "bob"]);
    const ndjson = trace.map((x) => JSON.stringify(x)).join("\n") + "\n\n";
    expect(collect(traffic.replay(ndjson), 10_000, start)).toEqual(got);
  });
});

describe("traffic input checks", () => {
  it("names the field and the value", () => {
    expect(() => traffic.poisson({ rate: -1 })).toThrow(/rate.*above 0, got -1/);
    expect(() => traffic.poisson({ rate: 1, keyz: 1 } as never)).toThrow(/did you mean "keys"/);
    expect(() => traffic.bursts({ size: 0, spacing: 1, every: 10 })).toThrow(/size/);
    expect(() => traffic.replay('{"t": 1}\n{"key": "a"}')).toThrow(/line 2 t must be a finite number/);
    expect(() => traffic.replay("not json")).toThrow(/line 1 is not JSON/);
    expect(() => traffic.merge()).toThrow(RangeError);
  });

  // Three refusals after 2^25 draws each, and two runs of 60 000 and 1 000 calls: about 10 s alone,
  // more than a minute on two cores shared with the other suites.
  it(
    "shaped traffic that would thin or look without end is refused, naming the peak or the rate",
    { timeout: 240_000 },
    () => {
      const run = (t: ReturnType<typeof traffic.shaped>, duration: number) => () =>
        simulate({ duration, step: duration / 10, traffic: t });
      // A peak a billion times the rate: ten seconds would be 10^10 candidates.
      expect(run(traffic.shaped({ rate: () => 1, peak: 1e9 }), 10_000)).toThrow(
        /^traffic\.shaped thinned away 33 554 433 candidates drawn at its peak of 1000000000 calls per second by .+ ms after the start, keeping 0 calls: the peak is far above the rate, or the rate is 0 for long; give a peak near the rate's highest$/,
      );
      expect(run(traffic.ramp({ from: 0, to: 1e9, over: 1e12 }), 10_000)).toThrow(
        /^traffic\.ramp thinned away .+: the ramp stays far below its peak \(the larger of from and to\)/,
      );
      // A rate of 0 for 10^11 ms, looked at every millisecond.
      expect(run(traffic.shaped({ rate: () => 0, peak: 1, process: "even" }), 1e11)).toThrow(
        /^traffic\.shaped looked 33 554 433 times, a millisecond apart, at a rate of 0 by 33554434 ms after the start, keeping 0 calls: the rate is 0 for far too long/,
      );
      // The work allowed grows with the calls kept: a peak ten times the rate, and a zero stretch of an hour, run.
      const tenth = simulate({ duration: 600_000, traffic: traffic.shaped({ rate: () => 100, peak: 1_000 }) });
      expect(tenth.summary.calls).toBeGreaterThan(59_000);
      const night = traffic.shaped({ peak: 10, process: "even", rate: (o) => (o < 3_600_000 ? 0 : 10) });
      expect(simulate({ duration: 3_700_000, step: 100_000, traffic: night }).summary.calls).toBe(1_000);
    },
  );

  it("a traffic that does not advance is stopped after as many arrivals at one instant as a run holds", () => {
    const stuck = {
      label: "stuck",
      keys: { count: 1, name: () => "k" },
      open: (c: { start: number }) => ({ key: 0, cost: 1, next: () => c.start }),
    };
    expect(() => simulate({ duration: 1_000, backend: { latency: 0 }, traffic: stuck })).toThrow(
      /the traffic gave more than 4 194 304 arrivals at one instant \(0 ms\): it does not advance/,
    );
    // The largest herd a scenario offers, all at once, is well within it.
    const herd = simulate({ duration: 1_000, backend: { latency: 0 }, traffic: traffic.herd({ clients: 100_000 }) });
    expect(herd.summary.calls).toBe(100_000);
  });

  it("a replay with absolute times must not start before the run", () => {
    const r = traffic.replay([{ t: 5 }], { absolute: true });
    expect(() => simulate({ start: 10, duration: 100, traffic: r })).toThrow(/precedes the run's start/);
    expect(
      simulate({ start: 0, duration: 100, traffic: r, backend: { latency: latency.fixed(1) } }).summary.completed,
    ).toBe(1);
  });
});
