import { describe, expect, it } from "vitest";
import { main as limiters } from "../examples/limiters";

describe("example: limiters", () => {
  const lines = limiters();

  it("says what is offered: 40 calls a burst, a quota of 20 a second", () => {
    expect(lines[0]).toMatch(/^40 calls offered in each of 4 bursts, one every 2 s, .*quota 20 a second/);
    expect(lines[1]).toBe("calls let through of the 40 in each burst:");
    expect(lines[2]?.split(/ +/)).toEqual(["burst", "bucket", "sliding", "period"]);
  });

  it("prints the burst table: the bucket spends its burst plus one, the window holds twenty, the period passes forty", () => {
    const rows = lines.slice(3).map((l) => l.split(/ {2,}/));
    expect(rows).toEqual([0, 1, 2, 3].map((k) => [`burst ${k}`, "21", "20", "40"]));
  });
});
