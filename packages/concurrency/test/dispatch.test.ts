// A limiter steps each kind of algorithm its own way (AIMD inline, the others through a function
// of their own): whatever the way, it decides as the algorithm's public `sample` does when fed
// what the limiter documents — a pass's round trip (`finish − start`, none when not at or after
// the start), a drop's (NaN when unknown) — and every kind runs in one process, interleaved, at
// clocks near 0 and near Date.now().
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AimdLimit, FixedLimit, Gradient2Limit, Limiter, VegasLimit, criticality } from "@tideward/concurrency";
import type { Limit, Token } from "@tideward/concurrency";

const BASES = [0, 1_700_000_000_000.123];

// A subclass is stepped through its own `sample` and `limit`: this one counts its samples.
class CountingAimd extends AimdLimit {
  samples = 0;
  override sample(rtt: number, inflight: number, dropped: boolean): void {
    this.samples++;
    super.sample(rtt, inflight, dropped);
  }
}

const kinds: readonly [string, () => Limit][] = [
  ["AIMD", () => new AimdLimit({ initial: 4, min: 2, max: 40, timeout: 300 })],
  ["Vegas", () => new VegasLimit({ initial: 4, min: 2, max: 40, probe: 2 })],
  ["Gradient2", () => new Gradient2Limit({ initial: 4, min: 2, max: 40, long: 5 })],
  ["Fixed", () => new FixedLimit(6)],
  ["an AimdLimit subclass", () => new CountingAimd({ initial: 4, min: 2, max: 40, timeout: 300 })],
];

type Op =
  | { kind: "acquire"; which: number; dt: number; level: number | undefined }
  | { kind: "settle"; which: number; pick: number; how: "pass" | "drop" | "ignore"; finish: number };

const op = (n: number): fc.Arbitrary<Op> =>
  fc.oneof(
    // Acquires outweigh settles, so calls pile up and the limits move.
    fc.record({
      kind: fc.constant("acquire" as const),
      which: fc.nat({ max: n - 1 }),
      dt: fc.oneof({ weight: 9, arbitrary: fc.double({ min: 0, max: 50, noNaN: true }) }, fc.constant(-3)),
      level: fc.constantFrom(undefined, 0, 1, 2, 3),
    }),
    fc.record({
      kind: fc.constant("acquire" as const),
      which: fc.nat({ max: n - 1 }),
      dt: fc.double({ min: 0, max: 5, noNaN: true }),
      level: fc.constant(0),
    }),
    fc.record({
      kind: fc.constant("settle" as const),
      which: fc.nat({ max: n - 1 }),
      pick: fc.nat(),
      how: fc.constantFrom("pass" as const, "drop" as const, "ignore" as const),
      // After the start (a round trip, some past AIMD's timeout), at it, before it, or no reading.
      finish: fc.oneof(
        { weight: 8, arbitrary: fc.double({ min: 0.01, max: 600, noNaN: true }) },
        fc.constantFrom(0, -5, Number.NaN, Infinity),
      ),
    }),
  );

// One limiter and its twin: a second algorithm of the same policy fed only through `sample`.
interface Pair {
  readonly limiter: Limiter;
  readonly twin: Limit;
  readonly open: Token[];
}

function pairs(base: number): Pair[] {
  const out: Pair[] = [];
  for (const [, make] of kinds)
    for (const priorities of [undefined, criticality])
      out.push({ limiter: new Limiter(make(), { now: base, priorities }), twin: make(), open: [] });
  return out;
}

describe("a limiter's step for each kind of algorithm", () => {
  for (const base of BASES)
    it(`decides as the algorithm's own sample, every kind in one process, at a clock near ${base === 0 ? "0" : "Date.now()"}`, () => {
      const n = kinds.length * 2;
      fc.assert(
        fc.property(fc.array(op(n), { maxLength: 400 }), (ops) => {
          const all = pairs(base);
          let now = base;
          for (const o of ops) {
            const p = all[o.which];
            if (o.kind === "acquire") {
              now += o.dt;
              const t = p.limiter.acquire(now, o.level);
              if (t.ok) p.open.push(t);
            } else if (p.open.length > 0) {
              const [token] = p.open.splice(o.pick % p.open.length, 1);
              const finish = token.start + o.finish;
              // A finish that is not a finite number gives no round trip.
              const rtt = Number.isFinite(finish) ? finish - token.start : Number.NaN;
              if (o.how === "pass") {
                token.pass(finish);
                if (rtt >= 0) p.twin.sample(rtt, token.inflight, false);
              } else if (o.how === "drop") {
                token.drop(finish);
                p.twin.sample(rtt >= 0 ? rtt : Number.NaN, token.inflight, true);
              } else token.ignore();
            }
            for (const q of all) {
              expect(q.limiter.limit).toBe(q.twin.limit);
              expect(q.limiter.algorithm.estimate).toBe(q.twin.estimate);
              expect(q.limiter.flying).toBe(q.open.length);
            }
          }
          // The subclass was stepped through its own `sample`, once a sample, as its twin was.
          for (const q of all)
            if (q.limiter.algorithm instanceof CountingAimd)
              expect(q.limiter.algorithm.samples).toBe((q.twin as CountingAimd).samples);
        }),
        { numRuns: 150 },
      );
    });

  it("AIMD's sample reads what is not a number as no round trip and no count, as before", () => {
    // The rule the public sample keeps, written out: only a number at or above 0 is a round
    // trip, only `true` is a drop, and a count that is not a number grows nothing.
    const oracle = (limit: number, rtt: unknown, inflight: unknown, dropped: unknown): number => {
      const known = typeof rtt === "number" && rtt >= 0;
      if (dropped === true || (known && rtt > 300)) return Math.max(2, Math.floor(limit * 0.9));
      if (known && typeof inflight === "number" && inflight * 2 >= limit) return Math.min(40, limit + 1);
      return limit;
    };
    const odd = fc.constantFrom<unknown>(undefined, null, "12", 12n, Number.NaN, -1, -0, 0, 12, 301, Infinity, 1, true);
    fc.assert(
      fc.property(fc.array(fc.tuple(odd, odd, odd), { maxLength: 60 }), (samples) => {
        const limit = new AimdLimit({ initial: 8, min: 2, max: 40, timeout: 300 });
        let expected = 8;
        for (const [rtt, inflight, dropped] of samples) {
          expected = oracle(expected, rtt, inflight, dropped);
          (limit.sample as (r: unknown, i: unknown, d: unknown) => void)(rtt, inflight, dropped);
          expect(limit.limit).toBe(expected);
        }
      }),
    );
  });
});
