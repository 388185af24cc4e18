import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, limitSpec, perSecond } from "@tideward/quota-engine";
import { STARTS, opArb, replay, setUp, specArb } from "./traffic";

// A key object remembers where the last table found its state, so that a reused key skips the
// Map lookup. The hint must never change an answer: stale, shared by equal keys, or from another
// table or engine, it is checked before use.
describe.each(STARTS)("the slot a key object remembers, on %s", (_, starts) => {
  it("never changes a decision: shared key objects answer as fresh ones do (property)", () => {
    let dropped = 0;
    fc.assert(
      fc.property(
        fc.tuple(specArb, specArb, specArb),
        fc.array(opArb, { maxLength: 150 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 2, max: 8 }),
        starts,
        (specs, ops, step, maxKeys, start) => {
          // A small maxKeys and sweeping free slots and hand them to other keys, making hints stale.
          const shared = setUp(specs, { sweepStep: step, maxKeys });
          const fresh = setUp(specs, { sweepStep: step, maxKeys });
          const a = replay(shared, ops, start, true);
          const b = replay(fresh, ops, start, true, true);
          dropped += shared.stats().dropped;
          return JSON.stringify(a) === JSON.stringify(b);
        },
      ),
      { numRuns: 150 },
    );
    expect(dropped).toBeGreaterThan(40); // slots were freed and reused, many times (about 100 a scale)
  });
});

describe("the slot a key object remembers", () => {
  it("a slot freed and given to another key is not taken for the first key's", () => {
    const engine = new QuotaEngine({ sweepStep: 0 });
    engine.addLimit(limitSpec({ name: "r", capacity: 3, refill: 3, window: 1_000 }));
    const a = new QuotaKey("t", "a", "r");
    const b = new QuotaKey("t", "b", "r");
    engine.checkTokenBucket(a, "r", 0); // a: 2 left, full again at 333⅓ ms
    expect(engine.sweep(1_000, Infinity).dropped).toBe(1); // a's slot is free
    engine.checkTokenBucket(b, "r", 1_000, 3); // b takes that slot and empties it
    // a still remembers the slot, which now holds b's empty bucket: a must start full.
    expect(engine.checkTokenBucket(a, "r", 1_000, 3)).toMatchObject({ allowed: true, remaining: 0 });
    expect(engine.checkTokenBucket(b, "r", 1_000)).toMatchObject({ allowed: false, reason: "exhausted" });
    expect(engine.stats().buckets).toBe(2);
  });

  it("equal keys share state, whichever object looked it up last", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 4));
    const one = new QuotaKey("t", "u", "r");
    const two = new QuotaKey("t", "u", "r");
    const answers = [one, two, one, two, one].map((k) => engine.checkTokenBucket(k, "r", 0).remaining);
    expect(answers).toEqual([3, 2, 1, 0, 0]);
  });

  it("one key across limits, algorithms and engines keeps each state apart", () => {
    const first = new QuotaEngine();
    const second = new QuotaEngine();
    for (const e of [first, second]) {
      e.addLimit(perSecond("x", 5));
      e.addLimit(perSecond("y", 3));
    }
    const k = new QuotaKey("t", "u", "r");
    // Interleaved so the remembered slot is always the other table's.
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      seen.push(first.checkTokenBucket(k, "x", 0).remaining, first.checkTokenBucket(k, "y", 0).remaining);
      seen.push(first.checkGcra(k, "x", 0).remaining, second.checkTokenBucket(k, "x", 0).remaining);
    }
    expect(seen).toEqual([4, 2, 4, 4, 3, 1, 3, 3, 2, 0, 2, 2]);
  });

  it("is no part of the key's value: not listed, compared or printed", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 4));
    const used = new QuotaKey("t", "u", "r");
    engine.checkTokenBucket(used, "r", 0);
    const unused = new QuotaKey("t", "u", "r");
    expect(used).toEqual(unused);
    expect(Object.keys(used)).toEqual(["scope", "subject", "resource", "id"]);
    expect(JSON.stringify(used)).toBe(JSON.stringify(unused));
  });
});
