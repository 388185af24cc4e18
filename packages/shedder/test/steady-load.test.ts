// Below capacity a shedder refuses nothing, when its CPU signal is smoothed as it expects: a
// server at a steady three quarters of its capacity, its CPU read by the real LoadSampler on a
// simulated process, never sheds. A signal smoothed over a quarter of a second crosses the hot
// threshold from noise alone at that load, and the shedder, full at any moderate queue, sheds.
import { describe, expect, it } from "vitest";
import { Shedder } from "@tideward/shedder";
import type { Ticket } from "@tideward/shedder";
import { LoadSampler } from "@tideward/shedder/node";
import { seededRandom } from "@tideward/time";

const STARTS = [0, 1_723_456_789_012.375] as const;

interface Load {
  /** Calls a second, Poisson. */
  readonly rate: number;
  /** Workers, each serving one call at a time, first come first served. */
  readonly workers: number;
  /** Mean service time, ms (exponential). */
  readonly service: number;
  /** How long, ms. */
  readonly duration: number;
  /** The sampler's weight of the old value per 250 ms reading. */
  readonly beta: number;
  readonly seed: number;
}

/**
 * An M/M/c server with the shedder in front and a LoadSampler reading its busy share every
 * 250 ms (CPU time over wall time on `workers` cores): how many calls the shedder refused, and
 * the highest CPU reading it was handed.
 */
function run(start: number, load: Load): { calls: number; refused: number; hottest: number } {
  const random = seededRandom(load.seed);
  const exp = (mean: number): number => -mean * Math.log(1 - random());
  const clock = { now: start, busyMicros: 0 };
  const sampler = new LoadSampler({
    beta: load.beta,
    cores: load.workers,
    system: {
      now: () => clock.now,
      cpuUsage: () => ({ user: clock.busyMicros, system: 0 }),
      eventLoopUtilization: () => ({ active: 0, idle: clock.now - start }),
      setInterval: () => ({}),
      clearInterval: () => {},
    },
  });
  const shedder = new Shedder({}, start);
  // Calls in service (their end and ticket), and those waiting for a worker.
  const serving: { end: number; ticket: Ticket }[] = [];
  const waiting: { ticket: Ticket }[] = [];
  const end = start + load.duration;
  let nextArrival = start + exp(1_000 / load.rate);
  let nextTick = start + 250;
  let calls = 0;
  let refused = 0;
  let hottest = 0;
  const advance = (t: number): void => {
    clock.busyMicros += serving.length * (t - clock.now) * 1_000;
    clock.now = t;
  };
  for (;;) {
    let first = 0;
    for (let i = 1; i < serving.length; i++) if (serving[i].end < serving[first].end) first = i;
    const departure = serving.length > 0 ? serving[first].end : Infinity;
    const t = Math.min(nextArrival, departure, nextTick);
    if (t >= end) break;
    advance(t);
    if (t === departure) {
      const [done] = serving.splice(first, 1);
      done.ticket.pass(t);
      const next = waiting.shift();
      if (next !== undefined) serving.push({ end: t + exp(load.service), ticket: next.ticket });
    } else if (t === nextTick) {
      sampler.sample();
      nextTick += 250;
    } else {
      calls++;
      nextArrival = t + exp(1_000 / load.rate);
      const cpu = sampler.cpu;
      if (cpu > hottest) hottest = cpu;
      const ticket = shedder.allow(t, cpu);
      if (ticket === undefined) refused++;
      else if (serving.length < load.workers) serving.push({ end: t + exp(load.service), ticket });
      else waiting.push({ ticket });
    }
  }
  sampler.stop();
  return { calls, refused, hottest };
}

describe.each(STARTS)("a shedder at a steady 75 % of capacity (start %s)", (start) => {
  // 150 calls a second on 200 a second of capacity, as one, four or forty workers.
  const servers = [
    { workers: 1, service: 5 },
    { workers: 4, service: 20 },
    { workers: 40, service: 200 },
  ] as const;

  it.each(servers)("refuses nothing with LoadSampler's smoothing (%o)", (server) => {
    for (const seed of [1, 2, 3]) {
      const r = run(start, { rate: 150, ...server, duration: 60_000, beta: 0.95, seed });
      expect(r.calls).toBeGreaterThan(8_500);
      expect(r.refused).toBe(0);
      // The reading stays under the 900 ‰ threshold: the server never reads hot.
      expect(r.hottest).toBeLessThan(900);
    }
  });

  it("sheds with a signal smoothed over 250 ms: the noise of a busy share crosses 900 ‰", () => {
    // A weight of 1/e per 250 ms reading: a time constant of 250 ms.
    const r = run(start, { rate: 150, workers: 4, service: 20, duration: 60_000, beta: Math.exp(-1), seed: 1 });
    expect(r.hottest).toBeGreaterThan(900);
    expect(r.refused).toBeGreaterThan(0);
  });
});
