// Bad input: a clear error at construction, and documented, harmless behaviour on the hot path.
import { describe, expect, it } from "vitest";
import { Breaker, sre } from "@tideward/breaker";
import type { Sre } from "@tideward/breaker";
import { feed, refuse } from "./helpers";

describe("the policy", () => {
  it("is the preset when nothing is given, and the preset is frozen", () => {
    expect(new Breaker().policy).toEqual({
      k: 1.5,
      floor: 1.1,
      protection: 5,
      probe: 1_000,
      size: 40,
      window: 10_000,
      halfOpen: false,
    });
    expect(sre).toEqual(new Breaker().policy);
    expect(Object.isFrozen(sre)).toBe(true);
  });

  it("lays the given fields over the preset; an undefined field keeps the preset's", () => {
    const b = new Breaker({ k: 2, size: 4, protection: undefined });
    expect(b.policy).toEqual({ ...sre, k: 2, size: 4 });
    expect(new Breaker({ probe: Infinity }).policy.probe).toBe(Infinity);
    expect(new Breaker({ k: 1.1 }).policy.k).toBe(1.1); // k may equal floor
  });

  it.each<[Partial<Sre>, RegExp]>([
    [{ k: 1 }, /^Sre k must be at least floor \(1\.1\), got 1$/],
    [{ k: 2, floor: 3 }, /^Sre k must be at least floor \(3\), got 2$/],
    [{ k: Number.NaN }, /^Sre k must be a finite number, got NaN$/],
    [{ floor: 0 }, /^Sre floor must be above 0, got 0$/],
    [{ floor: -1 }, /^Sre floor must be above 0, got -1$/],
    [{ protection: -1 }, /^Sre protection must be 0 or more, got -1$/],
    [{ protection: Infinity }, /^Sre protection must be a finite number, got Infinity$/],
    [{ probe: 0 }, /^Sre probe \(ms\) must be above 0, got 0$/],
    [{ probe: Number.NaN }, /^Sre probe \(ms\) must be a finite number, got NaN$/],
    [{ probe: -Infinity }, /^Sre probe \(ms\) must be a finite number, got -Infinity$/],
    [{ size: 0 }, /^Sre size must be 1 or more, got 0$/],
    [{ size: 2.5 }, /^Sre size must be a whole number, got 2\.5$/],
    [{ size: Number.NaN }, /^Sre size must be a finite number, got NaN$/],
    [{ window: 0 }, /^Sre window \(ms\) must be above 0, got 0$/],
    [{ window: Number.NaN }, /^Sre window \(ms\) must be a finite number, got NaN$/],
    [{ window: -10 }, /^Sre window \(ms\) must be above 0, got -10$/],
  ])("rejects %o with a RangeError naming the field and the value", (policy, message) => {
    expect(() => new Breaker(policy)).toThrow(RangeError);
    expect(() => new Breaker(policy)).toThrow(message);
  });

  it("rejects a field that is not a number with a TypeError", () => {
    const policy = { size: "40" } as unknown as Partial<Sre>;
    expect(() => new Breaker(policy)).toThrow(TypeError);
    expect(() => new Breaker(policy)).toThrow(/^Sre size must be a number, got string "40"$/);
  });

  it("rejects a start that is not a finite reading", () => {
    expect(() => new Breaker({}, Number.NaN)).toThrow(/^Breaker now must be a finite number, got NaN$/);
    expect(() => new Breaker({}, Infinity)).toThrow(RangeError);
  });
});

/** 20 failures at 0: a drop of 15/21 with nothing to scale it. */
function failing(): Breaker {
  const b = new Breaker();
  feed(b, 0, 0, 20);
  return b;
}

describe("the hot path", () => {
  it("treats a clock that steps back as standing still", () => {
    const b = failing();
    feed(b, 5_000, 0, 1); // the breaker now stands at 5 s
    expect(refuse(b, 100, 3)).toBe(3); // recorded at 5 s, not at 100 ms
    // At 10.1 s the failures of 0 ms have gone but those recorded at 5 s remain: 1 + 3 drops.
    expect(b.ratio(10_100)).toBe(0);
    const c = failing();
    feed(c, 5_000, 0, 10);
    refuse(c, 100, 3);
    // 10 failures and 3 drops at 5 s: (13 − 5)/14 once the first 20 have aged out.
    expect(c.ratio(10_100)).toBeCloseTo(8 / 14, 12);
    // Reading at an earlier now reads where the breaker stands, and leaves it there.
    expect(c.ratio(0)).toBe(c.ratio(5_000));
  });

  it("treats a NaN or infinite now as standing still, in allow, in a settle and in ratio", () => {
    const b = failing();
    const before = b.ratio(0);
    expect(b.ratio(Number.NaN)).toBe(before);
    expect(b.ratio(Infinity)).toBe(before);
    expect(b.ratio(-Infinity)).toBe(before);
    // A refusal at NaN counts at the breaker's instant (0): one more drop in the same bucket.
    expect(b.allow(Number.NaN, 0)).toBeUndefined();
    expect(b.ratio(0)).toBeCloseTo(16 / 22, 12);
    const permit = b.allow(Infinity, 0.999);
    permit?.fail(Number.NaN);
    expect(b.ratio(0)).toBeCloseTo(17 / 23, 12);
    // Nothing was poisoned: time still moves on, and the window still ages out.
    expect(b.ratio(10_000)).toBe(0);
    expect(b.allow(10_000, 0)).toBeDefined();
  });

  it("counts a NaN roll or one below 0 as 0: refused whenever anything is refused", () => {
    const b = failing();
    expect(b.allow(0, Number.NaN)).toBeUndefined();
    expect(b.allow(0, -3)).toBeUndefined();
    // With nothing to refuse, a NaN roll goes through like any other.
    expect(new Breaker().allow(0, Number.NaN)).toBeDefined();
  });

  it("never refuses a roll of 1 or more: the drop fraction is always under 1", () => {
    const b = new Breaker();
    feed(b, 0, 0, 10_000);
    expect(b.ratio(0)).toBeGreaterThan(0.999);
    expect(b.allow(0, 1)).toBeDefined();
    expect(b.allow(0, 7)).toBeDefined();
  });

  it("still lets a probe through whatever the roll", () => {
    const b = failing();
    expect(b.allow(999, Number.NaN)).toBeUndefined();
    expect(b.allow(1_000, Number.NaN)).toBeDefined(); // a second since the last call let through
    expect(b.allow(1_001, Number.NaN)).toBeUndefined();
  });

  it("copes with huge gaps in O(size): a century later the window is simply empty", () => {
    const b = failing();
    const century = 100 * 365.25 * 24 * 3_600_000;
    expect(b.ratio(century)).toBe(0);
    expect(b.allow(century, 0)).toBeDefined();
    feed(b, century, 0, 6); // the permit above was never settled, so it counts for nothing
    expect(b.ratio(century)).toBeCloseTo(1 / 7, 12);
  });
});
