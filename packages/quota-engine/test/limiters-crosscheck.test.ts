// The engine keeps its own flat state (slots in typed arrays) rather than one limiter object per
// key, so its math is written again. This pins it to @tideward/limiters': the same traffic on
// one key through the engine and through the limiter objects gets the same answers.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Bucket, Gcra, Period } from "@tideward/limiters";
import { QuotaEngine, QuotaKey, limitSpec } from "@tideward/quota-engine";

const key = new QuotaKey("tenant", "alice", "api");

const spec = fc.record({
  capacity: fc.integer({ min: 1, max: 50 }),
  refill: fc.integer({ min: 1, max: 50 }),
  window: fc.integer({ min: 1, max: 5_000 }),
  burst: fc.integer({ min: 1, max: 50 }),
  align: fc.boolean(),
});

// Forward-moving arrivals (the engine treats an earlier `now` as the latest seen, engine-wide;
// the limiters treat it per object, so only forward clocks are comparable), with a cost each.
const arrivals = fc.tuple(
  fc.integer({ min: 0, max: 1e6 }),
  fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 1, max: 8 })), { minLength: 1, maxLength: 120 }),
);

function engineWith(s: { capacity: number; refill: number; window: number; burst: number; align: boolean }): QuotaEngine {
  const engine = new QuotaEngine();
  const added = engine.addLimit(limitSpec({ name: "l", ...s }));
  expect(added.ok).toBe(true);
  return engine;
}

describe("the engine decides as @tideward/limiters does", () => {
  it("token bucket = Bucket(refill per window, burst capacity), any cost", () => {
    fc.assert(
      fc.property(spec, arrivals, (s, [start, steps]) => {
        const engine = engineWith(s);
        const bucket = new Bucket((s.refill * 1_000) / s.window, { burst: s.capacity, now: start });
        let now = start;
        for (const [dt, cost] of steps) {
          now += dt;
          const d = engine.checkTokenBucket(key, "l", now, cost);
          expect(d.allowed).toBe(bucket.take(now, cost));
          expect(d.remaining).toBe(Math.floor(bucket.tokens(now) + 1e-9 * s.capacity));
        }
      }),
    );
  });

  it("fixed window = Period(capacity, window, { align }), unit cost", () => {
    fc.assert(
      fc.property(spec, arrivals, (s, [start, steps]) => {
        const engine = engineWith(s);
        const period = new Period(s.capacity, s.window, { align: s.align });
        let now = start;
        for (const [dt] of steps) {
          now += dt;
          const d = engine.checkWindow(key, "l", now, 1);
          expect(d.allowed).toBe(period.take(now) !== "over");
          expect(d.remaining).toBe(period.left(now));
        }
      }),
    );
  });

  it("GCRA = Gcra(refill per window, burst), any cost up to the burst", () => {
    fc.assert(
      fc.property(spec, arrivals, (s, [start, steps]) => {
        const engine = engineWith(s);
        const gcra = new Gcra((s.refill * 1_000) / s.window, { burst: s.burst });
        let now = start;
        for (const [dt, cost] of steps) {
          now += dt;
          const d = engine.checkGcra(key, "l", now, cost);
          expect(d.allowed).toBe(gcra.take(now, cost));
          expect(d.remaining).toBe(gcra.remaining(now));
        }
      }),
    );
  });
});
