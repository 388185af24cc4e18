// The promises every limiter makes, pinned at the clock magnitudes users pass: near 0, near
// performance.now() and near Date.now(), where one float step is 2^-12 ms and `now + wait` lands
// on that grid rather than on the real number.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ManualClock } from "@tideward/time";
import { Bucket, Gcra, Period, Sliding } from "@tideward/limiters";
import { arrivals } from "./arrivals";
import { before, reachable, scales, step, wholeScales } from "./scales";

const rates = fc.double({ min: 0.1, max: 200_000, noNaN: true });
const bursts = fc.oneof(fc.integer({ min: 1, max: 400 }), fc.double({ min: 1, max: 400, noNaN: true }));

/**
 * Calls of cost one a bucket or GCRA flow of `burst` admits back to back from rest: `⌊burst⌋`,
 * or one more for a fractional burst within the forgiven billionth of the next whole number.
 */
const atRest = (burst: number): number => Math.floor(burst + Math.min(burst * 1e-9, 2 ** -10));

/** Every rate limiter behind one face, with a cost where it takes one. */
interface Subject {
  take(now: number, n?: number): boolean;
  peek(now: number, n?: number): boolean;
  next(now: number, n?: number): number;
}

function period(p: Period): Subject {
  return { take: (t) => p.take(t) !== "over", peek: (t) => p.peek(t) !== "over", next: (t) => p.next(t) };
}

// A limiter of each kind, from random numbers: [what it is, how many pass back to back from rest].
const subjects = fc.oneof(
  fc.tuple(rates, bursts).map(([rate, burst]) => ({
    make: () => new Bucket(rate, { burst }),
    rest: atRest(burst),
    costs: true,
    label: `Bucket(${rate}, { burst: ${burst} })`,
  })),
  fc.tuple(rates, bursts).map(([rate, burst]) => ({
    make: () => new Gcra(rate, { burst }),
    rest: atRest(burst),
    costs: true,
    label: `Gcra(${rate}, { burst: ${burst} })`,
  })),
  fc
    .tuple(fc.integer({ min: 1, max: 50 }), fc.double({ min: 0.0625, max: 5_000, noNaN: true }))
    .map(([quota, window]) => ({
      make: () => new Sliding(quota, window),
      rest: quota,
      costs: false,
      label: `Sliding(${quota}, ${window})`,
    })),
  fc
    .tuple(fc.integer({ min: 1, max: 50 }), fc.double({ min: 0.0625, max: 5_000, noNaN: true }), fc.boolean())
    .map(([quota, p, align]) => ({
      make: () => period(new Period(quota, p, { align })),
      rest: quota,
      costs: false,
      label: `Period(${quota}, ${p}, { align: ${align} })`,
    })),
);

describe.each(scales)("on %s", (_, origin) => {
  it("property: from rest exactly ⌊burst⌋ (or quota) calls of cost one pass back to back", () => {
    fc.assert(
      fc.property(subjects, origin, fc.double({ min: 0, max: 1e6, noNaN: true }), (subject, o, offset) => {
        const x = subject.make();
        const t = o + offset;
        let passed = 0;
        while (passed <= subject.rest && x.take(t)) passed++;
        return passed === subject.rest;
      }),
    );
  });

  it("property: next(now) is 0 exactly when take(now) would pass, and a take at now + next(now) passes", () => {
    fc.assert(
      fc.property(subjects, origin, arrivals({ costs: 3, gap: 600, max: 60 }), (subject, o, events) => {
        const x = subject.make();
        return events.every(({ t: dt, n: cost }) => {
          const t = o + dt;
          const n = subject.costs ? cost : 1;
          const wait = x.next(t, n);
          const would = x.peek(t, n);
          if ((wait === 0) !== would || x.take(t, n) !== would) return false;
          if (would || !Number.isFinite(wait)) return true;
          const later = t + wait; // as a caller computes it
          return x.peek(later, n) && x.next(later, n) === 0;
        });
      }),
    );
  });

  it("property: a loop that advances a ManualClock by next() ends, one wait after the first refusal", () => {
    fc.assert(
      fc.property(subjects, origin, fc.integer({ min: 1, max: 200 }), (subject, o, calls) => {
        const x = subject.make();
        const clock = new ManualClock(o);
        let waits = 0;
        for (let i = 0; i < calls; i++) {
          // The caller's loop: take, and on a refusal sleep what next() says, then try again.
          let tries = 0;
          while (!x.take(clock.now())) {
            clock.advance(x.next(clock.now()));
            waits++;
            if (++tries > 1) return false; // one wait must be enough
          }
        }
        return waits <= calls;
      }),
    );
  });
});

describe.each(scales)("Bucket on %s", (_, origin) => {
  it("property: never holds more than the burst, and admits at most burst + rate · elapsed over any stretch", () => {
    fc.assert(
      fc.property(rates, bursts, origin, arrivals({ costs: 4, max: 80 }), (rate, burst, o, events) => {
        const b = new Bucket(rate, { burst, now: o });
        const ts = events.map((e) => o + e.t);
        const admitted = events.map(({ n }, i) => (b.take(ts[i], n) ? n : 0));
        if (ts.some((t) => b.tokens(t) > b.burst)) return false;
        let worst = -Infinity;
        for (let i = 0; i < events.length; i++) {
          let sum = 0;
          for (let j = i; j < events.length; j++) {
            sum += admitted[j];
            worst = Math.max(worst, sum - (b.burst + (rate * (ts[j] - ts[i])) / 1_000));
          }
        }
        return worst <= 1e-6 * b.burst;
      }),
    );
  });

  it("property: next is exact — the deficit refilled at the rate, to a float step of the clock", () => {
    fc.assert(
      fc.property(rates, bursts, origin, arrivals({ costs: 4, max: 60 }), (rate, burst, o, events) => {
        const b = new Bucket(rate, { burst, now: o });
        for (const { t, n } of events) {
          const now = o + t;
          const held = b.tokens(now);
          const wait = b.next(now, n);
          if (wait > 0 && Number.isFinite(wait)) {
            const exact = ((n - held) * 1_000) / rate;
            // Within the slack's worth of time and two float steps of the clock at the target.
            const slack = (Math.min(b.burst * 1e-9, 2 ** -10) * 1_000) / rate;
            expect(Math.abs(wait - exact)).toBeLessThanOrEqual(slack + 2 * step(now + wait) + 1e-9 * exact);
          }
          b.take(now, n);
        }
      }),
    );
  });

  it("property: rateLimit().reset is exact and enough: the bucket is full then, and the wait is the deficit at the rate", () => {
    fc.assert(
      fc.property(rates, bursts, origin, arrivals({ costs: 4, max: 40 }), (rate, burst, o, events) => {
        const b = new Bucket(rate, { burst, now: o });
        for (const { t, n } of events) b.take(o + t, n);
        const now = o + (events.at(-1)?.t ?? 0);
        const held = b.tokens(now);
        const { reset, limit } = b.rateLimit(now);
        expect(b.rateLimit(now + reset)).toEqual({ limit, remaining: limit, reset: 0 });
        const exact = ((b.burst - held) * 1_000) / rate;
        const slack = (Math.min(b.burst * 1e-9, 2 ** -10) * 1_000) / rate;
        expect(Math.abs(reset - exact)).toBeLessThanOrEqual(slack + 2 * step(now + reset) + 1e-9 * exact);
      }),
    );
  });
});

describe.each(wholeScales)("Gcra against Bucket on %s", (_, origin) => {
  it("property: the same rate and burst admit the same calls", () => {
    fc.assert(
      fc.property(rates, bursts, origin, arrivals({ costs: 4, max: 80 }), (rate, burst, o, events) => {
        const g = new Gcra(rate, { burst });
        const b = new Bucket(rate, { burst, now: o });
        return events.every(
          ({ t, n }) => g.peek(o + t, n) === b.peek(o + t, n) && g.take(o + t, n) === b.take(o + t, n),
        );
      }),
    );
  });
});

describe.each(scales)("Sliding on %s", (_, origin) => {
  it("property: never more than quota in any window-long stretch", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 0.0625, max: 1_500, noNaN: true }),
        origin,
        arrivals({ gap: 400 }),
        (quota, window, o, events) => {
          const w = new Sliding(quota, window);
          const admitted = events.map(({ t }) => o + t).filter((t) => w.take(t));
          // A stamp is out once it is a window old, measured as the window measures it: now − s.
          return admitted.every((a) => admitted.filter((s) => s >= a && s - a < window).length <= quota);
        },
      ),
    );
  });

  it("property: next is exact — the oldest stamp's fall-out instant, and not a float step sooner", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 0.0625, max: 1_500, noNaN: true }),
        origin,
        arrivals({ gap: 400 }),
        (quota, window, o, events) => {
          const w = new Sliding(quota, window);
          return events.every(({ t }) => {
            const now = o + t;
            const wait = w.next(now);
            const lands = now + wait;
            // Then there is room, and not a float step sooner: the instant before is refused, or
            // no wait from `now` reaches it.
            const exact = wait === 0 || (w.peek(lands) && (!reachable(now, before(lands)) || !w.peek(before(lands))));
            w.take(now);
            return exact;
          });
        },
      ),
    );
  });
});

describe.each(scales)("Period on %s", (_, origin) => {
  const quotas = fc.integer({ min: 1, max: 6 });
  const lengths = fc.double({ min: 0.0625, max: 1_500, noNaN: true });

  it("property: unaligned, admits exactly as the definition: a period opens at the first event after the last one closed and lasts `period` ms", () => {
    fc.assert(
      fc.property(quotas, lengths, origin, arrivals({ gap: 400 }), (quota, length, o, events) => {
        const p = new Period(quota, length);
        let end = -Infinity;
        let count = 0;
        return events.every(({ t }) => {
          const now = o + t;
          if (now >= end) {
            end = now + length; // as the caller's clock adds it
            count = 0;
          }
          const expected = count >= quota ? "over" : count + 1 === quota ? "hit" : "under";
          if (expected !== "over") count++;
          return p.take(now) === expected;
        });
      }),
    );
  });

  it("property: once full, refuses every reading before the period ends, and next(now) lands exactly on that end", () => {
    fc.assert(
      fc.property(quotas, lengths, fc.boolean(), origin, arrivals({ gap: 400 }), (quota, length, align, o, events) => {
        const p = new Period(quota, length, { align });
        return events.every(({ t }) => {
          const now = o + t;
          p.take(now);
          const wait = p.next(now);
          if (wait === 0) return true;
          // The open period is at most one period long (to a float step of the clock), refuses
          // until its end, and the next period opens exactly there.
          const ends = now + wait;
          return (
            wait <= length + 2 * step(now) &&
            (!reachable(now, before(ends)) || p.peek(before(ends)) === "over") &&
            p.peek(ends) !== "over"
          );
        });
      }),
    );
  });
});
