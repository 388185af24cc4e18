// The engine keeps its own flat state (slots in typed arrays) rather than one limiter object per
// key, but calls @tideward/limiters' formulas on it. This pins the two together: the same traffic
// on one key through the engine and through the limiter objects gets the same answers — allowed,
// remaining, retryAfter and resetAfter — near 0, near performance.now() and near Date.now().
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Bucket, Gcra, Period } from "@tideward/limiters";
import { QuotaKey, limitSpec } from "@tideward/quota-engine";
import type { Decision } from "@tideward/quota-engine";
import { Rule } from "@tideward/quota-engine/internal";
import { engineWith } from "./traffic";

const key = new QuotaKey("tenant", "alice", "api");

const specOf = (window: fc.Arbitrary<number>) =>
  fc.record({
    capacity: fc.integer({ min: 1, max: 50 }),
    refill: fc.integer({ min: 1, max: 50 }),
    window,
    burst: fc.integer({ min: 1, max: 50 }),
    align: fc.boolean(),
  });

// Two kinds of window. Any window: the engine's rate is `refill / window` a ms, the limiter's
// `(refill · 1000 / window) / 1000`, which can differ in the last bit, so a wait may move by a
// float step. A window of 1000 · 2^k ms: then `refill · 1000 / window` is exact and both rates are
// one rounding of the same number, so the two share every number and every answer is identical.
const windows: [string, fc.Arbitrary<number>, boolean][] = [
  ["any window", fc.integer({ min: 1, max: 5_000 }), false],
  ["a window of 1000 · 2^k ms (the same rate to the bit)", fc.constantFrom(125, 250, 500, 1_000, 2_000, 4_000), true],
];

const scales: [string, fc.Arbitrary<number>][] = [
  ["a clock near 0", fc.integer({ min: 0, max: 1e6 })],
  ["a performance.now() clock", fc.double({ min: 1e3, max: 1e8, noNaN: true })],
  ["a Date.now() clock", fc.double({ min: 1e12, max: 1e13, noNaN: true })],
];

// Forward-moving arrivals (the engine treats an earlier `now` as the latest seen, engine-wide;
// the limiters treat it per object, so only forward clocks are comparable), with a cost each.
const steps = fc.array(
  fc.tuple(
    fc.oneof(fc.integer({ min: 0, max: 400 }), fc.double({ min: 0, max: 400, noNaN: true })),
    fc.integer({ min: 1, max: 8 }),
  ),
  { minLength: 1, maxLength: 120 },
);

// Specs whose bucket keeps one number and whose GCRA tick is the same number to the bit.
const oneNumberSpec = (spec: ReturnType<typeof specOf>) =>
  spec
    .map((s) => ({ ...s, window: s.window * 8 }))
    .filter((s) => {
      const rule = new Rule(limitSpec({ name: "l", ...s }));
      return rule.oneNumber && 1_000 / ((s.refill * 1_000) / s.window) === rule.tick;
    });

const double = new Float64Array(1);
const bits = new BigInt64Array(double.buffer);
/** One float step at `x`'s magnitude. */
function step(x: number): number {
  double[0] = Math.abs(x);
  bits[0] += 1n;
  return double[0] - Math.abs(x);
}

/** Waits agree exactly, or (`exact` false) to the rounding of the rate itself: a float step or two. */
function sameWait(engine: number, limiter: number, now: number, exact: boolean): void {
  if (exact || !Number.isFinite(limiter)) expect(engine).toBe(limiter);
  else expect(Math.abs(engine - limiter)).toBeLessThanOrEqual(1e-12 * limiter + 2 * step(now + limiter));
}

const cases = scales.flatMap(([clock, origin]) =>
  windows.map(([window, w, exact]) => [`${clock}, ${window}`, origin, specOf(w), exact] as const),
);

describe.each(cases)("the engine decides as @tideward/limiters does, on %s", (_, origin, spec, exact) => {
  it("token bucket = Bucket(refill per window, burst capacity), any cost: allowed, remaining, retryAfter, resetAfter", () => {
    fc.assert(
      fc.property(spec, origin, steps, (s, start, arrivals) => {
        // A bucket of one number is GCRA on its capacity: pinned to Gcra below.
        fc.pre(!new Rule(limitSpec({ name: "l", ...s })).oneNumber);
        const engine = engineWith(s);
        const bucket = new Bucket((s.refill * 1_000) / s.window, { burst: s.capacity, now: start });
        let now = start;
        for (const [dt, cost] of arrivals) {
          now += dt;
          const wait = bucket.next(now, cost);
          const d: Decision = engine.checkTokenBucket(key, "l", now, cost);
          expect(d.allowed).toBe(bucket.take(now, cost));
          const r = bucket.rateLimit(now);
          expect(d.remaining).toBe(r.remaining);
          sameWait(d.retryAfter, wait, now, exact);
          sameWait(d.resetAfter, r.reset, now, exact);
        }
      }),
    );
  });

  it("token bucket of one number = Gcra(refill per window, burst capacity) on grid instants: allowed, remaining, retryAfter, resetAfter", () => {
    fc.assert(
      fc.property(oneNumberSpec(spec), origin, steps, (s, start, arrivals) => {
        const engine = engineWith(s);
        const gcra = new Gcra((s.refill * 1_000) / s.window, { burst: s.capacity });
        // On instants that are whole numbers of 2^-7 ms every number either keeps is exact: the
        // two are one algorithm, and agree to the bit. (Elsewhere F = t + lead and Gcra's at and
        // ahead may round differently; real-clocks.test.ts pins the promises that hold there.)
        let now = Math.floor(start * 128) / 128;
        for (const [dt, cost] of arrivals) {
          now += Math.floor(dt * 128) / 128;
          const wait = gcra.next(now, cost);
          const d: Decision = engine.checkTokenBucket(key, "l", now, cost);
          expect(d.allowed).toBe(cost <= s.capacity && gcra.take(now, cost));
          expect(d.remaining).toBe(gcra.remaining(now));
          expect(d.retryAfter).toBe(cost > s.capacity ? Infinity : wait);
          expect(d.resetAfter).toBe(gcra.rateLimit(now).reset);
        }
      }),
    );
  });

  it("fixed window = Period(capacity, window, { align }), costs above one as that many events taken together", () => {
    fc.assert(
      fc.property(spec, origin, steps, (s, start, arrivals) => {
        const engine = engineWith(s);
        const period = new Period(s.capacity, s.window, { align: s.align });
        let now = start;
        for (const [dt, cost] of arrivals) {
          now += dt;
          const d = engine.checkWindow(key, "l", now, cost);
          // A cost of n on a Period: n events, all admitted or none (peeked first).
          const fits = cost <= period.left(now);
          if (fits) for (let i = 0; i < cost; i++) period.take(now);
          expect(d.allowed).toBe(fits);
          const r = period.rateLimit(now);
          expect(d.remaining).toBe(r.remaining);
          // Refused: a cost above the capacity never fits; otherwise it fits when the window ends.
          expect(d.retryAfter).toBe(fits ? 0 : cost > s.capacity ? Infinity : r.reset);
          expect(d.resetAfter).toBe(r.reset);
        }
      }),
    );
  });

  it("GCRA = Gcra(refill per window, burst), any cost up to the burst: allowed, remaining, retryAfter, resetAfter", () => {
    fc.assert(
      fc.property(spec, origin, steps, (s, start, arrivals) => {
        const engine = engineWith(s);
        const gcra = new Gcra((s.refill * 1_000) / s.window, { burst: s.burst });
        let now = start;
        for (const [dt, cost] of arrivals) {
          now += dt;
          const wait = gcra.next(now, cost);
          const d = engine.checkGcra(key, "l", now, cost);
          expect(d.allowed).toBe(gcra.take(now, cost));
          expect(d.remaining).toBe(gcra.remaining(now));
          sameWait(d.retryAfter, wait, now, exact);
          sameWait(d.resetAfter, gcra.rateLimit(now).reset, now, exact);
        }
      }),
    );
  });
});
