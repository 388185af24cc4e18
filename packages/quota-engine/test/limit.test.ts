import { describe, expect, it } from "vitest";
import { QuotaEngine, limitSpec, perMinute, perSecond } from "@tideward/quota-engine";
import type { LimitSpec } from "@tideward/quota-engine";

describe("LimitSpec", () => {
  it("defaults refill and burst to the capacity, the window to a second, align to false", () => {
    expect(limitSpec({ name: "x", capacity: 7 })).toEqual({
      name: "x",
      capacity: 7,
      refill: 7,
      window: 1_000,
      burst: 7,
      align: false,
    });
  });

  it("perSecond and perMinute give the same rate to all three algorithms", () => {
    expect(perSecond("s", 10)).toEqual({ name: "s", capacity: 10, refill: 10, window: 1_000, burst: 10, align: false });
    expect(perMinute("m", 60)).toEqual({
      name: "m",
      capacity: 60,
      refill: 60,
      window: 60_000,
      burst: 60,
      align: false,
    });
  });

  it("is frozen", () => {
    expect(Object.isFrozen(perSecond("s", 1))).toBe(true);
  });

  it("refuses invalid fields, naming the field, the limit and the value", () => {
    expect(() => limitSpec({ name: "x", capacity: 0 })).toThrow(
      new RangeError('LimitSpec capacity of "x" must be a whole number of at least 1, got 0'),
    );
    expect(() => limitSpec({ name: "x", capacity: 1.5 })).toThrow(
      'LimitSpec capacity of "x" must be a whole number of at least 1, got 1.5',
    );
    expect(() => limitSpec({ name: "x", capacity: 1, refill: -2 })).toThrow(
      'LimitSpec refill of "x" must be a whole number of at least 1, got -2',
    );
    expect(() => limitSpec({ name: "x", capacity: 1, burst: NaN })).toThrow("got NaN");
    expect(() => limitSpec({ name: "x", capacity: 1, window: 0 })).toThrow(
      'LimitSpec window of "x" must be a finite number of milliseconds above 0, got 0',
    );
    expect(() => limitSpec({ name: "x", capacity: 1, window: Infinity })).toThrow("got Infinity");
    expect(() => limitSpec({ name: "", capacity: 1 })).toThrow("LimitSpec name must be 1 to 256 characters, got 0");
    expect(() => limitSpec({ name: 5 as unknown as string, capacity: 1 })).toThrow(
      new TypeError("LimitSpec name must be a string, got 5"),
    );
    expect(() => perSecond("s", 0)).toThrow(RangeError);
  });
});

describe("addLimit", () => {
  it("adds a limit, which limit() and limits() then return", () => {
    const engine = new QuotaEngine();
    expect(engine.addLimit(perSecond("a", 1))).toEqual({ ok: true });
    expect(engine.addLimit(perMinute("b", 2))).toEqual({ ok: true });
    expect(engine.limit("b")).toEqual(perMinute("b", 2));
    expect(engine.limit("c")).toBeUndefined();
    expect(engine.limits().map((l) => l.name)).toEqual(["a", "b"]);
  });

  it("refuses a duplicate name with a code and a reason, keeping the first", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("a", 1));
    expect(engine.addLimit(perSecond("a", 5))).toEqual({
      ok: false,
      code: "duplicate_limit",
      reason: 'a limit named "a" exists already',
    });
    expect(engine.limit("a")?.capacity).toBe(1);
  });

  it("refuses an invalid plain object with a code and a reason instead of throwing", () => {
    const engine = new QuotaEngine();
    const bad = { name: "x", capacity: 3, refill: 3, window: -1, burst: 3, align: false } satisfies LimitSpec;
    expect(engine.addLimit(bad)).toEqual({
      ok: false,
      code: "invalid_limit",
      reason: 'LimitSpec window of "x" must be a finite number of milliseconds above 0, got -1',
    });
    expect(engine.addLimit(null as unknown as LimitSpec)).toEqual({
      ok: false,
      code: "invalid_limit",
      reason: "LimitSpec must be an object, got null",
    });
    // Fields inherited through the prototype are not read.
    const inherited = Object.create({
      name: "y",
      capacity: 1,
      refill: 1,
      window: 1,
      burst: 1,
      align: false,
    }) as LimitSpec;
    expect(engine.addLimit(inherited).ok).toBe(false);
    expect(engine.limits()).toEqual([]);
  });

  it("copies the spec, so changing the caller's object later changes nothing", () => {
    const engine = new QuotaEngine();
    const spec = { name: "x", capacity: 3, refill: 3, window: 1_000, burst: 3, align: false };
    engine.addLimit(spec);
    spec.capacity = 100;
    expect(engine.limit("x")?.capacity).toBe(3);
  });
});
