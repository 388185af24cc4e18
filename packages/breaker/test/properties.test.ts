// Invariants over arbitrary traffic: clocks that jump and step back, odd rolls, permits settled
// late, twice or never, small windows that wrap often, every policy knob; each run on a clock
// near 0, near performance.now() (10^3–10^7 ms) and near Date.now() (10^12–10^13 ms), fractional.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Breaker } from "@tideward/breaker";
import { NaiveBreaker } from "./reference";
import { SLOW, op, policy, roll, runNaive, runReal, scales } from "./ops";
import type { Draws, Op } from "./ops";

describe.each(scales)("Breaker properties on a clock %s", (_, start) => {
  it(
    "makes exactly the decisions of a reference that walks the whole window every call",
    () => {
      fc.assert(
        fc.property(policy, fc.array(op, { maxLength: 200 }), start, (p, ops, origin) => {
          expect(runReal(p, ops, origin)).toEqual(runNaive(p, ops, origin));
        }),
        { numRuns: 200 },
      );
    },
    SLOW,
  );

  it(
    "agrees with the reference on tight windows that the clock sweeps through whole",
    () => {
      // Windows of a few ms against steps of tens: most moves sweep every bucket, in any rotation.
      // k under 1 with no protection throttles even all-success traffic, so the working run shows.
      const tight = fc.record({
        k: fc.double({ min: 0.2, max: 1.2, noNaN: true }),
        protection: fc.integer({ min: 0, max: 1 }),
        size: fc.integer({ min: 1, max: 6 }),
        window: fc.oneof(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0.06, max: 60, noNaN: true })),
        probe: fc.constant(Infinity),
      });
      const step = fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 0, max: 3 }) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 60 }) },
      );
      const tightOp: fc.Arbitrary<Op> = fc.record({
        kind: fc.constant("call" as const),
        dt: step,
        roll,
        ok: fc.boolean(),
      });
      fc.assert(
        fc.property(tight, fc.array(tightOp, { maxLength: 60 }), start, ({ k, ...rest }, ops, origin) => {
          const p = { ...rest, k, floor: Math.min(k, 0.2) };
          expect(runReal(p, ops, origin)).toEqual(runNaive(p, ops, origin));
        }),
        { numRuns: 300 },
      );
    },
    SLOW,
  );

  it(
    "agrees with the reference on the preset under heavy traffic with failures",
    () => {
      // Long runs at one policy: many calls per bucket, the window wrapping many times.
      const heavy = fc.array(
        fc.oneof(
          fc.record({ kind: fc.constant("allow" as const), dt: fc.integer({ min: 0, max: 30 }), roll }),
          fc.record({
            kind: fc.constant("settle" as const),
            dt: fc.integer({ min: 0, max: 30 }),
            which: fc.nat(),
            ok: fc.boolean(),
          }),
          fc.record({ kind: fc.constant("ratio" as const), dt: fc.integer({ min: 0, max: 300 }) }),
        ),
        { minLength: 300, maxLength: 1_000 },
      );
      fc.assert(
        fc.property(heavy, start, (ops, origin) => {
          expect(runReal({}, ops, origin)).toEqual(runNaive({}, ops, origin));
        }),
        { numRuns: 10 },
      );
    },
    SLOW,
  );

  it(
    "agrees with the reference at bucket boundaries of odd windows, readings a few ulps either side",
    () => {
      // The breaker tells "same bucket" by one comparison with a precomputed edge and leaves the
      // division to readings near it; the reference always divides (Window's arithmetic). Fractional
      // origins and widths, large and small magnitudes, readings within ulps of each boundary.
      const bits = new Float64Array(1);
      const word = new BigInt64Array(bits.buffer);
      /** `x` moved by `n` representable doubles towards +Infinity (x nonzero and finite). */
      const ulps = (x: number, n: number): number => {
        bits[0] = x;
        word[0] += BigInt(x > 0 ? n : -n);
        return bits[0];
      };
      // A negative origin with a boundary near zero is where the two computations part most often:
      // origin −1215.16…, width 1.6459…, the 775th boundary 60.4186…: three ulps below it, the
      // division already says 775.
      const setup = fc.record({
        origin: fc.oneof(
          start,
          fc.double({ min: -1e6, max: 1e6, noNaN: true }),
          fc.double({ min: -6_000, max: -100, noNaN: true }),
          fc.constantFrom(0, 1e12 + 0.1, 1.7e9 / 3, -1215.1635486750156),
        ),
        window: fc.oneof(
          fc.double({ min: 1, max: 5_000, noNaN: true }),
          fc.double({ min: 1, max: 100, noNaN: true }),
          fc.constantFrom(1_000 / 3, 0.3, 1.645912565170101),
        ),
        size: fc.integer({ min: 1, max: 7 }),
        k: fc.double({ min: 0.2, max: 1.2, noNaN: true }),
      });
      const jump = fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 0, max: 3 }) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 800 }) },
      );
      const step = fc.record({ bucket: jump, ulp: fc.integer({ min: -3, max: 3 }), roll, ok: fc.boolean() });
      fc.assert(
        fc.property(setup, fc.array(step, { maxLength: 80 }), ({ origin, window, size, k }, steps) => {
          const p = { k, floor: Math.min(k, 0.2), protection: 0, size, window, probe: Infinity };
          const real = new Breaker(p, origin);
          const naive = new NaiveBreaker(p, origin);
          const width = real.policy.window / real.policy.size;
          const got: number[] = [];
          const want: number[] = [];
          let j = 0;
          for (const s of steps) {
            j += s.bucket;
            const edge = origin + j * width;
            const t = edge !== 0 && Number.isFinite(edge) ? ulps(edge, s.ulp) : edge;
            const permit = real.allow(t, s.roll);
            if (s.ok) permit?.pass(t);
            else permit?.fail(t);
            const ok = naive.allow(t, s.roll);
            if (ok) naive.settle(t, s.ok);
            got.push(permit === undefined ? 0 : 1, real.ratio(t));
            want.push(ok ? 1 : 0, naive.ratio(t));
          }
          expect(got).toEqual(want);
        }),
        { numRuns: 300 },
      );
    },
    SLOW,
  );

  it(
    "decides alike given a source of draws, and draws only while the throttle is on",
    () => {
      fc.assert(
        fc.property(policy, fc.array(op, { maxLength: 200 }), start, (p, ops, origin) => {
          const draws: Draws = { taken: 0, needless: 0 };
          expect(runReal(p, ops, origin, draws)).toEqual(runReal(p, ops, origin));
          expect(draws.needless).toBe(0);
          expect(draws.taken).toBeLessThanOrEqual(ops.filter((o) => o.kind === "allow" || o.kind === "call").length);
        }),
        { numRuns: 200 },
      );
      // A throttled breaker does draw, and a source that throws leaves nothing recorded.
      const b = new Breaker({ protection: 0, probe: Infinity }, 0);
      b.allow(1, 0)?.fail(1);
      const before = b.ratio(1);
      expect(before).toBeGreaterThan(0);
      expect(() =>
        b.allow(1, () => {
          throw new Error("no dice");
        }),
      ).toThrow("no dice");
      expect(b.ratio(1)).toBe(before);
      expect(b.allow(1, () => 0)).toBeUndefined();
    },
    SLOW,
  );

  it(
    "keeps ratio in [0, 1]",
    () => {
      fc.assert(
        fc.property(policy, fc.array(op, { maxLength: 300 }), start, (p, ops, origin) => {
          const ratios = runReal(p, ops, origin).filter((x): x is number => typeof x === "number");
          expect(ratios.filter((r) => !(r >= 0 && r <= 1))).toEqual([]);
        }),
      );
    },
    SLOW,
  );

  it(
    "gives the same decisions for the same inputs",
    () => {
      fc.assert(
        fc.property(policy, fc.array(op, { maxLength: 300 }), start, (p, ops, origin) => {
          expect(runReal(p, ops, origin)).toEqual(runReal(p, ops, origin));
        }),
      );
    },
    SLOW,
  );
});
