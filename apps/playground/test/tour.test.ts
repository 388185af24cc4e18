import { describe, expect, it } from "vitest";
import { main, outage, rising } from "../examples/tour";

const lines = main();
const part = (heading: string): string[] => {
  const start = lines.findIndex((l) => l.startsWith(heading));
  const end = lines.indexOf("", start);
  return lines.slice(start, end < 0 ? undefined : end);
};

describe("example: tour", () => {
  it("shows the three parts in order: breaker, shedder, limiters, each under a heading that says what is offered", () => {
    const headings = lines.filter((l, i) => l !== "" && (i === 0 || lines[i - 1] === ""));
    expect(headings.map((h) => h.split(":")[0])).toEqual([
      "a breaker under an outage",
      "a shedder under rising load",
      "one step through each limiter",
    ]);
    expect(headings[0]).toContain(`${outage.rate} calls a second`);
  });

  describe("a breaker under an outage", () => {
    const rows = part("a breaker under an outage")
      .slice(1, -1)
      .map((l) => {
        const m =
          /^ {2}(\d+)–(\d+) s +backend (up|down): (\d+) succeeded, (\d+) failed, (\d+) refused; refusing (\d+)% at \d+ s$/.exec(
            l,
          );
        if (m === null) throw new Error(`unexpected line: ${l}`);
        return {
          from: Number(m[1]) * 1_000,
          up: m[3] === "up",
          succeeded: Number(m[4]),
          failed: Number(m[5]),
          refused: Number(m[6]),
          refusing: Number(m[7]),
        };
      });

    it("accounts for every call offered, stretch by stretch", () => {
      expect(rows).toHaveLength(outage.end / outage.stretch);
      for (const r of rows) expect(r.succeeded + r.failed + r.refused).toBe((outage.rate * outage.stretch) / 1_000);
    });

    it("leaves a healthy backend alone, throttles a dead one hard, and lets traffic back after it recovers", () => {
      const before = rows.filter((r) => r.from < outage.from);
      const during = rows.filter((r) => r.from >= outage.from && r.from < outage.to);
      const after = rows.filter((r) => r.from >= outage.to);
      for (const r of before) expect(r).toMatchObject({ up: true, failed: 0, refused: 0, refusing: 0 });
      for (const r of during) expect(r).toMatchObject({ up: false, succeeded: 0 });
      expect(during.at(-1)?.refusing).toBeGreaterThan(90);
      expect(during.at(-1)?.failed).toBeGreaterThanOrEqual(5); // still probing: a call a second at least
      for (const r of after) expect(r.failed).toBe(0);
      expect(after[0]?.succeeded).toBeGreaterThan(0);
      expect(after.at(-1)).toMatchObject({ refused: 0, refusing: 0 });
    });

    it("stops refusing within about a window (10 s) of recovery", () => {
      const m = /the last refusal came (\d+\.\d\d) s after the backend recovered$/.exec(
        part("a breaker under an outage").at(-1) ?? "",
      );
      expect(Number(m?.[1])).toBeGreaterThan(0);
      expect(Number(m?.[1])).toBeLessThanOrEqual(12.5);
    });
  });

  describe("a shedder under rising load", () => {
    const rows = part("a shedder under rising load")
      .slice(1)
      .map((l) => {
        const m =
          /^ {2}second +(\d+), (\d+) offered: without a shedder (\d+) served, p99 (\d+) ms; with one (\d+) served, (\d+) refused, p99 (\d+) ms$/.exec(
            l,
          );
        if (m === null) throw new Error(`unexpected line: ${l}`);
        const [second, offered, servedWithout, p99Without, served, refused, p99] = m.slice(1).map(Number) as [
          number,
          number,
          number,
          number,
          number,
          number,
          number,
        ];
        return { second, offered, servedWithout, p99Without, served, refused, p99 };
      });

    it("offers a load that rises past the server's 250 calls a second", () => {
      for (const r of rows) expect(Math.abs(r.offered - rising(r.second))).toBeLessThanOrEqual(1);
      expect(rows.at(-1)?.offered).toBeGreaterThan(250);
    });

    it("refuses nothing under capacity; past it refuses the excess and keeps the p99 far below the unshedded server's", () => {
      for (const r of rows.filter((r) => r.offered <= 200)) expect(r.refused).toBe(0);
      const over = rows.filter((r) => r.offered >= 400);
      expect(over.length).toBeGreaterThan(0);
      for (const r of over) {
        expect(r.refused).toBeGreaterThan(r.offered - 250 - 50);
        expect(r.served).toBeGreaterThanOrEqual(200);
        expect(r.p99 * 10).toBeLessThan(r.p99Without);
      }
    });
  });

  it("steps through each limiter: bucket, sliding, period, gcra and gate", () => {
    const steps = part("one step through each limiter").slice(1);
    expect(steps.map((l) => l.trim().split(",")[0])).toEqual(["bucket", "sliding", "period", "gcra", "gate"]);
    expect(steps[0]).toMatch(/25 of 30 calls at 0 ms let through; the next token in 40 ms; 5 tokens at 200 ms$/);
    expect(steps[1]).toMatch(
      /0 ms let through, 100 ms let through, 200 ms let through, 300 ms refused; room again in 700 ms$/,
    );
    expect(steps[2]).toMatch(/900 ms under, 950 ms hit, 990 ms over, 1000 ms under/);
    expect(steps[3]).toMatch(/conforms, conforms, refused; the next conforms in 100 ms$/);
    expect(steps[4]).toMatch(/enter yes, enter yes, enter no \(2 held\), leave \(1 held\), enter yes$/);
  });
});
