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

  it("CSV: every series of the result is a column, in the result's order, goodput, wasted and dropped included", () => {
    // Work served and dropped for callers who had gone, so those columns hold something.
    const late = (abandoned: "serve" | "drop") =>
      simulate({
        duration: 5_000,
        step: 1_000,
        traffic: traffic.constant({ rate: 50 }),
        backend: { workers: 1, latency: 30, abandoned },
        client: { deadline: 100 },
      });
    for (const r of [late("serve"), late("drop")]) {
      const lines = toCsv(r).trimEnd().split("\n");
      const header = lines[0].split(",");
      const names = Object.keys(r.series).filter((k) => k !== "refusedBy");
      expect(header).toEqual(names);
      for (const name of ["goodput", "wasted", "dropped"] as const)
        expect(lines.slice(1).map((l) => Number(l.split(",")[header.indexOf(name)]))).toEqual(r.series[name]);
    }
    expect(late("serve").series.wasted.some((n) => n > 0)).toBe(true);
    expect(late("drop").series.dropped.some((n) => n > 0)).toBe(true);
  });

  it("JSON: parses back to the same result", () => {
    expect(JSON.parse(toJson(run, 2))).toEqual(run);
    expect(toJson(run)).toBe(JSON.stringify(run));
  });

  it("refuses what is not a run's result, naming the function and what it got, as every entry point does", () => {
    for (const [bad, shown] of [
      [null, "null"],
      [undefined, "undefined"],
      [5, "5"],
      ["run", '"run"'],
      [[], "[object Array]"],
    ] as const) {
      expect(() => toCsv(bad as never)).toThrow(
        new TypeError(`toCsv run must be a run's result (what simulate returns), got ${shown}`),
      );
      expect(() => toJson(bad as never)).toThrow(
        new TypeError(`toJson run must be a run's result (what simulate returns), got ${shown}`),
      );
    }
    expect(() => toCsv({} as never)).toThrow(new TypeError("toCsv run series must be a run's series, got undefined"));
    const { goodput: _, ...short } = run.series;
    expect(() => toCsv({ ...run, series: short } as never)).toThrow(
      new TypeError("toCsv run series goodput must be an array, got undefined"),
    );
    expect(() => toCsv({ ...run, series: { ...run.series, refusedBy: { x: 1 } } } as never)).toThrow(
      new TypeError('toCsv run series refusedBy "x" must be an array, got 1'),
    );
    expect(() => toJson(run, -1)).toThrow(new RangeError("toJson indent must be 0 or more, got -1"));
    expect(() => toJson(run, null as never)).toThrow(new TypeError("toJson indent must be a number, got object null"));
  });
});
