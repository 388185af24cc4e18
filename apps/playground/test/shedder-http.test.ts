import { describe, expect, it } from "vitest";
import { compareRuns, percentile } from "../examples/shedder-http";
import type { HttpResult } from "../examples/shedder-http";

// Which run's admitted requests fared worse at the tail: the p99 latency, counting a request
// left unanswered as infinitely slow; when both p99s are infinite (a machine so loaded that
// neither server answered everything in time), the larger share of admitted requests unanswered.
function tail(r: HttpResult): [p99: number, lost: number] {
  const lost = Array.from({ length: r.unanswered }, () => [0, Infinity] as const);
  return [percentile([...r.ok, ...lost], 99), r.unanswered / (r.ok.length + r.unanswered)];
}

describe("example: shedder in front of a node:http server", () => {
  // Shortened: 500 requests at 500/s for one second, to a server that does ~200/s at best (and
  // far fewer on a loaded machine). Only the qualitative claim is asserted; figures vary.
  it("refuses some requests with 503 and keeps the admitted p99 under the unprotected one", { timeout: 30_000 }, async () => {
    const { lines, without, shedding } = await compareRuns({ rate: 500, duration: 1_000, count: 500, grace: 2_000 });
    expect(lines).toHaveLength(6);
    expect(without.sent).toBeGreaterThan(0);
    expect(without.refused).toHaveLength(0);
    expect(shedding.refused.length).toBeGreaterThan(0);
    expect(shedding.ok.length).toBeGreaterThan(0);
    const [withP99, withLost] = tail(shedding);
    const [withoutP99, withoutLost] = tail(without);
    const better = withoutP99 < Infinity ? withP99 < withoutP99 : withP99 < Infinity || withLost < withoutLost;
    // The figures ride along so that a failure shows them.
    expect({ withP99, withoutP99, withLost, withoutLost, better }).toMatchObject({ better: true });
  });
});
