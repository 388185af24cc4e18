// Invalid configuration throws at construction naming the field and the value; a bad cost or a
// clock reading that is not a number of milliseconds throws on the hot path with the same shape.
import { describe, expect, it } from "vitest";
import { Bucket, Gate, Gcra, Period, Sliding } from "@tideward/limiters";

const nonPositive = [0, -1, -0.5, NaN, Infinity, -Infinity];

describe("bad input at construction", () => {
  it.each(nonPositive)("rejects a rate of %s", (rate) => {
    expect(() => new Bucket(rate)).toThrow(RangeError);
    expect(() => new Bucket(rate)).toThrow(/^Bucket rate \(tokens per second\) must be/);
    expect(() => new Gcra(rate)).toThrow(/^Gcra rate \(per second\) must be/);
  });

  it.each(nonPositive)("rejects a burst of %s", (burst) => {
    expect(() => new Bucket(10, { burst })).toThrow(/^Bucket burst \(tokens\) must be/);
    expect(() => new Gcra(10, { burst })).toThrow(/^Gcra burst must be/);
  });

  it("names the value it got", () => {
    expect(() => new Bucket(-1)).toThrow("Bucket rate (tokens per second) must be above 0, got -1");
    expect(() => new Sliding(2.5, 1_000)).toThrow("Sliding quota must be a whole number, got 2.5");
    expect(() => new Period(0, 1_000)).toThrow("Period quota must be 1 or more, got 0");
    expect(() => new Period(1, NaN)).toThrow("Period period (ms) must be a finite number, got NaN");
    expect(() => new Gate(1.5)).toThrow("Gate limit must be a whole number, got 1.5");
  });

  it.each([0, -3, 1.5, NaN, Infinity, -Infinity])("rejects a quota of %s", (quota) => {
    expect(() => new Sliding(quota, 1_000)).toThrow(RangeError);
    expect(() => new Period(quota, 1_000)).toThrow(RangeError);
  });

  it.each(nonPositive)("rejects a window or period of %s ms", (span) => {
    expect(() => new Sliding(5, span)).toThrow(/^Sliding window \(ms\) must be/);
    expect(() => new Period(5, span)).toThrow(/^Period period \(ms\) must be/);
  });

  it("rejects a gate limit that is NaN, -Infinity or a fraction, and a starting clock that is not finite", () => {
    expect(() => new Gate(NaN)).toThrow(RangeError);
    expect(() => new Gate(-Infinity)).toThrow(RangeError);
    expect(() => new Gate(0.5)).toThrow(RangeError);
    expect(() => new Bucket(1, { now: NaN })).toThrow("Bucket now must be a finite number of milliseconds, got NaN");
  });

  it("rejects what is not a number at all with a TypeError", () => {
    expect(() => new Bucket("10" as unknown as number)).toThrow(TypeError);
    expect(() => new Sliding(5, "1s" as unknown as number)).toThrow(TypeError);
    expect(() => new Period(5, 1_000, { align: "yes" as unknown as boolean })).toThrow(TypeError);
  });
});

describe("bad input on the hot path", () => {
  it.each([-1, -0.001, NaN])("a cost of %s throws a RangeError naming the method", (n) => {
    expect(() => new Bucket(10).take(0, n)).toThrow(/^Bucket\.take n must be/);
    expect(() => new Bucket(10).peek(0, n)).toThrow(/^Bucket\.peek n must be/);
    expect(() => new Bucket(10).next(0, n)).toThrow(/^Bucket\.next n must be/);
    expect(() => new Gcra(10).take(0, n)).toThrow(/^Gcra\.take n must be/);
    expect(() => new Gcra(10).peek(0, n)).toThrow(/^Gcra\.peek n must be/);
    expect(() => new Gcra(10).next(0, n)).toThrow(/^Gcra\.next n must be/);
  });

  it("a cost above the burst is refused, not thrown, and next says never (Infinity)", () => {
    const b = new Bucket(10);
    const g = new Gcra(10);
    for (const n of [10.5, 11, 1e9, Infinity]) {
      expect([b.take(0, n), b.peek(0, n), b.next(0, n)]).toEqual([false, false, Infinity]);
      expect([g.take(0, n), g.peek(0, n), g.next(0, n)]).toEqual([false, false, Infinity]);
    }
    expect(b.tokens(0)).toBe(10);
    expect(g.remaining(0)).toBe(10);
  });

  it.each([NaN, Infinity, -Infinity])("a clock reading of %s throws and changes nothing", (now) => {
    const b = new Bucket(10);
    const s = new Sliding(1, 1_000);
    const p = new Period(1, 1_000);
    const g = new Gcra(10);
    const calls: (() => unknown)[] = [
      () => b.take(now),
      () => b.peek(now),
      () => b.next(now),
      () => b.tokens(now),
      () => b.rateLimit(now),
      () => s.take(now),
      () => s.peek(now),
      () => s.left(now),
      () => s.next(now),
      () => s.rateLimit(now),
      () => p.take(now),
      () => p.peek(now),
      () => p.left(now),
      () => p.next(now),
      () => p.rateLimit(now),
      () => g.take(now),
      () => g.peek(now),
      () => g.next(now),
      () => g.remaining(now),
      () => g.rateLimit(now),
    ];
    const thrown = calls.filter((call) => {
      try {
        call();
        return false;
      } catch (e) {
        return e instanceof RangeError && /now must be a finite number/.test(e.message);
      }
    });
    expect(thrown.length).toBe(calls.length);
    expect([b.tokens(0), s.left(0), p.left(0), g.remaining(0)]).toEqual([10, 1, 1, 10]);
  });
});
