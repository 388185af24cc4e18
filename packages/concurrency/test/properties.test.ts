// Invariants of a limiter under any sequence of calls, at clocks near 0 and near Date.now():
// nothing is let in past the limit or past its level's share, no sequence of acquire, pass,
// drop and ignore (settled twice, out of order, on a clock that steps back) mints a place, and
// the limit stays within its bounds.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AimdLimit,
  FixedLimit,
  Gradient2Limit,
  Limiter,
  Priorities,
  VegasLimit,
  criticality,
} from "@tideward/concurrency";
import type { Limit, Token } from "@tideward/concurrency";

const BASES = [0, 1_700_000_000_000.123];

type Op =
  | { kind: "acquire"; dt: number; priority: number | string | undefined }
  | { kind: "settle"; pick: number; how: "pass" | "drop" | "ignore"; rtt: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("acquire" as const),
    // Mostly forward, sometimes backward: a clock that steps back.
    dt: fc.oneof({ weight: 9, arbitrary: fc.double({ min: 0, max: 50, noNaN: true }) }, fc.constant(-3)),
    priority: fc.oneof(
      fc.integer({ min: 0, max: 3 }),
      fc.constantFrom<number | string | undefined>(undefined, "critical", "sheddable", "nope", 7, -1, Number.NaN, 1.5),
    ),
  }),
  fc.record({
    kind: fc.constant("settle" as const),
    pick: fc.nat(),
    how: fc.constantFrom("pass" as const, "drop" as const, "ignore" as const),
    // A finish after, at, or before the start (the last: no round trip).
    rtt: fc.oneof({ weight: 6, arbitrary: fc.double({ min: 0.01, max: 8_000, noNaN: true }) }, fc.constantFrom(0, -5)),
  }),
);

const algorithms: readonly [string, () => Limit][] = [
  ["AIMD", () => new AimdLimit({ initial: 8, min: 2, max: 40 })],
  ["Vegas", () => new VegasLimit({ initial: 8, min: 2, max: 40, probe: 2 })],
  ["Vegas with drain and grow", () => new VegasLimit({ initial: 8, min: 2, max: 40, probe: 2, drain: 1, grow: 1 })],
  ["Gradient2", () => new Gradient2Limit({ initial: 8, min: 2, max: 40, long: 5 })],
  ["Fixed", () => new FixedLimit(6)],
];

function run(base: number, make: () => Limit, priorities: Priorities, ops: readonly Op[]): void {
  const algorithm = make();
  const { min, max } = "policy" in algorithm ? algorithm.policy : { min: 6, max: 6 };
  const limiter = new Limiter(algorithm, { priorities, now: base });
  const tokens: Token[] = [];
  const open = new Set<Token>();
  let now = base;
  for (const o of ops) {
    if (o.kind === "acquire") {
      now += o.dt;
      const before = limiter.flying;
      const limit = limiter.limit;
      const level = priorities.level(o.priority);
      const places = priorities.places(level, limit);
      const answer = limiter.acquire(now, o.priority);
      if (answer.ok) {
        // Let in only under the limit and under its level's share of it.
        expect(before).toBeLessThan(limit);
        expect(before).toBeLessThan(places);
        expect(limiter.flying).toBe(before + 1);
        expect(answer.level).toBe(level);
        tokens.push(answer);
        open.add(answer);
      } else {
        expect(answer.level).toBe(level);
        expect(answer.reason).toBe(before >= limit ? "limit" : "reserved");
        expect(before).toBeGreaterThanOrEqual(answer.reason === "limit" ? limit : places);
        expect(limiter.flying).toBe(before);
      }
    } else if (tokens.length > 0) {
      const token = tokens[o.pick % tokens.length];
      const finish = token.start + o.rtt;
      if (o.how === "pass") token.pass(finish);
      else if (o.how === "drop") token.drop(finish);
      else token.ignore();
      open.delete(token);
    }
    // No place minted or lost: the count is the tokens not yet settled, level by level.
    expect(limiter.flying).toBe(open.size);
    for (let l = 0; l < priorities.count; l++)
      expect(limiter.flyingAt(l)).toBe([...open].filter((t) => t.level === l).length);
    expect(limiter.limit).toBeGreaterThanOrEqual(min);
    expect(limiter.limit).toBeLessThanOrEqual(max);
    // A level with room leaves room for every more important one.
    for (let l = 1; l < priorities.count; l++)
      if (limiter.room(l) > 0) expect(limiter.room(l - 1)).toBeGreaterThanOrEqual(limiter.room(l));
  }
  for (const t of open) t.ignore();
  expect(limiter.flying).toBe(0);
}

/** A round trip (ms), how the oldest-picked token ends, and which open token it is. */
type Step = readonly [rtt: number, how: "pass" | "drop" | "ignore" | "hold", pick: number];

/**
 * Runs `steps` through a full Vegas limiter with drain and grow at a clock near `base`, checking
 * at each step that the limit stays in [min, max] and no place is minted; counts its leaps (a
 * rise of more than 6 places at once) and cuts (a fall of more than 1).
 */
function drainAndGrow(base: number, steps: readonly Step[]): { leaps: number; cuts: number } {
  const min = 3;
  const max = 120;
  const limiter = new Limiter(new VegasLimit({ initial: 10, min, max, probe: 20, drain: 1, grow: 1 }), { now: base });
  const open: Token[] = [];
  let now = base;
  let leaps = 0;
  let cuts = 0;
  for (const [rtt, how, pick] of steps) {
    now += 0.37;
    // Fill the limit, as a loaded server is, so the samples count.
    for (let n = limiter.limit - limiter.flying; n > 0; n--) {
      const a = limiter.acquire(now);
      expect(a.ok).toBe(true);
      if (a.ok) open.push(a);
    }
    expect(limiter.acquire(now).ok).toBe(false);
    if (how === "hold" || open.length === 0) continue;
    const before = limiter.limit;
    const [t] = open.splice(pick % open.length, 1);
    if (how === "pass") t.pass(t.start + rtt);
    else if (how === "drop") t.drop(t.start + rtt);
    else t.ignore();
    const after = limiter.limit;
    if (after - before > 6) leaps++;
    if (before - after > 1) cuts++;
    expect(after).toBeGreaterThanOrEqual(min);
    expect(after).toBeLessThanOrEqual(max);
    expect(limiter.flying).toBe(open.length);
  }
  for (const t of open) t.ignore();
  expect(limiter.flying).toBe(0);
  return { leaps, cuts };
}

describe("Limiter properties", () => {
  for (const base of BASES)
    for (const [name, make] of algorithms)
      it(`${name} at a clock near ${base === 0 ? "0" : "Date.now()"}: no place past the limit or the share, none minted`, () => {
        for (const priorities of [criticality, new Priorities({ levels: 2, shares: [0.5, 0.5] })])
          fc.assert(
            fc.property(fc.array(op, { maxLength: 300 }), (ops) => run(base, make, priorities, ops)),
            { numRuns: 60 },
          );
      });

  it("Vegas's drain and grow: the limit within [min, max] and no place minted, both steps taken", () => {
    // Round trips near a 10 ms floor, so that queues under alpha come in runs (grow's leap) and
    // long queues come too (drain's cut); every call a sample, at both clocks. A fixed trace at
    // each clock takes both steps; the random ones check the bounds whatever they draw.
    const calm = Array.from({ length: 20 }, (): Step => [10, "pass", 0]);
    const queue = Array.from({ length: 12 }, (): Step => [80, "pass", 0]);
    for (const base of BASES) {
      const { leaps, cuts } = drainAndGrow(base, [...calm, ...queue, ...calm]);
      expect([leaps > 0, cuts > 0], `clock near ${base}`).toEqual([true, true]);
    }
    fc.assert(
      fc.property(
        fc.constantFrom(...BASES),
        fc.array(
          fc.tuple(
            fc.constantFrom(10, 10, 10.1, 10.3, 11, 14, 30, 80),
            fc.oneof(
              { weight: 8, arbitrary: fc.constant("pass" as const) },
              fc.constantFrom("drop" as const, "ignore" as const, "hold" as const),
            ),
            fc.nat(),
          ),
          { maxLength: 300 },
        ),
        (base, steps) => void drainAndGrow(base, steps),
      ),
      { numRuns: 300 },
    );
  });

  it("the guarantee of a share: a less important call never takes the places kept for more important ones", () => {
    // A flood of mostly sheddable work against a moving limit: after each call let in at level
    // p, at least limit − places(p) places are still free for the levels more important than p.
    const level = fc.oneof(
      { weight: 14, arbitrary: fc.constant(3) },
      { weight: 3, arbitrary: fc.constant(2) },
      { weight: 2, arbitrary: fc.constant(1) },
      { weight: 1, arbitrary: fc.constant(0) },
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(level, fc.integer({ min: 0, max: 9 }), fc.nat()), { maxLength: 500 }),
        fc.constantFrom(...BASES),
        (steps, base) => {
          const limiter = new Limiter(new AimdLimit({ initial: 20, min: 5, max: 50 }), {
            priorities: criticality,
            now: base,
          });
          const open: Token[] = [];
          let now = base;
          for (const [p, settle, pick] of steps) {
            now += 1;
            if (settle < 3 && open.length > 0) {
              const [t] = open.splice(pick % open.length, 1);
              if (settle === 0) t.drop(now);
              else t.pass(now);
              continue;
            }
            const limit = limiter.limit;
            const answer = limiter.acquire(now, p);
            if (!answer.ok) {
              // Refused only when its room is full.
              expect(open.length).toBeGreaterThanOrEqual(criticality.places(p, limit));
              continue;
            }
            open.push(answer);
            expect(limit - open.length).toBeGreaterThanOrEqual(limit - criticality.places(p, limit));
            // Each more important level still has its slice: what it may fill and p may not.
            for (let q = 0; q < p; q++)
              expect(limiter.room(q)).toBeGreaterThanOrEqual(
                criticality.places(q, limit) - criticality.places(p, limit),
              );
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
