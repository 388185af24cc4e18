// The burst table's note says why a figure does not move: the most each limiter can let through
// of a burst, and from how many calls the bucket's figure moves. Those claims are checked here
// against the simulator, over the knobs' ranges, not against the note's own arithmetic.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { burstScenario } from "../../src/catalogue";
import { allFigures } from "../../src/model";
import type { Params } from "../../src/model";
import { burst } from "../../src/runs/burst";
import { defaults } from "../../src/state";

/** The first burst's figures (bucket, sliding, period) and the note, for these knobs over the defaults. */
function firstBurst(p: Partial<Record<string, number | string>>) {
  const params: Params = { ...defaults(burstScenario), bursts: 1, ...p };
  const outcome = burst(params);
  const f = Object.fromEntries(allFigures(outcome).map((x) => [x.id, x.value]));
  return { figures: [f["burst0.bucket"], f["burst0.sliding"], f["burst0.period"]], notes: outcome.notes.join("\n") };
}

/** The bounds the note states ("… so 21; … so 20; … so 40."), and the call count it says the bucket moves at. */
function claims(notes: string): { most?: number[]; full: boolean; moves?: number } {
  const most = /The most each can let through.*?so (\d+);.*?so (\d+);.*?so (\d+)\./.exec(notes);
  const moves = /the bucket's figure moves at (\d+) calls/.exec(notes);
  return {
    ...(most === null ? {} : { most: most.slice(1).map(Number) }),
    full: notes.includes("Each limiter lets through all it can"),
    ...(moves === null ? {} : { moves: Number(moves[1]) }),
  };
}

describe("the burst tab's note", () => {
  it("at the defaults and at 45 calls: 21 / 20 / 40, every limiter full, the bucket moving at 68 calls", () => {
    for (const calls of [40, 45]) {
      const { figures, notes } = firstBurst({ calls });
      expect(figures).toEqual([21, 20, 40]);
      expect(claims(notes)).toEqual({ most: [21, 20, 40], full: true, moves: 68 });
    }
    expect(firstBurst({ calls: 67 }).figures).toEqual([21, 20, 40]);
    expect(firstBurst({ calls: 68 }).figures).toEqual([22, 20, 40]);
  });

  it("states bounds no limiter exceeds, and a bucket that moves at the call count it names and not before", () => {
    const knobs = fc.record({
      calls: fc.integer({ min: 1, max: 200 }),
      spacing: fc.integer({ min: 1, max: 500 }).map((i) => i / 10),
      quota: fc.integer({ min: 1, max: 200 }),
      burst: fc.integer({ min: 1, max: 200 }),
      window: fc.integer({ min: 1, max: 100 }).map((i) => i * 100),
      every: fc.integer({ min: 1, max: 100 }).map((i) => i * 100),
      before: fc.integer({ min: 0, max: 20 }).map((i) => i * 5),
      align: fc.constantFrom("yes", "no"),
    });
    fc.assert(
      fc.property(knobs, (p) => {
        const { figures, notes } = firstBurst(p);
        const said = claims(notes);
        if (said.most === undefined) return; // a burst as long as the window: no bounds stated
        figures.forEach((f, i) => expect(f, `limiter ${i}: ${notes}`).toBeLessThanOrEqual(said.most?.[i] ?? -1));
        if (said.full) expect(figures, notes).toEqual(said.most);
        if (said.moves !== undefined) {
          // The share before the boundary is a percentage of the burst, so the period's part
          // is checked at the same share: only the bucket's figure is claimed to move.
          expect(firstBurst({ ...p, calls: said.moves }).figures[0], notes).toBe((said.most[0] ?? 0) + 1);
          expect(firstBurst({ ...p, calls: said.moves - 1 }).figures[0], notes).toBe(said.most[0]);
        }
      }),
      { numRuns: 150 },
    );
  });
});
