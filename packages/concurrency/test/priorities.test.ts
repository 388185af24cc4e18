import { describe, expect, it } from "vitest";
import { Priorities, criticality } from "@tideward/concurrency";

describe("Priorities: levels and names", () => {
  it("one level by default: every priority is level 0, which may fill the whole limit", () => {
    const one = new Priorities();
    expect([one.count, one.names, one.shares, one.fallback]).toEqual([1, ["0"], [1], 0]);
    for (const p of [0, 1, -1, 0.5, Number.NaN, "x", undefined]) expect(one.level(p)).toBe(0);
    expect(one.places(0, 37)).toBe(37);
  });

  it("numbers each level when given a count, and names it by its number as text", () => {
    const three = new Priorities({ levels: 3 });
    expect(three.names).toEqual(["0", "1", "2"]);
    expect([three.level(0), three.level(1), three.level(2)]).toEqual([0, 1, 2]);
    expect([three.level("0"), three.level("2")]).toEqual([0, 2]);
    // An equal share each: level 1 may fill 2/3, level 2 a third.
    expect(three.shares).toEqual([1 / 3, 1 / 3, 1 / 3]);
    expect([three.places(0, 9), three.places(1, 9), three.places(2, 9)]).toEqual([9, 6, 3]);
  });

  it("resolves names, and counts whatever is not a level as the least important", () => {
    expect(criticality.names).toEqual(["critical_plus", "critical", "sheddable_plus", "sheddable"]);
    expect(criticality.level("critical_plus")).toBe(0);
    expect(criticality.level("sheddable")).toBe(3);
    expect(criticality.level(2)).toBe(2);
    // Never more important by mistake: each of these is the least important level.
    for (const odd of [4, -1, 1.5, Number.NaN, Infinity, -Infinity, 2 ** 32 + 1, "Critical", "", "0"])
      expect(criticality.level(odd)).toBe(3);
    for (const odd of [Symbol("p"), 1n, {}, null, [0], true])
      expect(criticality.level(odd as unknown as number)).toBe(3);
    expect(Object.is(criticality.level(-0), 0)).toBe(true);
  });

  it("resolves names that an object would inherit only when they are levels", () => {
    const odd = new Priorities({ levels: ["__proto__", "constructor", "toString"] });
    expect([odd.level("__proto__"), odd.level("constructor"), odd.level("toString")]).toEqual([0, 1, 2]);
    const plain = new Priorities({ levels: ["a", "b"] });
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"])
      expect(plain.level(name)).toBe(1);
    expect(new Priorities({ levels: ["a", "__proto__"], fallback: "__proto__" }).fallback).toBe(1);
  });

  it("gives a call that names no priority the fallback level: critical for criticality", () => {
    expect(criticality.fallback).toBe(1);
    expect(criticality.level(undefined)).toBe(1);
    expect(new Priorities({ levels: ["a", "b"], fallback: "b" }).level(undefined)).toBe(1);
    expect(new Priorities({ levels: 4, fallback: 2 }).level(undefined)).toBe(2);
  });
});

describe("Priorities: shares and rooms", () => {
  it("lets level p fill 1 − (the shares of the more important levels) of the limit", () => {
    const rooms = [0, 1, 2, 3].map((l) => criticality.room(l));
    [1, 0.9, 0.8, 0.6].forEach((room, l) => expect(rooms[l]).toBeCloseTo(room, 12));
    expect([0, 1, 2, 3].map((l) => criticality.places(l, 10))).toEqual([10, 9, 8, 6]);
    expect([0, 1, 2, 3].map((l) => criticality.places(l, 20))).toEqual([20, 18, 16, 12]);
    // Rounded down: 0.6 × 7 = 4.2.
    expect(criticality.places(3, 7)).toBe(4);
  });

  it("counts a place whose product falls a rounding error short of it", () => {
    // 0.7 + 0.2 is 0.8999999999999999 in doubles, and 30 times it 26.999999999999996: still
    // 27 places.
    const p = new Priorities({ levels: 3, shares: [0.1, 0.2, 0.7] });
    expect(p.room(1)).toBeLessThan(0.9);
    expect(30 * p.room(1)).toBeLessThan(27);
    expect(p.places(1, 30)).toBe(27);
    expect(p.places(1, 1_000)).toBe(900);
    const four = new Priorities({ levels: 4, shares: [0.1, 0.1, 0.1, 0.7] });
    expect(four.places(2, 10)).toBe(8);
    const thirds = new Priorities({ levels: 3 });
    expect(thirds.places(2, 3)).toBe(1);
    expect(thirds.places(2, 300)).toBe(100);
  });

  it("leaves what the shares do not hold open to every level", () => {
    // 0.2 held for level 0, 0.1 for level 1: the remaining 0.7 belongs to nobody.
    const p = new Priorities({ levels: 3, shares: [0.2, 0.1, 0] });
    expect([p.places(0, 100), p.places(1, 100), p.places(2, 100)]).toEqual([100, 80, 70]);
  });

  it("shares one refusal object per level and reason, frozen", () => {
    const a = criticality.refusal(3, "reserved");
    expect(a).toEqual({ ok: false, reason: "reserved", level: 3 });
    expect(criticality.refusal(3, "reserved")).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(criticality.refusal(0, "limit")).toEqual({ ok: false, reason: "limit", level: 0 });
    expect(Object.isFrozen(criticality)).toBe(true);
    expect(Object.isFrozen(criticality.names)).toBe(true);
  });
});
