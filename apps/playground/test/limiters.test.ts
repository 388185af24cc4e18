import { describe, expect, it } from "vitest";
import { main as limiters } from "../examples/limiters";

describe("example: limiters", () => {
  it("prints the seed's table: the bucket spends its burst plus one, the window holds twenty, the period passes forty", () => {
    expect(limiters()).toEqual([
      "burst  bucket  sliding  period",
      "0      21       20      40",
      "1      21       20      40",
      "2      21       20      40",
      "3      21       20      40",
    ]);
  });
});
