// Traces of calls for the concurrency limit's properties: arrivals with a level, each lasting a
// while and ending in a success or a failure; the three algorithms built alike; the events of a
// trace in time order; and two fixed traces that put every algorithm to work on every run.
import fc from "fast-check";
import { AimdLimit, Gradient2Limit, Limiter, VegasLimit, criticality } from "@tideward/concurrency";

export interface Arrival {
  readonly gap: number;
  readonly duration: number;
  readonly level: number;
  readonly fails: boolean;
}

export const arrival: fc.Arbitrary<Arrival> = fc.record({
  gap: fc.double({ min: 0, max: 8, noNaN: true }),
  duration: fc.double({ min: 0.5, max: 60, noNaN: true }),
  level: fc.integer({ min: 0, max: 3 }),
  fails: fc.boolean(),
});

/** A limiter of one algorithm, with criticality's four levels, built at `now` (ms). */
export type Build = (now: number) => Limiter;
export const algorithms: [string, Build][] = [
  [
    "AIMD",
    (now) => new Limiter(new AimdLimit({ initial: 4, min: 1, max: 12, timeout: 40 }), { now, priorities: criticality }),
  ],
  ["Vegas", (now) => new Limiter(new VegasLimit({ initial: 6, min: 1, max: 16 }), { now, priorities: criticality })],
  [
    "Gradient2",
    (now) => new Limiter(new Gradient2Limit({ initial: 6, min: 1, max: 16 }), { now, priorities: criticality }),
  ],
];

/** The events of a trace in time order, an end before an arrival at the same instant. */
export function events(trace: readonly Arrival[], t0: number): { at: number; end: boolean; i: number }[] {
  const out: { at: number; end: boolean; i: number }[] = [];
  let t = t0;
  trace.forEach((a, i) => {
    t += a.gap;
    out.push({ at: t, end: false, i }, { at: t + a.duration, end: true, i });
  });
  return out.sort((x, y) => x.at - y.at || Number(y.end) - Number(x.end) || x.i - y.i);
}

/** Lets the promise chains of the calls that just ended move on. */
export const flush = async (): Promise<void> => {
  for (let i = 0; i < 6; i++) await Promise.resolve();
};

/**
 * Two fixed traces that put every algorithm to work on every run, whatever the random ones do: a
 * crowd of twenty at once (more than any initial limit, so some are refused) whose calls take
 * longer and longer (so a latency-led limit falls), then a quiet stretch of quick ones (so it
 * grows); and a steady overlap of long calls, a third of them failing.
 */
export const fixed: Arrival[][] = [
  [
    ...Array.from({ length: 20 }, (_, i) => ({ gap: 0, duration: 2 + 3 * i, level: i % 4, fails: false })),
    ...Array.from({ length: 40 }, (_, i) => ({ gap: 6, duration: 1, level: i % 4, fails: false })),
  ],
  Array.from({ length: 30 }, (_, i) => ({ gap: 0.5, duration: 50, level: i % 4, fails: i % 3 === 0 })),
];
