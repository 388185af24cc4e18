// A bucket of one number keeps the instant it is full again, F. These pin why it may: on a limit
// whose ms a token is a whole number of 2^-7 ms, every F a burst leaves is exactly t + k · tick
// near Date.now() (no rounding at all), and within a float step of it near 0; the engine's
// figures are those of the two-number bucket; and which limits keep one number.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, limitSpec, perSecond } from "@tideward/quota-engine";
import { Rule } from "@tideward/quota-engine/internal";
import { oneNumber } from "../src/one-number";

// A double as an exact rational n / 2^1100, to compare sums without rounding.
function exact(x: number): bigint {
  let e = 0;
  let m = x;
  while (!Number.isInteger(m)) {
    m *= 2;
    e--;
  }
  return BigInt(m) * 2n ** BigInt(1100 + e);
}

const key = new QuotaKey("t", "k", "r");
const specs = fc.record({
  capacity: fc.integer({ min: 1, max: 60 }),
  refill: fc.constantFrom(1, 2, 4, 5, 8, 10, 16, 20, 25, 40, 64, 125, 1_000),
  window: fc.constantFrom(1, 10, 1_000, 60_000, 3_600_000),
});
const clocks: [string, fc.Arbitrary<number>, boolean][] = [
  ["near Date.now() (fractional)", fc.double({ min: 1.6e12, max: 2.1e12, noNaN: true }), true],
  ["near 0 (fractional)", fc.double({ min: 0, max: 1e6, noNaN: true }), false],
];

describe.each(clocks)("a bucket of one number on a clock %s", (_, clock, exactly) => {
  it("property: a burst from rest leaves F = t + k · tick (exactly near Date.now()), and exactly ⌊capacity⌋ pass", () => {
    fc.assert(
      fc.property(specs, clock, (s, t) => {
        const spec = limitSpec({ name: "l", ...s });
        const rule = new Rule(spec);
        fc.pre(rule.oneNumber);
        const engine = new QuotaEngine();
        engine.addLimit(spec);
        const passed = Array.from({ length: s.capacity + 1 }, () => engine.checkTokenBucket(key, "l", t).allowed);
        expect(passed).toEqual([...Array<boolean>(s.capacity).fill(true), false]);
        const full = engine.snapshot().fullAt[0].full;
        const want = exact(t) + BigInt(s.capacity) * exact(rule.tick);
        if (exactly) expect(exact(full)).toBe(want);
        // Near 0, a float step of the sum at most (where it crosses a power of two).
        else {
          const off = exact(full) - want;
          expect((off < 0n ? -off : off) <= exact(2 ** -52 * full)).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("property: retryAfter is 0 exactly when a check passes, a retry at now + retryAfter passes, remaining in range", () => {
    fc.assert(
      fc.property(
        specs,
        clock,
        fc.array(fc.tuple(fc.double({ min: 0, max: 2_000, noNaN: true }), fc.integer({ min: 1, max: 5 })), {
          maxLength: 40,
        }),
        (s, t0, steps) => {
          const spec = limitSpec({ name: "l", ...s });
          fc.pre(new Rule(spec).oneNumber);
          const engine = new QuotaEngine();
          engine.addLimit(spec);
          let now = t0;
          for (const [dt, cost] of steps) {
            now += dt;
            const d = engine.checkTokenBucket(key, "l", now, cost);
            expect(d.retryAfter === 0).toBe(d.allowed);
            if (!d.allowed && Number.isFinite(d.retryAfter))
              expect(engine.peekAtomic([{ key, limit: "l", cost }], now + d.retryAfter).allowed).toBe(true);
            expect(d.remaining).toBeGreaterThanOrEqual(0);
            expect(d.remaining).toBeLessThanOrEqual(s.capacity);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe("which buckets keep one number", () => {
  it("those whose ms a token is a whole number of 2^-7 ms, no deeper than 2^44 ms", () => {
    expect(new Rule(perSecond("a", 2)).oneNumber).toBe(true); // 500 ms a token
    expect(new Rule(perSecond("a", 1_000)).oneNumber).toBe(true); // 1 ms
    expect(new Rule(perSecond("a", 128_000)).oneNumber).toBe(true); // 2^-7 ms
    expect(new Rule(perSecond("a", 256_000)).oneNumber).toBe(false); // 2^-8 ms
    expect(new Rule(perSecond("a", 3)).oneNumber).toBe(false); // 333⅓ ms
    expect(new Rule(limitSpec({ name: "a", capacity: 100, refill: 1, window: 3_600_000 })).oneNumber).toBe(true);
    expect(new Rule(limitSpec({ name: "a", capacity: 100, refill: 7, window: 3_600_000 })).oneNumber).toBe(false);
    expect(oneNumber(1, 2 ** 44)).toBe(true);
    expect(oneNumber(1, 2 ** 44 + 1)).toBe(false); // deeper than 2^44 ms
  });
});
