// A thousand clients fail together at t = 0 and retry. Without jitter they all come back in the
// same instant, which is how one outage becomes a second; with Full jitter their retries spread
// over the whole ceiling. Counted per 10 ms slot on simulated time, with seeded draws.
import { describe, expect, it } from "vitest";
import { Backoff, Jitter } from "@tideward/backoff";
import { seededRandom } from "@tideward/time";

const CLIENTS = 1_000;
const SLOT = 10; // ms

/** Slot counts of every retry every client makes when each attempt fails. */
function herd(b: Backoff, seed: number): Map<number, number> {
  const draw = seededRandom(seed);
  const slots = new Map<number, number>();
  for (let client = 0; client < CLIENTS; client++) {
    let t = 0;
    const draws = Array.from({ length: b.attempts - 1 }, draw);
    for (const wait of b.schedule(draws)) {
      t += wait;
      const slot = Math.floor(t / SLOT);
      slots.set(slot, (slots.get(slot) ?? 0) + 1);
    }
  }
  return slots;
}

const peak = (slots: Map<number, number>): number => Math.max(...slots.values());

describe("a herd of clients that failed together", () => {
  it("first retry: Rigid puts all 1 000 in one 10 ms slot; Full spreads them over all 100 slots of [0, 1 s)", () => {
    const rigid = herd(new Backoff({ base: 1_000, cap: 1_000, attempts: 2, jitter: Jitter.rigid }), 1);
    expect([...rigid]).toEqual([[100, 1_000]]);

    const full = herd(new Backoff({ base: 1_000, cap: 1_000, attempts: 2, jitter: Jitter.full }), 1);
    expect(full.size).toBe(100);
    expect(Math.min(...full.keys())).toBe(0);
    expect(Math.max(...full.keys())).toBe(99);
    expect(peak(full)).toBe(20); // the mean is 10 a slot; rigid's peak is 50 times this
  });

  it("Full's peak stays near the mean for any seed: at most 25 of 1 000 in a slot over five seeds", () => {
    const b = new Backoff({ base: 1_000, cap: 1_000, attempts: 2, jitter: Jitter.full });
    const peaks = Array.from({ length: 5 }, (_, i) => peak(herd(b, i + 1)));
    expect(Math.max(...peaks)).toBeLessThanOrEqual(25);
    expect(Math.min(...peaks)).toBeGreaterThanOrEqual(15);
  });

  it("a whole run of three retries (1 s, 2 s, 4 s ceilings): Rigid peaks at 1 000 three times, the jitters far lower", () => {
    const run = (jitter: Jitter): Map<number, number> =>
      herd(new Backoff({ base: 1_000, factor: 2, cap: 4_000, attempts: 4, jitter }), 1);
    const rigid = run(Jitter.rigid);
    expect([...rigid].sort((a, b) => a[0] - b[0])).toEqual([
      [100, 1_000],
      [300, 1_000],
      [700, 1_000],
    ]);
    const peaks = [Jitter.full, Jitter.equal, Jitter.decorrelated, Jitter.spread(0.2)].map((j) => peak(run(j)));
    expect(peaks).toEqual([23, 30, 13, 36]);
  });
});
