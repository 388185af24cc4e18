import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, limitSpec, perSecond } from "@tideward/quota-engine";
import { STARTS, opArb, replay, setUp, specArb } from "./traffic";

describe.each(STARTS)("dropping idle keys (property), on %s", (_, starts) => {
  it("never changes a decision: the same traffic with and without sweeping answers the same", () => {
    let dropped = 0;
    fc.assert(
      fc.property(
        fc.tuple(specArb, specArb, specArb),
        fc.array(opArb, { maxLength: 150 }),
        fc.integer({ min: 1, max: 4 }),
        starts,
        (specs, ops, step, start) => {
          const kept = setUp(specs, { sweepStep: 0 });
          const swept = setUp(specs, { sweepStep: step });
          const a = replay(kept, ops, start, false);
          const b = replay(swept, ops, start, true);
          dropped += swept.stats().dropped;
          return JSON.stringify(a) === JSON.stringify(b) && swept.stats().keys <= kept.stats().keys;
        },
      ),
      { numRuns: 150 },
    );
    // The runs did drop keys, many of them (about 70 in 150 runs; the bound leaves room for chance).
    expect(dropped).toBeGreaterThan(20);
  });
});

describe("sweep", () => {
  const keys = Array.from({ length: 10 }, (_, i) => new QuotaKey("t", `k${i}`, "r"));

  function busy(): QuotaEngine {
    const engine = new QuotaEngine({ sweepStep: 0 });
    engine.addLimit(limitSpec({ name: "r", capacity: 2, refill: 2, window: 1_000 }));
    keys.forEach((k, i) => {
      engine.checkTokenBucket(k, "r", i * 100); // full again at i·100 + 500
      engine.checkWindow(k, "r", i * 100); // the window closes at i·100 + 1 000
      engine.checkGcra(k, "r", i * 100); // at rest at i·100 + 500
    });
    return engine;
  }

  it("drops exactly the keys whose state equals a fresh key's", () => {
    const engine = busy();
    expect(engine.sweep(1_000, Infinity)).toEqual({ visited: 30, dropped: 6 + 1 + 6, keys: 17, expired: 0 });
    expect(engine.stats()).toMatchObject({ buckets: 4, windows: 9, gcra: 4, dropped: 13 });
  });

  it("examines at most `budget` entries a call, resuming where it stopped", () => {
    const engine = busy();
    const visits: number[] = [];
    let dropped = 0;
    for (let i = 0; i < 12; i++) {
      const r = engine.sweep(5_000, 4);
      visits.push(r.visited);
      dropped += r.dropped;
    }
    expect(visits.every((v) => v <= 4)).toBe(true);
    expect(dropped).toBe(30);
    expect(engine.stats().keys).toBe(0);
  });

  it("advances the engine's clock, so later calls cannot step back before it", () => {
    const engine = busy();
    engine.sweep(10_000, 0);
    expect(engine.snapshot().clock).toBe(10_000);
  });

  it("refuses a bad budget or now", () => {
    const engine = busy();
    expect(() => engine.sweep(0, -1)).toThrow("sweep budget must be 0 or more, got -1");
    expect(() => engine.sweep(NaN)).toThrow(RangeError);
  });

  it("with the default sweepStep keeps memory to the keys in use, not every key seen", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 1));
    // 200 000 distinct keys, 1 000 new ones a simulated second, each idle again a second later.
    for (let i = 0; i < 200_000; i++) engine.checkTokenBucket(new QuotaKey("t", `u${i}`, "r"), "r", i);
    const { keys: live, dropped } = engine.stats();
    expect(live).toBeLessThan(3_000);
    expect(live + dropped).toBe(200_000);
  });
});
