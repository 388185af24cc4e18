import { describe, expect, it } from "vitest";
import { compareRuns, percentile } from "../examples/shedder-http";
import type { HttpResult } from "../examples/shedder-http";

// A request left unanswered waited longer than any that was answered: count it as infinitely slow.
function p99(r: HttpResult): number {
  const lost = Array.from({ length: r.unanswered }, () => [0, Infinity] as const);
  return percentile([...r.ok, ...lost], 99);
}

describe("example: shedder in front of a node:http server", () => {
  // Shortened: 500 requests at 500/s for one second, to a server that does ~200/s at best (and
  // far fewer on a loaded machine). Only the qualitative claim is asserted; figures vary.
  it("refuses some requests with 503 and keeps the admitted p99 under the unprotected one", { timeout: 30_000 }, async () => {
    const { lines, without, shedding } = await compareRuns({ rate: 500, duration: 1_000, count: 500, grace: 1_000 });
    expect(lines).toHaveLength(6);
    expect(without.sent).toBeGreaterThan(0);
    expect(without.refused).toHaveLength(0);
    expect(shedding.refused.length).toBeGreaterThan(0);
    expect(shedding.ok.length).toBeGreaterThan(0);
    expect(p99(shedding)).toBeLessThan(p99(without));
  });
});
