import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Bucket, Gcra } from "@tideward/limiters";
import { arrivalsAt } from "./arrivals";
import { scales } from "./scales";

// Rates whose emission interval 1000/rate is a whole number of ms: with whole-ms clocks every
// sum GCRA makes is exact, so arrivals landing exactly on a boundary (they do, often) are
// decided by the definition and not by rounding.
const wholeIntervals = fc.constantFrom(1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1_000);

describe("Gcra", () => {
  it("near Date.now(), a burst of one admits a flow at rest at every rate from 1 to 1 000 a second, and then the rate", () => {
    const now = 1_700_000_000_000;
    const refused: number[] = [];
    for (let rate = 1; rate <= 1_000; rate++) {
      const g = new Gcra(rate, { burst: 1 });
      if (!g.take(now) || g.take(now)) refused.push(rate);
    }
    expect(refused).toEqual([]);
    // 7 a second for an hour, a caller taking whenever next() says it may: 7 · 3 600 admitted.
    const g = new Gcra(7, { burst: 1 });
    let passed = 0;
    for (let t = now; t < now + 3_600_000; t += g.next(t)) if (g.take(t)) passed++;
    expect(passed).toBe(25_200);
    // Offered a call every 10 ms, the calls land 150 ms apart (the first 10 ms mark past each
    // 142.86 ms interval): 24 000 in the hour, the same as a Bucket of the same rate.
    const h = new Gcra(7, { burst: 1 });
    const b = new Bucket(7, { burst: 1, now });
    let [gh, bh] = [0, 0];
    for (let i = 0; i < 360_000; i++) {
      if (h.take(now + i * 10)) gh++;
      if (b.take(now + i * 10)) bh++;
    }
    expect([gh, bh]).toEqual([24_000, 24_000]);
  });

  it("a rate faster than the clock's own step near Date.now() is honoured: one per reading, the next at the next step", () => {
    const g = new Gcra(1e8, { burst: 1 }); // one every 10 ns; Date.now() readings are 2^-12 ms apart
    const now = 1_700_000_000_000.5;
    expect([g.take(now), g.take(now)]).toEqual([true, false]);
    expect(g.next(now)).toBe(2 ** -12);
    expect(g.take(now + g.next(now))).toBe(true);
  });

  it("lets the burst through back to back, then one every emission interval", () => {
    const g = new Gcra(10, { burst: 2 });
    expect(g.interval).toBe(100);
    expect(g.tat).toBe(-Infinity);
    expect([g.take(0), g.take(0), g.take(0)]).toEqual([true, true, false]);
    expect(g.tat).toBe(200);
    expect(g.next(0)).toBe(100);
    expect(g.take(99)).toBe(false);
    expect(g.take(100)).toBe(true);
    expect(g.take(150)).toBe(false);
    expect(g.take(200)).toBe(true);
  });

  it("defines burst as the equivalent bucket's capacity: tolerance τ = (burst − 1)·T", () => {
    // rate 4/s: T = 250 ms; burst 3: τ = 500 ms. A unit request conforms when now ≥ TAT − τ.
    const g = new Gcra(4, { burst: 3 });
    g.take(0);
    g.take(0);
    g.take(0); // TAT = 750
    expect(g.tat).toBe(750);
    expect(g.peek(249)).toBe(false); // 249 < 750 − 500
    expect(g.peek(250)).toBe(true);
    expect(g.next(0)).toBe(250);
  });

  it("charges a cost of n as n emission intervals", () => {
    const g = new Gcra(10, { burst: 5 });
    expect(g.take(0, 3)).toBe(true); // TAT 300: two tokens left
    expect(g.take(0, 3)).toBe(false);
    expect(g.next(0, 3)).toBe(100);
    expect(g.take(100, 3)).toBe(true);
    expect(g.take(100, 0)).toBe(true);
    expect(g.take(100, 0.5)).toBe(false);
    expect(g.take(150, 0.5)).toBe(true); // fractions too
  });

  it("defaults the burst to the rate, never under one, and refuses costs above it (next: Infinity)", () => {
    expect(new Gcra(30).burst).toBe(30);
    expect(new Gcra(0.2).burst).toBe(1);
    const g = new Gcra(10, { burst: 2 });
    expect(g.take(0, 3)).toBe(false);
    expect(g.peek(0, 3)).toBe(false);
    expect(g.next(0, 3)).toBe(Infinity);
    expect(g.tat).toBe(-Infinity);
  });

  it("reports remaining (whole tokens of the equivalent bucket) and reset (ms until TAT)", () => {
    const g = new Gcra(10, { burst: 2 });
    expect(g.remaining(0)).toBe(2);
    expect(g.rateLimit(0)).toEqual({ limit: 2, remaining: 2, reset: 0 });
    g.take(0);
    g.take(0);
    expect(g.remaining(0)).toBe(0);
    expect(g.remaining(99)).toBe(0);
    expect(g.remaining(100)).toBe(1);
    expect(g.rateLimit(50)).toEqual({ limit: 2, remaining: 0, reset: 150 });
    expect(g.rateLimit(500)).toEqual({ limit: 2, remaining: 2, reset: 0 });
  });

  it("reads a clock that stepped back as the earlier instant: fewer tokens, never more", () => {
    const g = new Gcra(10, { burst: 2 });
    g.take(1_000);
    g.take(1_000); // TAT 1 200
    expect(g.take(1_100)).toBe(true); // TAT 1 300
    expect(g.take(1_050)).toBe(false); // a bucket standing still at 1 100 would refuse too
    expect(g.remaining(500)).toBe(0);
    expect(g.take(1_150)).toBe(false);
    expect(g.tat).toBe(1_300);
  });

  it.each([0, 1_700_000_000_000.5])(
    "never passes a cost for free, however small against a huge burst's lead, nearly spent (at %d)",
    (now) => {
      const burst = 2 ** 47;
      const g = new Gcra(3e6, { burst });
      const b = new Bucket(3e6, { burst, now });
      expect(g.take(now, burst - 5)).toBe(true);
      expect(b.take(now, burst - 5)).toBe(true);
      const passed = (take: (n: number) => boolean) => {
        let n = 0;
        while (n < 100_000 && take(0.01)) n++;
        return n;
      };
      // 5 requests left, at 0.01 each: 500 for the bucket; the flow's lead, some 4.7e10 ms, moves
      // by a float step a charge where 0.01 of an interval is less, so it passes fewer, never more.
      expect(passed((n) => b.take(now, n))).toBe(500);
      const flow = passed((n) => g.take(now, n));
      expect(flow).toBeGreaterThan(0);
      expect(flow).toBeLessThanOrEqual(500);
      expect(g.take(now, 1)).toBe(false);
    },
  );
});

describe.each(scales)("Gcra properties on %s", (_, origin) => {
  it("property: admits exactly what a bucket of the same rate and burst admits (unit costs, exact boundaries)", () => {
    fc.assert(
      fc.property(
        wholeIntervals,
        fc.option(fc.integer({ min: 1, max: 30 })),
        arrivalsAt(origin, { whole: true, gap: 1_500 }),
        (rate, burst, events) => {
          const options = burst === null ? {} : { burst };
          const g = new Gcra(rate, options);
          const b = new Bucket(rate, options);
          let bad = 0;
          for (const { t } of events) {
            if (g.remaining(t) !== b.rateLimit(t).remaining) bad++;
            if (Math.abs(g.next(t) - b.next(t)) > 1e-6) bad++;
            if (g.take(t) !== b.take(t)) bad++;
          }
          return bad === 0;
        },
      ),
    );
  });

  it("property: and for any rate, burst and costs (fractional ones included)", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 2_000, noNaN: true }),
        fc.double({ min: 0.5, max: 40, noNaN: true }),
        arrivalsAt(origin, { costs: 5 }),
        (rate, burst, events) => {
          const g = new Gcra(rate, { burst });
          const b = new Bucket(rate, { burst });
          return events.every(({ t, n }) => g.peek(t, n) === b.peek(t, n) && g.take(t, n) === b.take(t, n));
        },
      ),
    );
  });

  it("property: a take at now + next(now, n) succeeds", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 2_000, noNaN: true }),
        fc.double({ min: 1, max: 40, noNaN: true }),
        arrivalsAt(origin, { costs: 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (rate, burst, events, share) => {
          const g = new Gcra(rate, { burst });
          for (const { t } of events) g.take(t);
          const last = events.at(-1)?.t ?? 0;
          const n = share * g.burst;
          return g.take(last + g.next(last, n), n);
        },
      ),
    );
  });

  it("property: with a clock going both ways, never more than burst + rate · (last − first) between two admissions", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 2_000, noNaN: true }),
        fc.double({ min: 0.5, max: 40, noNaN: true }),
        arrivalsAt(origin, { costs: 3, shuffled: true }),
        (rate, burst, events) => {
          const g = new Gcra(rate, { burst });
          const admitted = events.filter(({ t, n }) => g.take(t, n));
          let worst = -Infinity;
          for (let i = 0; i < admitted.length; i++) {
            let sum = 0;
            for (let j = i; j < admitted.length; j++) {
              sum += admitted[j].n;
              worst = Math.max(worst, sum - (g.burst + (rate * (admitted[j].t - admitted[i].t)) / 1_000));
            }
          }
          return worst <= 1e-6 * g.burst;
        },
      ),
    );
  });
});
