import { describe, expect, it } from "vitest";
import { Deadline } from "@tideward/time";

describe("Deadline", () => {
  it("expires when its budget is spent", () => {
    const d = Deadline.start(1_000, 5_000);
    expect(d.expired(5_000)).toBe(false);
    expect(d.expired(5_999)).toBe(false);
    expect(d.expired(6_000)).toBe(true);
    expect(d.end).toBe(6_000);
  });

  it("reports what is left, never negative", () => {
    const d = Deadline.start(1_000, 0);
    expect(d.remaining(0)).toBe(1_000);
    expect(d.remaining(250)).toBe(750);
    expect(d.remaining(1_000)).toBe(0);
    expect(d.remaining(99_999)).toBe(0);
  });

  it("answers a remaining time that, added to the reading, reaches the end where end − now falls a float step short", () => {
    // Found at 476 and 1 627 runs of the real-clock property (seeds -513985369 and 918148703): the
    // difference rounded down, the caller's sum fell one step before the end, and a manual clock
    // advanced by what remained took a second step to expire it.
    for (const [started, budget, waited] of [
      [-433.26519144916887, 1_728.94895203694, 4.739561632050027e-8],
      [2_804.205059300323, 464_500.2409553827, 67_806.06781038549],
    ]) {
      const d = Deadline.start(budget, started);
      const now = started + waited;
      expect(d.end - now + now).toBeLessThan(d.end); // the plain difference falls short
      const left = d.remaining(now) as number;
      expect(d.expired(now + left)).toBe(true);
      expect(d.remaining(now + left)).toBe(0);
      expect(left).toBeLessThanOrEqual(budget);
    }
  });

  it("does not grow when the clock steps back before its start", () => {
    const d = Deadline.start(1_000, 500);
    expect(d.remaining(0)).toBe(1_000);
  });

  it.each([0, -5, Infinity])("never expires with a budget of %d", (budget) => {
    const d = Deadline.start(budget, 0);
    expect(d.bounded).toBe(false);
    expect(d.expired(Number.MAX_SAFE_INTEGER)).toBe(false);
    expect(d.remaining(1e12)).toBeUndefined();
    expect(d.end).toBe(Infinity);
  });

  it("rejects a NaN budget or a non-finite start", () => {
    expect(() => Deadline.start(Number.NaN, 0)).toThrow(/Deadline budget .* got NaN/);
    expect(() => Deadline.start(10, Number.NaN)).toThrow(/Deadline start time must be a finite number, got NaN/);
    expect(() => Deadline.start("1s" as unknown as number, 0)).toThrow(
      new TypeError('Deadline budget must be a number of milliseconds (0 or less for none), got string "1s"'),
    );
    expect(() => Deadline.start("5" as unknown as number, 0)).toThrow(TypeError);
  });

  it("counts a broken clock (NaN, or not a number) as expired with nothing left, when it has a budget", () => {
    const d = Deadline.start(1_000, 0);
    expect([d.expired(Number.NaN), d.remaining(Number.NaN)]).toEqual([true, 0]);
    expect([d.expired(Symbol("t") as unknown as number), d.remaining("5" as unknown as number)]).toEqual([true, 0]);
    expect([d.expired(Infinity), d.remaining(Infinity)]).toEqual([true, 0]);
    // Before the start (a clock that stepped back, however far): the whole budget.
    expect([d.expired(-Infinity), d.remaining(-Infinity)]).toEqual([false, 1_000]);
    const none = Deadline.start(0, 0);
    expect([none.expired(Number.NaN), none.remaining(Number.NaN)]).toEqual([false, undefined]);
  });

  it("never expires when its end passes the largest number", () => {
    const d = Deadline.start(1e308, 1e308);
    expect([d.bounded, d.end, d.expired(1e308), d.remaining(0)]).toEqual([false, Infinity, false, undefined]);
  });
});
