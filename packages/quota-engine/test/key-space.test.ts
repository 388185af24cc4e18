// The key space at the scale where its hash index matters: thousands of keys arriving, going idle,
// being dropped and coming back, so the index grows, probes through runs of colliding entries and
// shifts entries back on every deletion. A broken lookup or deletion would lose a key's state (it
// would then decide as a fresh key) or keep two; either changes a decision against an engine that
// never drops anything.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, limitSpec } from "@tideward/quota-engine";
import type { Decision } from "@tideward/quota-engine";

const KEYS = Array.from({ length: 3_000 }, (_, i) => new QuotaKey(`tenant-${i % 7}`, `user-${i}`, "api"));

function engine(sweepStep: number): QuotaEngine {
  const e = new QuotaEngine({ sweepStep });
  e.addLimit(limitSpec({ name: "api", capacity: 3, refill: 3, window: 100, burst: 2 }));
  return e;
}

const answer = (d: Decision): string => `${d.reason} ${d.remaining} ${d.retryAfter} ${d.resetAfter}`;

describe("the key space under churn", () => {
  it("answers as an engine that keeps every key, with thousands of keys coming and going (property)", () => {
    let dropped = 0;
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: KEYS.length - 1 }),
            fc.integer({ min: 0, max: 2 }),
            fc.integer({ min: 0, max: 50 }).map((x) => x / 100 + 0.0625),
          ),
          { minLength: 2_000, maxLength: 6_000 },
        ),
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom(1_000, 1.7e12 + 0.375),
        (visits, step, start) => {
          const kept = engine(0);
          const swept = engine(step);
          let now = start;
          for (const [k, kind, dt] of visits) {
            now += dt;
            // A key rebuilt from its parts half the time: the hint is then no help, the index is.
            const key = k % 2 === 0 ? KEYS[k] : new QuotaKey(KEYS[k].scope, KEYS[k].subject, "api");
            const check = (e: QuotaEngine): Decision =>
              kind === 0
                ? e.checkTokenBucket(key, "api", now)
                : kind === 1
                  ? e.checkWindow(key, "api", now)
                  : e.checkGcra(key, "api", now);
            expect(answer(check(swept))).toBe(answer(check(kept)));
          }
          const a = swept.stats();
          dropped += a.dropped;
          expect(a.keys).toBe(a.buckets + a.windows + a.gcra);
          expect(a.keys + a.dropped).toBeGreaterThanOrEqual(kept.stats().keys);
          // Every key still held is found again, exactly once: a snapshot lists each once and
          // restores to an engine that answers the same.
          const snapshot = swept.snapshot();
          expect(snapshot.buckets.length + snapshot.windows.length + snapshot.gcra.length).toBe(a.keys);
          const ids = snapshot.buckets.map((b) => `${b.key.scope}/${b.key.subject}`);
          expect(new Set(ids).size).toBe(ids.length);
          const restored = new QuotaEngine({ sweepStep: step });
          restored.restore(snapshot);
          for (const key of KEYS.slice(0, 200))
            expect(answer(restored.checkTokenBucket(key, "api", now))).toBe(
              answer(swept.checkTokenBucket(key, "api", now)),
            );
        },
      ),
      { numRuns: 15 },
    );
    // The runs dropped keys by the thousand (each about 5 000 of 6 000 visits' keys; the bound
    // leaves room for runs that fast-check biases to a few keys).
    expect(dropped).toBeGreaterThan(5_000);
  });

  it("holds only the keys in use when every key comes back after its state is a fresh key's again", () => {
    const e = engine(2);
    let now = 0;
    // 30 000 visits, 0.1 ms apart, to 3 000 keys in turn: each is back 300 ms later, long after
    // its bucket refilled (100 ms), so about 1 000 keys are in use at any time.
    for (let i = 0; i < 30_000; i++)
      expect(e.checkTokenBucket(KEYS[i % KEYS.length], "api", (now += 0.1)).allowed).toBe(true);
    const { keys, dropped } = e.stats();
    expect(keys).toBeLessThan(2_000);
    expect(dropped).toBeGreaterThan(25_000);
  });
});
