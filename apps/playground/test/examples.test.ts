import { describe, expect, it } from "vitest";
import { main as time } from "../examples/time";

describe("example: time", () => {
  it("prints spans that read back, and a budget that runs down to zero", () => {
    const lines = time();
    expect(lines.slice(0, 3)).toEqual([
      "250ms  = 250 ms = 250ms",
      "1.5s   = 1500 ms = 1.5s",
      "1h30m  = 5400000 ms = 1h30m",
    ]);
    const left = lines.slice(3).map((l) => /, (.+) of the budget left$/.exec(l)?.[1]);
    expect(left.length).toBeGreaterThanOrEqual(3);
    expect(left.at(-1)).toBe("0ms");
    expect(new Set(left.slice(0, -1)).has("0ms")).toBe(false);
  });
});
