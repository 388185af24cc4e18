// The capacity model against queueing theory: Poisson arrivals and exponential service on c
// workers is M/M/c, whose mean time in the system has a closed form (Erlang C).
import { describe, expect, it } from "vitest";
import { latency, simulate, traffic } from "@tideward/sim";
import { STARTS } from "./helpers";

/** Mean time in an M/M/c system, ms: arrivals λ a second, service mean `service` ms, c workers. */
function mmc(lambda: number, service: number, c: number): number {
  const mu = 1_000 / service;
  const a = lambda / mu;
  const rho = a / c;
  let sum = 0;
  let term = 1;
  for (let k = 0; k < c; k++) {
    if (k > 0) term *= a / k;
    sum += term;
  }
  const last = (term * a) / c / (1 - rho);
  const waitProbability = last / (sum + last);
  return (waitProbability / (c * mu - lambda)) * 1_000 + service;
}

function measured(
  lambda: number,
  service: number,
  c: number,
  start: number,
  seed = 1,
): { mean: number; cpu: number; busy: number } {
  const duration = 1_500_000;
  const r = simulate({
    seed,
    start,
    duration,
    step: 10_000,
    traffic: traffic.poisson({ rate: lambda }),
    backend: { latency: latency.exponential(service), workers: c },
  });
  const busy = r.series.backendBusy.slice(10);
  const cpu = r.series.backendCpu.slice(10);
  return {
    mean: r.summary.latency.mean as number,
    cpu: cpu.reduce((x, y) => x + y, 0) / cpu.length,
    busy: busy.reduce((x, y) => x + y, 0) / busy.length,
  };
}

describe.each(STARTS)("capacity model (start %s)", (start) => {
  it("M/M/1: mean latency is 1 / (μ − λ) at every load, within 6 %", () => {
    for (const rho of [0.3, 0.6, 0.8]) {
      const lambda = rho * 100;
      const m = measured(lambda, 10, 1, start);
      const expected = 1_000 / (100 - lambda);
      expect(Math.abs(m.mean - expected) / expected).toBeLessThan(0.06);
      // Busy workers average ρ·c; the CPU reading follows them.
      expect(Math.abs(m.busy - rho)).toBeLessThan(0.02);
      expect(Math.abs(m.cpu / 1_000 - rho)).toBeLessThan(0.06);
    }
  });

  it("M/M/4: mean latency as Erlang C predicts, rising steeply near capacity", () => {
    const means: number[] = [];
    for (const rho of [0.5, 0.75, 0.9]) {
      const lambda = rho * 4 * 50;
      const m = measured(lambda, 20, 4, start, 2);
      const expected = mmc(lambda, 20, 4);
      expect(Math.abs(m.mean - expected) / expected).toBeLessThan(0.08);
      means.push(m.mean);
    }
    expect(means[1]).toBeGreaterThan(means[0]);
    expect(means[2]).toBeGreaterThan(2 * means[1]);
  });

  it("a bounded queue turns overload into fast failures instead of unbounded latency", () => {
    const r = simulate({
      start,
      duration: 60_000,
      traffic: traffic.poisson({ rate: 300 }),
      backend: { latency: latency.exponential(10), workers: 2, queue: 20 },
    });
    // Capacity is 200 a second: about a third of the calls find the queue full.
    const failed = r.summary.failed / r.summary.calls;
    expect(failed).toBeGreaterThan(0.28);
    expect(failed).toBeLessThan(0.38);
    // Nobody waits behind more than 20: latency stays within about 21 service times.
    expect(r.summary.latency.p99 as number).toBeLessThan(200);
    expect(Math.max(...r.series.backendQueue)).toBeLessThanOrEqual(20);
    // The CPU reading, averaged over about 4.9 s, is past 980 ‰ four time constants in.
    expect(Math.min(...r.series.backendCpu.slice(20))).toBeGreaterThan(980);
  });
});
