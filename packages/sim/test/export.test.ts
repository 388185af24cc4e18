import { describe, expect, it } from "vitest";
import { failures, policy, simulate, toCsv, toJson, traffic } from "@tideward/sim";

describe("export", () => {
  const run = simulate({
    duration: 5_000,
    step: 1_000,
    traffic: traffic.constant({ rate: 20 }),
    backend: { failures: failures.outage({ from: 2_000, to: 3_000 }) },
    policies: [policy.bucket(10, { name: 'bucket, "strict"' })],
  });

  it("CSV: one row a bucket, refusals by reason as their own (quoted) column, numbers as recorded", () => {
    const csv = toCsv(run);
    const lines = csv.trimEnd().split("\n");
    expect(lines).toHaveLength(6);
    const header = lines[0].split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/);
    expect(header.slice(0, 8)).toEqual([
      "t",
      "offered",
      "attempts",
      "retries",
      "hedges",
      "admitted",
      "refused",
      '"refused:bucket, ""strict"""',
    ]);
    const col = (name: string) =>
      lines.slice(1).map((l) => l.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)[header.indexOf(name)]);
    expect(col("t")).toEqual(["0", "1000", "2000", "3000", "4000"]);
    expect(col("offered").map(Number)).toEqual(run.series.offered);
    expect(col("refused").map(Number)).toEqual(run.series.refused);
    // The outage second has no success, so no latency: an empty cell.
    expect(col("p99")[2]).toBe("");
    expect(Number(col("p99")[0])).toBeCloseTo(run.series.p99[0] as number, 9);
  });

  it("JSON: parses back to the same result", () => {
    expect(JSON.parse(toJson(run, 2))).toEqual(run);
    expect(toJson(run)).toBe(JSON.stringify(run));
  });
});
