import { describe, expect, it } from "vitest";
import { Backoff, Jitter, RetryBudget } from "@tideward/backoff";
import type { BackoffPolicy, Budget } from "@tideward/backoff";

describe("Backoff rejects bad input, naming the field and the value", () => {
  it("attempts 0, negative, fractional or NaN", () => {
    expect(() => new Backoff({ attempts: 0 })).toThrow(new RangeError("Backoff attempts must be 1 or more, got 0"));
    expect(() => new Backoff({ attempts: -2 })).toThrow(/Backoff attempts must be 1 or more, got -2/);
    expect(() => new Backoff({ attempts: 2.5 })).toThrow(/Backoff attempts must be a whole number, got 2.5/);
    expect(() => new Backoff({ attempts: Number.NaN })).toThrow(/Backoff attempts must be a finite number, got NaN/);
  });

  it("a negative base", () => {
    expect(() => new Backoff({ base: -1 })).toThrow(new RangeError("Backoff base (ms) must be 0 or more, got -1"));
  });

  it("a factor under 1", () => {
    expect(() => new Backoff({ factor: 0.5 })).toThrow(
      new RangeError("Backoff factor must be 1 or more (1 is a constant wait), got 0.5"),
    );
    expect(() => new Backoff({ factor: 0 })).toThrow(RangeError);
    expect(() => new Backoff({ factor: -2 })).toThrow(RangeError);
  });

  it("a cap under the base, or an infinite cap", () => {
    expect(() => new Backoff({ base: 500, cap: 400 })).toThrow(
      new RangeError("Backoff cap (ms) must be at least the base (500), got 400"),
    );
    expect(() => new Backoff({ cap: Infinity })).toThrow(/Backoff cap \(ms\) must be a finite number, got Infinity/);
    expect(new Backoff({ base: 400, cap: 400 }).schedule([])).toEqual([320, 320]);
  });

  it("NaN in every numeric field, the spread fraction included", () => {
    const nan = Number.NaN;
    const cases: [Partial<BackoffPolicy>, RegExp][] = [
      [{ base: nan }, /Backoff base \(ms\) must be a finite number, got NaN/],
      [{ factor: nan }, /Backoff factor must be a finite number, got NaN/],
      [{ cap: nan }, /Backoff cap \(ms\) must be a finite number, got NaN/],
      [{ attempts: nan }, /Backoff attempts must be a finite number, got NaN/],
      [
        { jitter: { kind: "spread", fraction: nan } },
        /Backoff jitter spread fraction must be a finite number, got NaN/,
      ],
    ];
    let threw = 0;
    for (const [policy, message] of cases) {
      try {
        new Backoff(policy);
      } catch (e) {
        if (e instanceof RangeError && message.test(e.message)) threw++;
      }
    }
    expect(threw).toBe(cases.length);
    expect(() => Jitter.spread(nan)).toThrow(/Jitter spread fraction must be a finite number, got NaN/);
  });

  it("holds a spread fraction of 2 to 1, and -1 to 0", () => {
    expect(Jitter.spread(2)).toEqual({ kind: "spread", fraction: 1 });
    expect(Jitter.spread(-1)).toEqual({ kind: "spread", fraction: 0 });
    const wide = new Backoff({ jitter: { kind: "spread", fraction: 2 } });
    expect(wide.jitter).toEqual({ kind: "spread", fraction: 1 });
    expect(wide.delay(1, { random: 0 })).toBe(0); // never below zero, as a fraction of 2 would give
    expect(wide.delay(1, { random: 0.5 })).toBe(100);
  });

  it("a field of the wrong type, and a jitter that is not one of the five", () => {
    expect(() => new Backoff({ base: "100" as unknown as number })).toThrow(
      new TypeError('Backoff base (ms) must be a number, got string "100"'),
    );
    expect(() => new Backoff({ jitter: { kind: "wobbly" } as unknown as Jitter })).toThrow(TypeError);
    expect(() => new Backoff({ jitter: { kind: "wobbly" } as unknown as Jitter })).toThrow(
      /Backoff jitter must be one of .*, got "wobbly"/,
    );
    expect(() => new Backoff({ jitter: "full" as unknown as Jitter })).toThrow(/got "full"/);
  });

  it("accepts a jitter written as data, and keeps the canonical frozen one", () => {
    const b = new Backoff({ jitter: { kind: "full" } });
    expect(b.jitter).toBe(Jitter.full);
    expect(Object.isFrozen(Jitter.spread(0.3))).toBe(true);
  });
});

describe("RetryBudget rejects bad input, naming the field and the value", () => {
  it("NaN, negative, zero or fractional where each is wrong", () => {
    const cases: [Partial<Budget>, string][] = [
      [{ ratio: Number.NaN }, "RetryBudget ratio must be a finite number, got NaN"],
      [{ ratio: -0.1 }, "RetryBudget ratio must be 0 or more, got -0.1"],
      [{ minPerSecond: -1 }, "RetryBudget minPerSecond must be 0 or more, got -1"],
      [{ minPerSecond: Number.NaN }, "RetryBudget minPerSecond must be a finite number, got NaN"],
      [{ window: 0 }, "RetryBudget window (ms) must be above 0, got 0"],
      [{ window: Number.NaN }, "RetryBudget window (ms) must be a finite number, got NaN"],
      [{ buckets: 0 }, "RetryBudget buckets must be 1 or more, got 0"],
      [{ buckets: 2.5 }, "RetryBudget buckets must be a whole number, got 2.5"],
    ];
    const messages = cases.map(([policy]) => {
      try {
        new RetryBudget(policy);
        return "did not throw";
      } catch (e) {
        return e instanceof RangeError ? e.message : `not a RangeError: ${String(e)}`;
      }
    });
    expect(messages).toEqual(cases.map(([, message]) => message));
    expect(() => new RetryBudget({}, Number.NaN)).toThrow(/RetryBudget now must be a finite number, got NaN/);
  });
});
