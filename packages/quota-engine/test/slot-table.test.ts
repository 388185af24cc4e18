import { describe, expect, it } from "vitest";
import { QuotaKey, limitSpec } from "@tideward/quota-engine";
import { BUCKET } from "../src/kinds";
import { readSpec } from "../src/limit";
import type { LimitSpec } from "../src/limit";
import { Rule } from "../src/rule";
import { SlotTable } from "../src/table";

// The slot a key remembers is trusted without reading the table while the table's token and stamp
// are those it was taken at; freeing any slot moves the stamp on. These pin the two ways that
// trust could be misplaced: a stamp that comes round again, and another table's equal stamp.
const rule = new Rule(readSpec(limitSpec({ name: "r", capacity: 3 })) as unknown as LimitSpec);

describe("a table's stamp", () => {
  it("coming round again does not make an old hint trusted: the table has a new token by then", () => {
    const table = new SlotTable(BUCKET, rule, 2);
    const a = new QuotaKey("t", "a", "r");
    const b = new QuotaKey("t", "b", "r");
    const c = new QuotaKey("t", "c", "r");
    expect(table.add(a)).toBe(0); // a remembers slot 0 at stamp 0
    expect(table.add(b)).toBe(1);
    table.remove(1); // stamp 1
    table.remove(0); // stamp 2, which is the limit: back to 0, with a new token
    expect(table.add(c)).toBe(0); // c takes a's slot, freed last
    // a's hint names slot 0 at stamp 0, the table's stamp again: trusted, it would be c's state.
    expect(table.find(a)).toBe(-1);
    expect(table.find(c)).toBe(0);
    expect(table.find(b)).toBe(-1);
  });

  it("of another table, equal to this one's, does not make a hint trusted here", () => {
    const one = new SlotTable(BUCKET, rule);
    const two = new SlotTable(BUCKET, rule);
    const a = new QuotaKey("t", "a", "r");
    const b = new QuotaKey("t", "b", "r");
    expect(two.add(b)).toBe(0);
    expect(one.add(a)).toBe(0); // a remembers slot 0 of `one`, at stamp 0, as `two` stands too
    expect(two.find(a)).toBe(-1);
    expect(two.find(b)).toBe(0);
    expect(one.find(a)).toBe(0);
  });

  it("moves on with every slot freed, so a hint from before is read again before it is trusted", () => {
    const table = new SlotTable(BUCKET, rule);
    const keys = Array.from({ length: 6 }, (_, i) => new QuotaKey("t", `k${i}`, "r"));
    for (const k of keys) table.add(k);
    // Free every other slot and give each to a new key: the old hints name slots now held by others.
    for (let slot = 0; slot < 6; slot += 2) table.remove(slot);
    const later = Array.from({ length: 3 }, (_, i) => new QuotaKey("t", `n${i}`, "r"));
    const given = later.map((k) => table.add(k));
    expect(given.sort()).toEqual([0, 2, 4]);
    keys.forEach((k, i) => expect(table.find(k)).toBe(i % 2 === 0 ? -1 : i));
    later.forEach((k) => expect(table.find(k)).toBeGreaterThanOrEqual(0));
  });
});
