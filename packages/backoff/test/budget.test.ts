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
