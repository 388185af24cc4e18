import { describe, expect, it } from "vitest";
import { main } from "../examples/client";

/** The numbers of a printed row, by column name. */
function row(lines: readonly string[], phase: string): Record<string, number> {
  const header = (lines[1] ?? "").trim().split(/\s+/).slice(1);
  const line = lines.find((l) => l.startsWith(phase));
  expect(line, phase).toBeDefined();
  const cells = (line as string).trim().split(/\s+/).slice(1).map(Number);
  return Object.fromEntries(header.map((h, i) => [h, cells[i] ?? Number.NaN]));
}

describe("example: client", () => {
  it(
    "the bucket refuses a burst's excess, the breaker throttles an outage and stops refusing about a window after it",
    { timeout: 60_000 },
    async () => {
      const lines = await main();
      expect(lines).toHaveLength(6);
      const healthy = row(lines, "healthy");
      const outage = row(lines, "outage");
      const recovered = row(lines, "recovered");
      // Healthy: everything that reached the server succeeded; the opening burst of 20 met a
      // bucket of 10 tokens, so about ten were refused for rate and none by the breaker.
      expect(healthy.failed).toBe(0);
      expect(healthy.breaker).toBe(0);
      expect(healthy.rate).toBeGreaterThanOrEqual(5);
      expect(healthy.ok).toBe(healthy.reached);
      expect(healthy.offered).toBe(healthy.ok + healthy.rate);
      // Outage: nothing succeeds; the breaker keeps a share of the calls off the failing server.
      expect(outage.ok).toBe(0);
      expect(outage.failed).toBe(outage.reached);
      expect(outage.breaker).toBeGreaterThan(0);
      expect(outage.reached).toBeLessThan(outage.offered);
      expect(outage.offered).toBe(outage.failed + outage.breaker + outage.rate);
      // Recovery: every call that reaches the server succeeds, and the breaker lets traffic back.
      expect(recovered.failed).toBe(0);
      expect(recovered.ok).toBe(recovered.reached);
      expect(recovered.ok).toBeGreaterThan(recovered.breaker);
      const last = Number(/last refusal came (-?\d+) ms/.exec(lines[5] ?? "")?.[1]);
      expect(last).toBeLessThan(1_500); // a window of 1 s, plus up to a quarter window of drops-only buckets
    },
  );
});
