// The example program `pnpm example metrics` (apps/playground/examples/metrics.ts), run as a
// reader runs it: every scrape's numbers agree with what the client saw, and the breaker's drop
// ratio rises in the outage and is back to 0 by the end.
import { describe, expect, it } from "vitest";
import { main } from "../../../apps/playground/examples/metrics.ts";

/** One printed scrape: when, in which phase, what the client saw and what /metrics said. */
interface Scrape {
  readonly phase: string;
  readonly saw: { ok: number; failed: number; refused: number };
  readonly said: Map<string, number>;
}

function scrapes(lines: readonly string[]): Scrape[] {
  const out: Scrape[] = [];
  for (const line of lines) {
    const head = /^── \d+ s, (.+): the client saw (\d+) ok, (\d+) failed, (\d+) refused; GET \/metrics says$/.exec(
      line,
    );
    if (head !== null) {
      out.push({
        phase: head[1] ?? "",
        saw: { ok: Number(head[2]), failed: Number(head[3]), refused: Number(head[4]) },
        said: new Map(),
      });
      continue;
    }
    const sample = /^ {3}(\S+) (\S+)$/.exec(line);
    if (sample !== null) out.at(-1)?.said.set(sample[1] ?? "", Number(sample[2]));
  }
  return out;
}

const key = (metric: string, labels: string) => `${metric}{tideward_name="backend"${labels}}`;

describe("example: metrics", () => {
  it(
    "prints scrapes that match the client, with the breaker opening in the outage and closing after it",
    { timeout: 60_000 },
    async () => {
      const printed: string[] = [];
      const lines = await main((line) => printed.push(line));
      expect(printed).toEqual(lines); // printed as it went, and returned
      const all = scrapes(lines);
      expect(all.map((s) => s.phase)).toEqual(["healthy", "outage", "recovered", "recovered", "the end"]);
      for (const s of all) {
        const calls = (labels: string) => s.said.get(key("tideward_guard_calls_total", labels)) ?? 0;
        expect(calls(',tideward_outcome="success"')).toBe(s.saw.ok);
        expect(calls(',tideward_outcome="failure",error_type="Error"')).toBe(s.saw.failed);
        expect(calls(',tideward_outcome="refused",error_type="Refusal",tideward_refusal_kind="breaker"')).toBe(
          s.saw.refused,
        );
        expect(s.said.get(key("tideward_guard_refusals_total", ',tideward_refusal_kind="breaker"')) ?? 0).toBe(
          s.saw.refused,
        );
      }
      const ratio = all.map((s) => s.said.get(key("tideward_breaker_drop_ratio", "")));
      expect(ratio[0]).toBe(0);
      expect(ratio[1]).toBeGreaterThan(0.5); // throttling most calls two seconds into the outage
      expect(ratio.at(-1)).toBe(0); // three seconds after it, a whole window of successes
      expect(all[0]?.saw.failed).toBe(0);
      expect(all.at(-1)?.saw.ok).toBeGreaterThan(all[2]?.saw.ok ?? Infinity);
    },
  );
});
