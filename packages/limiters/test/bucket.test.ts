import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Bucket } from "@tideward/limiters";
import { arrivalsAt, runningMax } from "./arrivals";
import { scales, step } from "./scales";

describe("Bucket", () => {
  it("starts full: a burst of twenty at twenty a second passes, the twenty-first does not", () => {
    const b = new Bucket(20);
    let passed = 0;
    for (let i = 0; i < 21; i++) if (b.take(0)) passed++;
    expect(passed).toBe(20);
    expect(b.tokens(0)).toBe(0);
  });

  it("refills at rate tokens a second, continuously, up to the burst", () => {
    const b = new Bucket(20, { burst: 20 });
    for (let i = 0; i < 20; i++) b.take(0);
    expect(b.tokens(25)).toBeCloseTo(0.5, 12); // 25 ms × 0.02 tokens/ms
    expect(b.tokens(500)).toBeCloseTo(10, 12);
    expect(b.tokens(5_000)).toBe(20); // capped at the burst, however long the gap
    expect(b.take(49)).toBe(false);
    expect(b.take(50)).toBe(true);
  });

  it("says how long until n tokens land, and a take then succeeds", () => {
    const b = new Bucket(20);
    for (let i = 0; i < 20; i++) b.take(0);
    expect(b.next(0)).toBeCloseTo(50, 9);
    expect(b.next(0, 20)).toBeCloseTo(1_000, 9);
    expect(b.next(30, 1)).toBeCloseTo(20, 9);
    expect(b.take(30 + b.next(30))).toBe(true);
    expect(b.next(5_000)).toBe(0);
  });

  it("defaults the burst to the rate, and never under one", () => {
    expect(new Bucket(7).burst).toBe(7);
    expect(new Bucket(2.5).burst).toBe(2.5);
    expect(new Bucket(0.5).burst).toBe(1);
    expect(new Bucket(100, { burst: 0.25 }).burst).toBe(1);
    const slow = new Bucket(0.5); // one token every two seconds
    expect(slow.take(0)).toBe(true);
    expect(slow.take(0)).toBe(false);
    expect(slow.next(0)).toBeCloseTo(2_000, 9);
  });

  it("keeps fractional tokens and fractional costs", () => {
    const b = new Bucket(10, { burst: 2.5 });
    expect(b.take(0)).toBe(true);
    expect(b.take(0)).toBe(true);
    expect(b.take(0)).toBe(false); // 0.5 left
    expect(b.tokens(0)).toBeCloseTo(0.5, 12);
    expect(b.take(0, 0.5)).toBe(true);
    expect(b.take(0, 0)).toBe(true); // a free call always passes
    expect(b.rateLimit(0)).toEqual({ limit: 2, remaining: 0, reset: 250 });
  });

  it("refuses a cost above the burst and says so: next is Infinity, nothing is taken", () => {
    const b = new Bucket(5, { burst: 3 });
    expect(b.take(0, 3.5)).toBe(false);
    expect(b.peek(0, 3.5)).toBe(false);
    expect(b.next(0, 3.5)).toBe(Infinity);
    expect(b.next(0, Infinity)).toBe(Infinity);
    expect(b.tokens(0)).toBe(3);
    expect(b.take(0, 3)).toBe(true); // the burst itself is fine
  });

  it("peeks without taking", () => {
    const b = new Bucket(1, { burst: 1 });
    expect(b.peek(0)).toBe(true);
    expect(b.peek(0)).toBe(true);
    expect(b.take(0)).toBe(true);
    expect(b.peek(0)).toBe(false);
    expect(b.peek(1_000)).toBe(true);
    expect(b.tokens(0)).toBe(0);
  });

  it("reports limit, remaining and reset (ms until full) for a RateLimit header", () => {
    const b = new Bucket(20);
    expect(b.rateLimit(0)).toEqual({ limit: 20, remaining: 20, reset: 0 });
    for (let i = 0; i < 5; i++) b.take(0);
    const r = b.rateLimit(0);
    expect(r.limit).toBe(20);
    expect(r.remaining).toBe(15);
    expect(r.reset).toBeCloseTo(250, 9); // five tokens at 0.02 a millisecond
    expect(b.rateLimit(100).remaining).toBe(17);
  });

  it("stands still when the clock steps back: no tokens minted, none taken back", () => {
    const b = new Bucket(10, { burst: 10, now: 1_000 });
    for (let i = 0; i < 10; i++) b.take(1_000);
    expect(b.take(500)).toBe(false); // earlier than the latest reading: still empty
    expect(b.tokens(0)).toBe(0);
    expect(b.take(1_100)).toBe(true); // 100 ms after the latest reading: one token
    expect(b.take(900)).toBe(false);
    // next counts from the latest reading, and is the wait from the caller's own `now`
    expect(b.next(1_050)).toBeCloseTo(150, 9);
  });
});

describe.each(scales)("Bucket properties on %s", (_, origin) => {
  it("property: never holds more than the burst, nor less than nothing", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 1_000, noNaN: true }),
        fc.double({ min: 0.5, max: 50, noNaN: true }),
        arrivalsAt(origin, { costs: 4 }),
        (rate, burst, events) => {
          const b = new Bucket(rate, { burst });
          let bad = 0;
          for (const { t, n } of events) {
            b.take(t, n);
            const held = b.tokens(t);
            if (held > b.burst || held < 0) bad++;
          }
          return bad === 0;
        },
      ),
    );
  });

  it("property: never admits more than burst + rate · elapsed over any stretch", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 1_000, noNaN: true }),
        fc.double({ min: 0.5, max: 50, noNaN: true }),
        arrivalsAt(origin, { costs: 4 }),
        (rate, burst, events) => {
          const b = new Bucket(rate, { burst });
          const admitted = events.map(({ t, n }) => (b.take(t, n) ? n : 0));
          let worst = -Infinity;
          for (let i = 0; i < events.length; i++) {
            let sum = 0;
            for (let j = i; j < events.length; j++) {
              sum += admitted[j];
              const allowed = b.burst + (rate * (events[j].t - events[i].t)) / 1_000;
              worst = Math.max(worst, sum - allowed);
            }
          }
          return worst <= 1e-6 * b.burst;
        },
      ),
    );
  });

  it("property: refuses only what is not there, and a take at now + next(now, n) succeeds", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 1_000, noNaN: true }),
        fc.double({ min: 0.5, max: 50, noNaN: true }),
        arrivalsAt(origin, { costs: 4 }),
        (rate, burst, events) => {
          const b = new Bucket(rate, { burst });
          let bad = 0;
          for (const { t, n } of events) {
            const peeked = b.peek(t, n);
            const before = b.tokens(t);
            const wait = b.next(t, n);
            const took = b.take(t, n);
            if (peeked !== took) bad++;
            if (took !== (wait === 0)) bad++;
            if (!took && n <= b.burst && before >= n) bad++;
            // The wait is exactly what refills the deficit at rate tokens a second, to the float
            // step of the clock it lands on (2^-9 ms near 10^13).
            if (
              !took &&
              n <= b.burst &&
              Math.abs(before + (wait * rate) / 1_000 - n) > 1e-6 * Math.max(1, n) + (2 * step(t + wait) * rate) / 1_000
            )
              bad++;
            if (n > b.burst && wait !== Infinity) bad++;
          }
          return bad === 0;
        },
      ),
    );
  });

  it("property: a take at exactly now + next(now) succeeds", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 1_000, noNaN: true }),
        fc.double({ min: 1, max: 50, noNaN: true }),
        arrivalsAt(origin, { costs: 1 }),
        (rate, burst, events) => {
          const b = new Bucket(rate, { burst });
          for (const { t } of events) b.take(t);
          const last = events.at(-1)?.t ?? 0;
          const wait = b.next(last);
          return b.take(last + wait);
        },
      ),
    );
  });

  it("property: a clock that steps back answers as if it had stood still at its latest reading", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 1_000, noNaN: true }),
        fc.double({ min: 0.5, max: 50, noNaN: true }),
        arrivalsAt(origin, { costs: 4, shuffled: true }),
        (rate, burst, events) => {
          const raw = new Bucket(rate, { burst });
          const still = new Bucket(rate, { burst });
          const max = runningMax(events.map((e) => e.t));
          return events.every(({ t, n }, i) => raw.take(t, n) === still.take(max[i], n));
        },
      ),
    );
  });
});
