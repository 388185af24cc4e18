import { describe, expect, it } from "vitest";
import { Shedder, Ticket } from "@tideward/shedder";
import type { Shed } from "@tideward/shedder";
import { burst, drive, steady } from "./drive";

describe("Shedder: bad policy is a clear error at construction", () => {
  it.each<[Partial<Shed>, ErrorConstructor, RegExp]>([
    [{ size: 0 }, RangeError, /^Shed size must be 1 or more, got 0$/],
    [{ size: 2.5 }, RangeError, /^Shed size must be a whole number, got 2.5$/],
    [{ size: Number.NaN }, RangeError, /^Shed size must be a finite number, got NaN$/],
    [{ window: 0 }, RangeError, /^Shed window \(ms\) must be above 0, got 0$/],
    [{ window: Infinity }, RangeError, /^Shed window \(ms\) must be a finite number, got Infinity$/],
    [{ cpu: -1 }, RangeError, /^Shed cpu \(thousandths\) must be 0 or more and under 1000, got -1$/],
    [{ cpu: 1_000 }, RangeError, /^Shed cpu \(thousandths\) must be 0 or more and under 1000, got 1000$/],
    [{ cpu: Number.NaN }, RangeError, /^Shed cpu \(thousandths\) must be a finite number, got NaN$/],
    [{ latency: -1 }, RangeError, /^Shed latency \(ms\) must be 0 or more, got -1$/],
    [{ beta: 1 }, RangeError, /^Shed beta must be 0 or more and under 1, got 1$/],
    [{ beta: -0.1 }, RangeError, /^Shed beta must be 0 or more and under 1, got -0.1$/],
    [{ cool: -5 }, RangeError, /^Shed cool \(ms\) must be 0 or more, got -5$/],
    [{ floor: 1.5 }, RangeError, /^Shed floor must be between 0 and 1, got 1.5$/],
    [{ floor: -0.1 }, RangeError, /^Shed floor must be between 0 and 1, got -0.1$/],
    [{ cpu: "900" as unknown as number }, TypeError, /^Shed cpu \(thousandths\) must be a number, got string "900"$/],
    [
      { threshold: 800 } as unknown as Partial<Shed>,
      TypeError,
      /^Shedder has no option "threshold"; its options are "size", "window", "cpu"/,
    ],
  ])("%o", (policy, type, message) => {
    expect(() => new Shedder(policy)).toThrow(type);
    expect(() => new Shedder(policy)).toThrow(message);
  });

  it("rejects a policy that is not an object, and a clock reading that is not finite", () => {
    expect(() => new Shedder(null as unknown as Partial<Shed>)).toThrow(/^Shedder policy must be an object, got null$/);
    expect(() => new Shedder(900 as unknown as Partial<Shed>)).toThrow(TypeError);
    expect(() => new Shedder({}, Number.NaN)).toThrow(/^Shedder now \(ms\) must be a finite number, got NaN$/);
  });

  it("accepts the edges of every range", () => {
    const edge = new Shedder({ size: 1, window: 0.01, cpu: 0, latency: 0, beta: 0, cool: 0, floor: 0 });
    expect(edge.policy.cpu).toBe(0);
    expect(new Shedder({ cpu: 999.9, floor: 1 }).policy.floor).toBe(1);
  });
});

describe("Shedder: the hot path clamps rather than throws", () => {
  // The same warmed state (maxFlight 5, four in flight, average ≈ 4), asked with different cpu.
  function decisions(cpu: number): number {
    const s = new Shedder({}, 0);
    const run = drive(s, steady(0, 1_000, 10, 0, 50), 1_000);
    return drive(s, burst(1_000, 10, cpu), 1_000, run.pending).admitted;
  }

  it("reads NaN and negative cpu as 0 (never sheds on a broken signal), over 1000 as 1000", () => {
    expect(decisions(950)).toBe(0); // the control: hot and full refuses
    expect(decisions(Number.NaN)).toBe(10);
    expect(decisions(-50)).toBe(10);
    expect(decisions(-Infinity)).toBe(10);
    expect(decisions(Infinity)).toBe(0);
    const s = new Shedder({}, 0);
    expect(s.capacity(0, 5_000)).toBe(s.capacity(0, 1_000));
    expect(s.capacity(0, Number.NaN)).toBe(s.capacity(0, 0));
  });

  it("treats a clock stepping back, or a NaN or infinite now, as standing still", () => {
    const s = new Shedder({}, 1_000);
    const a = s.allow(500, 0); // before the shedder was made: stands at 1000
    expect(a?.start).toBe(1_000);
    a?.pass(900); // finished "before" it started: a response time of 0, not −100
    const b = s.allow(Number.NaN, 0);
    expect(b?.start).toBe(1_000);
    b?.pass(Infinity);
    expect(s.allow(Infinity, 0)?.start).toBe(1_000);
    // Both passes went into the bucket at 1000 with 0 ms: read once it has finished.
    const c = s.allow(1_150, 0);
    expect(c?.start).toBe(1_150);
    expect(s.capacity(1_100, 0)).toBe(1); // 2 per 100 ms × 0 ms → raised to 1
    expect(s.flying).toBe(2);
  });
});

describe("Ticket", () => {
  it("settles once: a second pass or fail, in either order, changes nothing", () => {
    const s = new Shedder({}, 0);
    const t = s.allow(0, 0);
    expect(t).toBeInstanceOf(Ticket);
    expect([s.flying, t?.settled]).toEqual([1, false]);
    t?.pass(10);
    expect([s.flying, t?.settled]).toEqual([0, true]);
    const average = s.average;
    t?.pass(20);
    t?.fail();
    expect([s.flying, s.average]).toEqual([0, average]);
    // A failed ticket records no pass: capacity stays at its no-history 1.
    const u = s.allow(30, 0);
    u?.fail();
    u?.pass(40);
    expect(s.flying).toBe(0);
    expect(s.capacity(100, 0)).toBe(1); // the one pass, 10 ms in bucket 0: 0.01 × 10 → 1
  });

  it("a fail says nothing about capacity; a pass counts its response time", () => {
    const failing = new Shedder({}, 0);
    const passing = new Shedder({}, 0);
    const f = Array.from({ length: 50 }, (_, i) => failing.allow(i, 0));
    const p = Array.from({ length: 50 }, (_, i) => passing.allow(i, 0));
    f.forEach((t) => t?.fail());
    p.forEach((t, i) => t?.pass(i + 60));
    // passing: bucket 0 holds passes finishing at 60…99 (40 of 60 ms), bucket 1 the other 10.
    expect(failing.capacity(200, 0)).toBe(1);
    expect(passing.capacity(200, 0)).toBeCloseTo((40 / 100) * 60, 12);
  });
});
