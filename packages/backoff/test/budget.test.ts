import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RetryBudget, budget } from "@tideward/backoff";

/** Asks for retries at `now` until refused; how many were granted. */
function drain(b: RetryBudget, now: number): number {
  let granted = 0;
  while (b.tryRetry(now)) granted++;
  return granted;
}

describe("RetryBudget", () => {
  it("has Finagle's defaults: a fifth of first attempts, plus 10 a second, over 10 s in 10 buckets", () => {
    expect(budget).toEqual({ ratio: 0.2, minPerSecond: 10, window: 10_000, buckets: 10 });
    expect(new RetryBudget().policy).toEqual(budget);
    const b = new RetryBudget();
    expect(b.available(0)).toBe(100); // the floor alone: 10 a second for 10 s
    for (let i = 0; i < 1_000; i++) b.recordAttempt(i);
    expect(b.available(1_000)).toBe(300); // 0.2 × 1 000 + 100
  });

  it("grants ratio × first attempts plus the floor, then refuses, spending nothing on a refusal", () => {
    const b = new RetryBudget({ ratio: 0.5, minPerSecond: 2, window: 1_000, buckets: 10 });
    for (let i = 0; i < 4; i++) b.recordAttempt(0);
    expect(b.available(0)).toBe(4); // 0.5 × 4 + 2 × 1 s
    expect(drain(b, 0)).toBe(4);
    expect(b.tryRetry(10)).toBe(false);
    expect(b.available(10)).toBe(0);
    b.recordAttempt(20);
    b.recordAttempt(20);
    expect(drain(b, 20)).toBe(1); // two more first attempts earn one more retry
  });

  it("refuses once exhausted and recovers as the window moves past the spent retries", () => {
    const b = new RetryBudget({ ratio: 0, minPerSecond: 2, window: 1_000, buckets: 10 });
    expect(b.tryRetry(0)).toBe(true); // lands in the bucket [0, 100)
    expect(b.tryRetry(500)).toBe(true); // in [500, 600)
    expect(b.tryRetry(600)).toBe(false);
    expect(b.tryRetry(999)).toBe(false); // both still inside the last second
    expect(b.available(999)).toBe(0);
    expect(b.tryRetry(1_000)).toBe(true); // the [0, 100) bucket has aged out: one retry back
    expect(b.tryRetry(1_001)).toBe(false);
    expect(b.available(1_499)).toBe(0);
    expect(b.available(1_500)).toBe(1); // and the [500, 600) one
    expect(b.available(10_000)).toBe(2); // a long quiet spell: the whole floor
  });

  it("earned retries expire with the first attempts that earned them", () => {
    const b = new RetryBudget({ ratio: 1, minPerSecond: 0, window: 1_000, buckets: 4 });
    b.recordAttempt(0);
    b.recordAttempt(0);
    expect(b.available(900)).toBe(2);
    expect(b.available(1_000)).toBe(0);
    expect(b.tryRetry(1_000)).toBe(false);
  });

  it("counts a ratio that is one rounding off a whole number as the whole number", () => {
    const b = new RetryBudget({ ratio: 0.57, minPerSecond: 0 });
    for (let i = 0; i < 100; i++) b.recordAttempt(0);
    expect(0.57 * 100).toBeLessThan(57); // 56.99999999999999
    expect(drain(b, 0)).toBe(57);
  });

  it("treats a clock that steps back as standing still: nothing comes back to life", () => {
    const b = new RetryBudget({ ratio: 0, minPerSecond: 1, window: 1_000, buckets: 10 });
    expect(b.tryRetry(5_000)).toBe(true);
    expect(b.tryRetry(100)).toBe(false); // back in time: still the 5 000 bucket, still spent
    expect(b.available(5_999)).toBe(0);
    expect(b.available(6_000)).toBe(1);
  });

  it("clear forgets everything", () => {
    const b = new RetryBudget({ ratio: 0, minPerSecond: 1, window: 1_000 });
    expect(drain(b, 0)).toBe(1);
    b.clear();
    expect(b.available(0)).toBe(1);
  });

  it("a ratio and a floor of zero grant nothing", () => {
    const b = new RetryBudget({ ratio: 0, minPerSecond: 0 });
    for (let i = 0; i < 10; i++) b.recordAttempt(0);
    expect(b.tryRetry(0)).toBe(false);
  });
});

describe("RetryBudget.giveBack", () => {
  it.each([0, 1_700_000_000_123.375])(
    "undoes exactly what grant counted, with the clock at %d: the budget answers as if it had refused",
    (t0) => {
      const b = new RetryBudget({ ratio: 0.5, minPerSecond: 1, window: 1_000, buckets: 10 }, t0);
      for (let i = 0; i < 4; i++) b.recordAttempt(t0);
      expect(b.available(t0 + 50)).toBe(3); // 0.5 × 4 + 1 × 1 s
      const receipt = b.grant(t0 + 50);
      expect(Number.isSafeInteger(receipt) && receipt >= 0).toBe(true);
      expect(b.available(t0 + 50)).toBe(2);
      b.giveBack(receipt);
      expect(b.available(t0 + 50)).toBe(3);
      expect(drain(b, t0 + 60)).toBe(3); // the credit given back is there to spend
      expect(b.grant(t0 + 60)).toBe(-1);
      b.giveBack(-1); // a refusal's answer: nothing to give back
      expect(b.available(t0 + 60)).toBe(0);
    },
  );

  it("gives the retry back to the bucket that counted it, so it ages out when that bucket does", () => {
    const b = new RetryBudget({ ratio: 0, minPerSecond: 3, window: 1_000, buckets: 10 });
    const early = b.grant(0); // in [0, 100)
    const late = b.grant(500); // in [500, 600)
    expect(b.available(500)).toBe(1);
    b.giveBack(late);
    expect(b.available(999)).toBe(2); // only the early one still counts
    expect(b.available(1_000)).toBe(3); // and it ages out with its bucket
    b.giveBack(early); // that bucket is gone: nothing to give back, nothing goes below zero
    expect(b.available(1_000)).toBe(3);
    expect(drain(b, 1_000)).toBe(3);
  });

  it("changes nothing once the bucket that counted the retry has aged out, even where its place is in use again", () => {
    const b = new RetryBudget({ ratio: 0, minPerSecond: 2, window: 1_000, buckets: 4 });
    const old = b.grant(0); // the first bucket, [0, 250)
    const again = b.grant(1_000); // the same place in the ring, a window later: [1 000, 1 250)
    expect(again).not.toBe(old);
    expect(b.available(1_000)).toBe(1);
    b.giveBack(old);
    expect(b.available(1_000)).toBe(1); // the retry at 1 000 still counts
    b.giveBack(again);
    expect(b.available(1_000)).toBe(2);
  });

  it("gives back into the head when the grant was made on a clock that had stepped back", () => {
    const b = new RetryBudget({ ratio: 0, minPerSecond: 2, window: 1_000, buckets: 10 });
    expect(b.tryRetry(5_000)).toBe(true);
    const back = b.grant(100); // counted in the 5 000 bucket
    expect(b.available(5_000)).toBe(0);
    b.giveBack(back);
    expect(b.available(5_999)).toBe(1);
    expect(b.available(6_000)).toBe(2); // the retry at 5 000 ages out with its bucket, and nothing else was left
  });

  it("changes nothing after clear", () => {
    const b = new RetryBudget({ ratio: 0, minPerSecond: 1, window: 1_000 });
    const receipt = b.grant(0);
    b.clear();
    expect(b.grant(0)).toBeGreaterThanOrEqual(0);
    b.giveBack(receipt);
    expect(b.available(0)).toBe(0); // the retry granted since clear still counts
  });

  it("changes nothing for what is not a receipt", () => {
    const b = new RetryBudget({ ratio: 0, minPerSecond: 3, window: 1_000, buckets: 10 });
    const receipt = b.grant(0);
    for (const bad of [Number.NaN, -1, -0.5, receipt + 0.5, Infinity, 2 ** 60, "0", null, undefined, Symbol("r"), {}])
      b.giveBack(bad as number);
    expect(b.available(0)).toBe(2);
    b.giveBack(receipt);
    expect(b.available(0)).toBe(3);
  });

  it("takes back one retry a give-back, and none from a bucket that has none left", () => {
    const b = new RetryBudget({ ratio: 0, minPerSecond: 3, window: 1_000, buckets: 10 });
    const receipt = b.grant(0);
    expect(b.grant(10)).toBe(receipt); // one bucket, one receipt
    b.giveBack(receipt);
    b.giveBack(receipt);
    b.giveBack(receipt);
    expect(b.available(10)).toBe(3);
    expect(drain(b, 10)).toBe(3);
  });
});

describe.each([0, 1_700_000_000_000.375])("RetryBudget.giveBack of what is not a receipt, at a clock of %d", (t0) => {
  // Nothing throws once a budget is built, and a non-receipt does nothing: undefined threw
  // "Cannot read properties of undefined" (the id of no bucket is undefined too).
  const notReceipt = fc.oneof(
    fc.anything(),
    fc.constantFrom(undefined, null, Number.NaN, -0, Infinity, -Infinity, 2 ** 53, Number.MAX_VALUE),
    fc.double(),
    fc.integer(),
    fc.bigInt(),
  );
  it("throws nothing and changes nothing, with retries granted in several buckets", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 2_000, noNaN: true }), { minLength: 1, maxLength: 12 }),
        fc.array(notReceipt, { minLength: 1, maxLength: 8 }),
        (offsets, values) => {
          const b = new RetryBudget({ ratio: 0, minPerSecond: 20, window: 1_000, buckets: 10 }, t0);
          const sorted = [...offsets].sort((x, y) => x - y);
          const receipts = sorted.map((o) => b.grant(t0 + o));
          const now = t0 + (sorted.at(-1) ?? 0);
          const before = b.available(now);
          for (const v of values) {
            if (receipts.includes(v as number)) continue; // -0 is receipt 0, as % reads it
            expect(() => b.giveBack(v as number)).not.toThrow();
          }
          expect(b.available(now)).toBe(before);
        },
      ),
      { numRuns: 300 },
    );
  });
});
