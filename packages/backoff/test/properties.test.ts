import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Backoff, Jitter } from "@tideward/backoff";

const jitter = fc.oneof(
  fc.constant(Jitter.rigid),
  fc.constant(Jitter.full),
  fc.constant(Jitter.equal),
  fc.constant(Jitter.decorrelated),
  fc.double({ min: 0, max: 1, noNaN: true }).map((f) => Jitter.spread(f)),
);

const policy = fc
  .record({
    base: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1e7, noNaN: true })),
    factor: fc.oneof(
      fc.constant(1),
      fc.double({ min: 1, max: 10, noNaN: true }),
      fc.double({ min: 1, max: 1e300, noNaN: true }),
    ),
    extra: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1e9, noNaN: true })),
    attempts: fc.integer({ min: 1, max: 30 }),
    jitter,
  })
  .map(({ base, extra, ...rest }) => new Backoff({ ...rest, base, cap: base + extra }));

const retry = fc.oneof(
  fc.integer({ min: 1, max: 64 }),
  fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(1_000, 1e9, Number.MAX_SAFE_INTEGER, Infinity),
);
const draw = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const previous = fc.oneof(fc.double({ noNaN: false }), fc.constantFrom(Infinity, -Infinity, Number.NaN, 0));

// Spread's bounds are c(1 − f) and c(1 + f) up to one rounding of each product.
const slack = (x: number): number => Math.abs(x) * 1e-12;

describe("properties", () => {
  it("a delay is finite and within its jitter's bounds, for any retry however large and any previous", () => {
    fc.assert(
      fc.property(policy, retry, draw, previous, (b, n, random, prev) => {
        const c = b.ceiling(n);
        const d = b.delay(n, { random, previous: prev });
        if (c === undefined || d === undefined || !Number.isFinite(c) || !Number.isFinite(d)) return false;
        if (c < 0 || c > b.cap) return false;
        switch (b.jitter.kind) {
          case "rigid":
            return d === c;
          case "full":
            return d >= 0 && d <= c;
          case "equal":
            return d >= c / 2 && d <= c;
          case "decorrelated":
            return d >= b.base && d <= b.cap;
          case "spread": {
            const f = b.jitter.fraction;
            return d >= c * (1 - f) - slack(c) && d <= c * (1 + f) + slack(c);
          }
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it("the ceiling never falls as the retry number grows, and is min(base × factor^(n−1), cap) while that is finite", () => {
    fc.assert(
      fc.property(policy, fc.integer({ min: 1, max: 2_000 }), fc.integer({ min: 0, max: 2_000 }), (b, n, step) => {
        const here = b.ceiling(n) as number;
        const later = b.ceiling(n + step) as number;
        const raw = b.base * b.factor ** (n - 1);
        const expected = Number.isFinite(raw) ? Math.min(raw, b.cap) : b.base === 0 ? 0 : b.cap;
        return later >= here && here === expected;
      }),
      { numRuns: 500 },
    );
  });

  it("the same draw gives the same delay; a larger draw never a shorter one", () => {
    fc.assert(
      fc.property(
        policy,
        fc.integer({ min: 1, max: 100 }),
        draw,
        draw,
        fc.double({ min: 0, max: 1e7, noNaN: true }),
        (b, n, r1, r2, prev) => {
          const lo = Math.min(r1, r2);
          const hi = Math.max(r1, r2);
          const a = b.delay(n, { random: lo, previous: prev }) as number;
          return (
            a === b.delay(n, { random: lo, previous: prev }) &&
            a <= (b.delay(n, { random: hi, previous: prev }) as number)
          );
        },
      ),
    );
  });

  it("a schedule has attempts − 1 finite waits, the draws it was given applied in order", () => {
    fc.assert(
      fc.property(policy, fc.array(draw, { maxLength: 40 }), (b, draws) => {
        const plan = b.schedule(draws);
        if (plan.length !== b.attempts - 1 || !plan.every(Number.isFinite)) return false;
        let prev = b.base;
        return plan.every((d, i) => {
          const ok = d === b.delay(i + 1, { random: draws[i] ?? 0, previous: prev });
          prev = d;
          return ok;
        });
      }),
    );
    expect(
      new Backoff({ attempts: 30, factor: 1e300, jitter: Jitter.full })
        .schedule(new Array<number>(29).fill(0.5))
        .every(Number.isFinite),
    ).toBe(true);
  });
});
