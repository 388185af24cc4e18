// The capacity model under load: service times and failures that rise past capacity, a trigger
// that tips it into overload, and an overload that outlasts the trigger while retries keep the
// load above capacity — unless the backend drops work its callers gave up on, and a budget
// holds the retries down.
import { describe, expect, it } from "vitest";
import { Jitter } from "@tideward/backoff";
import { backends, latency, policy, simulate, traffic } from "@tideward/sim";
import type { RunResult, SimulationOptions } from "@tideward/sim";
import { STARTS, spy } from "./helpers";

/** Goodput over offered calls, second by second. */
const goodput = (r: RunResult): number[] => r.series.goodput.map((g, i) => g / Math.max(1, r.series.offered[i]));
const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
/** Seconds after `from` until goodput is back to 90 % (and stays there for five), or -1. */
function recovery(r: RunResult, from: number): number {
  const g = goodput(r);
  for (let s = from; s + 5 <= g.length; s++) if (g.slice(s, s + 5).every((x) => x >= 0.9)) return s - from;
  return -1;
}

describe.each(STARTS)("the capacity model under load (start %s)", (start) => {
  it("stretches each service by 1 + slowdown · max(0, p − 1), p the calls there over its workers", () => {
    const seen = spy("client");
    const r = simulate({
      start,
      duration: 1,
      traffic: traffic.bursts({ size: 5, spacing: 0, every: 1_000, count: 1 }),
      backend: { latency: latency.fixed(10), workers: 1, overload: { slowdown: 1 } },
      policies: [seen.spec],
    });
    expect(r.summary.completed).toBe(5);
    // Starting at p = 0, then (1 busy + 3 waiting) = 4, then 3, 2, 1: 10, 40, 30, 20, 10 ms.
    expect(seen.seen.map((s) => s.ended - start)).toEqual([10, 50, 80, 100, 110]);
  });

  it("stops the run, naming the options, when overload and dips stretch a service past any duration", () => {
    const run = () =>
      simulate({
        start,
        duration: 1,
        traffic: traffic.bursts({ size: 3, spacing: 0, every: 1_000, count: 1 }),
        backend: { latency: latency.fixed(10), workers: 1, overload: { slowdown: 1e308 } },
      });
    expect(run).toThrow(
      "simulate: the backend failed at 10 ms after the start (seed 1): backend overload and dips stretched a service of 10 ms by 1e+308 to Infinity: lower the slowdown or the dip's latency factor",
    );
  });

  it("fails a share of calls that grows with the excess load, and next to none below capacity", () => {
    const over = (rate: number) =>
      simulate({
        start,
        duration: 20_000,
        traffic: traffic.poisson({ rate }),
        backend: { latency: latency.exponential(20), workers: 4, queue: 40, overload: { failures: 0.05 } },
      }).summary;
    // Half of capacity: only the moments a fifth call waits for one of the four workers.
    const low = over(100);
    const near = over(180);
    expect(low.failed / low.attempts).toBeLessThan(0.005);
    expect(near.failed / near.attempts).toBeGreaterThan((3 * low.failed) / low.attempts);
    const high = over(300);
    // Past capacity (200 a second) the queue is full (p = 11) most of the time: about half fail.
    expect(high.failed / high.attempts).toBeGreaterThan(0.3);
    expect(high.goodput).toBeLessThan(high.succeeded + 1);
  });

  const trigger = { from: 20_000, to: 30_000, latency: 2 };
  const retrying = (abandoned: "serve" | "drop", budget: boolean, extra: Partial<SimulationOptions> = {}) =>
    simulate({
      start,
      duration: 120_000,
      traffic: traffic.poisson({ rate: 150 }),
      backend: backends.metastable({ trigger, abandoned }),
      client: {
        timeout: 1_000,
        retry: { backoff: { attempts: 4, base: 100, cap: 1_000, jitter: Jitter.full }, budget: budget ? {} : false },
      },
      ...extra,
    });

  it("without the trigger, 150 calls a second on 200 of capacity are all served in time", () => {
    const r = simulate({
      start,
      duration: 60_000,
      traffic: traffic.poisson({ rate: 150 }),
      backend: backends.metastable({ trigger: { from: 0, to: 0 } }),
      client: { timeout: 1_000, retry: { backoff: { attempts: 4 } } },
    });
    expect(r.summary.goodputRate).toBeGreaterThan(0.999);
    expect(r.summary.wasted).toBe(0);
  });

  it("with retries and no policy it stays overloaded after the trigger, serving or dropping abandoned work", () => {
    const served = retrying("serve", false);
    const dropped = retrying("drop", false);
    // Ninety seconds after a ten-second trigger: no goodput at all when the backend serves work
    // nobody waits for; a fifth when it drops it, the retries still holding it past capacity.
    expect(mean(goodput(served).slice(40))).toBeLessThan(0.01);
    expect(mean(goodput(dropped).slice(40))).toBeGreaterThan(0.1);
    expect(mean(goodput(dropped).slice(40))).toBeLessThan(0.3);
    expect(recovery(served, 30)).toBe(-1);
    expect(recovery(dropped, 30)).toBe(-1);
    // The load stays above capacity: attempts reach the backend at two to three times its 200 a second.
    expect(mean(served.series.backendLoad.slice(40))).toBeGreaterThan(400);
    // Serving abandoned work is the waste; dropping it costs nothing but does not end the storm.
    expect(served.summary.wasted).toBeGreaterThan((30 * dropped.summary.dropped) / 100);
    expect(dropped.summary.dropped).toBeGreaterThan(0);
    expect(served.summary.dropped).toBe(0);
  });

  it("with a retry budget, dropping abandoned work recovers at once; serving it, only after the backlog drains", () => {
    const dropped = retrying("drop", true);
    const served = retrying("serve", true);
    expect(recovery(dropped, 30)).toBeGreaterThanOrEqual(0);
    expect(recovery(dropped, 30)).toBeLessThanOrEqual(2);
    const slow = recovery(served, 30);
    expect(slow).toBeGreaterThan(10);
    expect(dropped.summary.goodputRate as number).toBeGreaterThan(served.summary.goodputRate as number);
  });

  it("the adaptive breaker brings it back without a budget", () => {
    const r = retrying("serve", false, { policies: [policy.breaker()] });
    const back = recovery(r, 30);
    expect(back).toBeGreaterThanOrEqual(0);
    expect(back).toBeLessThan(30);
  });

  it("is deterministic by seed, and another seed is another run", () => {
    const a = retrying("drop", false, { seed: 5, duration: 40_000 });
    const b = retrying("drop", false, { seed: 5, duration: 40_000 });
    const c = retrying("drop", false, { seed: 6, duration: 40_000 });
    expect(b.summary.hash).toBe(a.summary.hash);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(c.summary.hash).not.toBe(a.summary.hash);
  });

  it("a capacity dip takes workers away for its stretch and gives them back at its end", () => {
    const r = simulate({
      start,
      duration: 60_000,
      step: 1_000,
      traffic: traffic.constant({ rate: 100 }),
      backend: { latency: latency.fixed(30), workers: 4, dips: [{ from: 10_000, to: 20_000, workers: 1 }] },
    });
    const busy = r.series.backendBusy;
    // Three busy on average before (100 a second × 30 ms), one at most during, all four while the
    // dip's backlog (about 670 calls) drains at 33 a second, then three again.
    expect(mean(busy.slice(2, 10))).toBeCloseTo(3, 1);
    expect(Math.max(...busy.slice(11, 20))).toBeLessThanOrEqual(1);
    expect(mean(busy.slice(21, 35))).toBeCloseTo(4, 1);
    expect(mean(busy.slice(45))).toBeCloseTo(3, 1);
    expect(Math.max(...r.series.backendQueue.slice(10, 20))).toBeGreaterThan(600);
    expect(r.series.backendQueue[59]).toBe(0);
  });
});
