import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Sliding } from "@tideward/limiters";
import { arrivalsAt, runningMax } from "./arrivals";
import { scales } from "./scales";

/** The definition, kept naively: every admitted stamp, counted afresh on each event. */
class Naive {
  readonly stamps: number[] = [];
  constructor(
    readonly quota: number,
    readonly window: number,
  ) {}
  inWindow(now: number): number {
    return this.stamps.filter((s) => now - s < this.window).length;
  }
  take(now: number): boolean {
    if (this.inWindow(now) >= this.quota) return false;
    this.stamps.push(now);
    return true;
  }
}

describe("Sliding", () => {
  it("admits quota events in any window-long stretch, and the next once the oldest falls out", () => {
    const w = new Sliding(3, 1_000);
    expect([0, 100, 200, 300].map((t) => w.take(t))).toEqual([true, true, true, false]);
    expect(w.next(300)).toBe(700);
    expect(w.take(999)).toBe(false);
    expect(w.take(1_000)).toBe(true); // the stamp at 0 is exactly a window old: fallen out
    expect(w.take(1_050)).toBe(false);
    expect(w.next(1_050)).toBe(50);
    expect(w.left(1_250)).toBe(2); // the stamps at 100 and 200 are out
  });

  it("counts what is left and peeks without counting", () => {
    const w = new Sliding(2, 60_000);
    expect(w.left(0)).toBe(2);
    expect(w.peek(0)).toBe(true);
    expect(w.left(0)).toBe(2);
    w.take(0);
    expect(w.left(0)).toBe(1);
    w.take(10);
    expect(w.peek(20)).toBe(false);
    expect(w.left(20)).toBe(0);
    expect(w.left(60_000)).toBe(1);
    expect(w.left(60_010)).toBe(2);
  });

  it("reports limit, remaining and reset (ms until the newest event falls out)", () => {
    const w = new Sliding(5, 1_000);
    expect(w.rateLimit(0)).toEqual({ limit: 5, remaining: 5, reset: 0 });
    w.take(100);
    w.take(400);
    expect(w.rateLimit(500)).toEqual({ limit: 5, remaining: 3, reset: 900 });
    expect(w.rateLimit(1_200)).toEqual({ limit: 5, remaining: 4, reset: 200 });
    expect(w.rateLimit(1_400)).toEqual({ limit: 5, remaining: 5, reset: 0 });
  });

  it("wraps its ring many times over without growing", () => {
    const w = new Sliding(4, 10);
    let passed = 0;
    for (let t = 0; t < 10_000; t++) if (w.take(t)) passed++;
    expect(passed).toBe(4_000); // four in every 10 ms
  });

  it("stands still when the clock steps back: the event is stamped at the latest reading", () => {
    const w = new Sliding(1, 1_000);
    expect(w.take(5_000)).toBe(true);
    expect(w.take(4_500)).toBe(false); // read as 5 000, not as half a second earlier
    expect(w.take(5_999)).toBe(false);
    expect(w.take(6_000)).toBe(true);
    // A refused reading moves the clock too: a step back stands still there, not at the last stamp.
    const v = new Sliding(1, 1_000);
    v.take(0);
    v.take(900); // refused, but the clock has read 900
    expect(v.next(500)).toBe(500); // still due at 1 000, which is 500 ms from the caller's 500
    expect(v.left(500)).toBe(0);
  });

  it("holds a quota of 100 000 in 100 000 slots and admits exactly that many", () => {
    const w = new Sliding(100_000, 60_000);
    let passed = 0;
    for (let i = 0; i < 150_000; i++) if (w.take(i * 0.1)) passed++; // 150 000 events in 15 s
    expect(passed).toBe(100_000);
    expect(w.left(15_000)).toBe(0);
    expect(w.next(15_000)).toBe(45_000); // the first stamp, at 0, falls out at 60 000
    expect(w.left(60_000 + 5_000)).toBe(50_001); // stamps 0 … 5 000 out (0.1 ms apart)
  });
});

describe.each(scales)("Sliding properties on %s", (_, origin) => {
  it("property: never more than quota in any window-long stretch", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 1, max: 1_500, noNaN: true }),
        arrivalsAt(origin, { gap: 400 }),
        (quota, window, events) => {
          const w = new Sliding(quota, window);
          const admitted = events.filter(({ t }) => w.take(t)).map(({ t }) => t);
          // Every stretch [a, a + window) that holds the most is one starting at an admitted stamp.
          return admitted.every((a) => admitted.filter((s) => s >= a && s - a < window).length <= quota);
        },
      ),
    );
  });

  it("property: admits whenever that would not exceed the quota — the definition, exactly", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 1, max: 1_500, noNaN: true }),
        arrivalsAt(origin, { gap: 400 }),
        (quota, window, events) => {
          const w = new Sliding(quota, window);
          const naive = new Naive(quota, window);
          let bad = 0;
          for (const { t } of events) {
            const left = quota - naive.inWindow(t);
            if (w.left(t) !== left) bad++;
            if (w.peek(t) !== left > 0) bad++;
            if ((w.next(t) === 0) !== left > 0) bad++;
            if (w.take(t) !== naive.take(t)) bad++;
          }
          return bad === 0;
        },
      ),
    );
  });

  it("property: a take at now + next(now) succeeds (whole milliseconds)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 1_500 }),
        arrivalsAt(origin, { gap: 400, whole: true }),
        (quota, window, events) => {
          const w = new Sliding(quota, window);
          for (const { t } of events) w.take(t);
          const last = events.at(-1)?.t ?? 0;
          const wait = w.next(last);
          // Not a moment sooner (stamps are whole, so half a millisecond earlier is still full) …
          if (wait > 0 && w.peek(last + wait - 0.5)) return false;
          // … and then there is room.
          return w.left(last + wait) > 0 && w.take(last + wait);
        },
      ),
    );
  });

  it("property: a clock that steps back answers as if it had stood still at its latest reading", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 1, max: 1_500, noNaN: true }),
        arrivalsAt(origin, { gap: 400, shuffled: true }),
        (quota, window, events) => {
          const raw = new Sliding(quota, window);
          const still = new Sliding(quota, window);
          const max = runningMax(events.map((e) => e.t));
          return events.every(({ t }, i) => raw.left(t) === still.left(max[i]) && raw.take(t) === still.take(max[i]));
        },
      ),
    );
  });
});
