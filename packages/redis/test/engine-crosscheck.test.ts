// The Redis engine decides as the in-process QuotaEngine does, check for check, on random traffic
// (single checks of all three algorithms, atomic sets and peeks over shared keys, batches) at
// both clock scales: every figure, retryAfter and resetAfter included, bit for bit; token buckets
// of one number (the instant each is full again, an integer on Redis) and of two.
import fc from "fast-check";
import { expect, it } from "vitest";
import { QuotaEngine, QuotaKey } from "@tideward/quota-engine";
import { answer } from "@tideward/quota-engine/conformance";
import { RedisQuotaEngine } from "@tideward/redis";
import { addBoth, chargesOf, checkOne, limitFields, sameSet } from "./crosscheck";
import { useRedis, withRedis, patient, simulated } from "./server";

const keys = ["alice", "bob", "carol"].map((s) => new QuotaKey("t", s, "api"));
const op = fc.record({
  dt: fc.double({ min: 0, max: 300, noNaN: true }),
  // 0–6 a check or a set, 7 a peek of the set, 8 the set's charges as one batch of its first limit
  mode: fc.nat(8),
  set: fc.array(
    fc.record({ key: fc.nat(2), limit: fc.nat(1), cost: fc.integer({ min: 1, max: 7 }), kind: fc.nat(2) }),
    { minLength: 1, maxLength: 3 },
  ),
});
const specs = fc.tuple(limitFields(12), limitFields(12));

withRedis("the Redis engine against the in-process engine", () => {
  const redis = useRedis();
  let n = 0;
  for (const origin of [0, 1_722_222_222_000.5]) {
    it(`random traffic decides alike (origin ${origin})`, async () => {
      const client = await redis.ioredis();
      await fc.assert(
        fc.asyncProperty(specs, fc.array(op, { minLength: 5, maxLength: 40 }), async ([a, b], ops) => {
          const local = new QuotaEngine();
          const remote = new RedisQuotaEngine(client, { ...simulated, prefix: `x${n++}:` });
          await addBoth(local, [remote], [a, b]);
          let now = origin;
          for (const { dt, set, mode } of ops) {
            now += dt;
            const charges = chargesOf(set, keys);
            if (mode === 7) {
              const got = await remote.peekAtomic(charges, now);
              const want = local.peekAtomic(charges, now);
              sameSet(got, want);
            } else if (mode === 8) {
              // Inputs a fraction of a millisecond apart, the way a replayed log arrives.
              const inputs = charges.map((c, i) => ({ key: c.key, now: now + i * 0.37, cost: c.cost }));
              const got = await remote.checkMany(charges[0].limit, inputs, charges[0].kind);
              const want = local.checkMany(charges[0].limit, inputs, charges[0].kind);
              expect(got.decisions.map(answer)).toEqual(want.decisions.map(answer));
              expect([got.allowed, got.denied]).toEqual([want.allowed, want.denied]);
              now += (inputs.length - 1) * 0.37;
            } else if (charges.length === 1) {
              const got = await checkOne(remote, charges[0], now);
              expect(answer(got)).toEqual(answer(checkOne(local, charges[0], now)));
              expect(got.path).toBe("store");
            } else {
              const got = await remote.checkAtomic(charges, now);
              const want = local.checkAtomic(charges, now);
              sameSet(got, want);
            }
          }
        }),
        { numRuns: 40 },
      );
    });
  }
});

// Sets of token buckets only, the path an atomic charge of several dimensions takes: buckets of
// one number and of two, drained by costs near their capacity and calls close together, keys
// charged once or twice in a set.
const bucketOp = fc.record({
  dt: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 40, noNaN: true })),
  set: fc.array(fc.record({ key: fc.nat(2), limit: fc.nat(1), cost: fc.integer({ min: 1, max: 6 }) }), {
    minLength: 2,
    maxLength: 4,
  }),
});
const bucketSpec = fc.record({
  capacity: fc.integer({ min: 1, max: 8 }),
  refill: fc.integer({ min: 1, max: 20 }),
  window: fc.oneof(fc.double({ min: 100, max: 2_000, noNaN: true }), fc.constantFrom(500, 1_000, 1_600, 2_000)),
});

withRedis("the Redis engine against the in-process engine, sets of token buckets", () => {
  const redis = useRedis();
  let n = 0;
  for (const origin of [0, 1_722_222_222_000.5]) {
    it(`drained buckets and repeated keys decide alike (origin ${origin})`, async () => {
      const client = await redis.ioredis();
      await fc.assert(
        fc.asyncProperty(
          fc.tuple(bucketSpec, bucketSpec),
          fc.array(bucketOp, { minLength: 5, maxLength: 40 }),
          async (limits, ops) => {
            const local = new QuotaEngine();
            const remote = new RedisQuotaEngine(client, { ...simulated, prefix: `b${n++}:` });
            await addBoth(local, [remote], limits);
            let now = origin + 100;
            for (const { dt, set } of ops) {
              now += dt;
              const charges = chargesOf(set, keys);
              const got = await remote.checkAtomic(charges, now);
              const want = local.checkAtomic(charges, now);
              sameSet(got, want);
            }
          },
        ),
        { numRuns: 40 },
      );
    });
  }
});

// Keys that expire mid-trace on Redis's clock: with a short margin and quiet spells longer than
// a limit takes to be fresh again, Redis drops keys between calls while the in-process engine
// sweeps its idle ones, and every decision after must still be the same. The callers' clock runs
// with real time (an origin plus the time elapsed), as it must for expiry to mean anything.
const fast = fc.record({
  capacity: fc.integer({ min: 1, max: 4 }),
  refill: fc.integer({ min: 1, max: 4 }),
  window: fc.integer({ min: 10, max: 40 }),
  burst: fc.integer({ min: 1, max: 3 }),
  align: fc.boolean(),
});
const quietOp = fc.record({
  // ms of real time before the call: mostly short, sometimes past every limit's refill
  sleep: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 45, max: 70 })),
  mode: fc.nat(2), // 0 a single check, 1 a set, 2 a batch of the set's charges
  set: fc.array(
    fc.record({ key: fc.nat(2), limit: fc.nat(1), cost: fc.integer({ min: 1, max: 3 }), kind: fc.nat(2) }),
    { minLength: 1, maxLength: 3 },
  ),
});

withRedis("the Redis engine against the in-process engine, keys expiring mid-trace", () => {
  const redis = useRedis();
  let n = 0;
  for (const origin of [0, 1_722_222_222_000.5]) {
    it(`short margins: decisions after Redis expired a key equal the in-process ones after its sweep (origin ${origin})`, async () => {
      const client = await redis.ioredis();
      const direct = await redis.raw();
      const expired = async (): Promise<number> =>
        Number(/expired_keys:(\d+)/.exec(await direct.info("stats"))?.[1] ?? 0);
      const expiredBefore = await expired();
      let swept = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.tuple(fast, fast),
          fc.constantFrom(1, 5, 20),
          fc.array(quietOp, { minLength: 6, maxLength: 14 }),
          async ([a, b], margin, ops) => {
            const local = new QuotaEngine({ sweepStep: 0 });
            const remote = new RedisQuotaEngine(client, { ...patient, prefix: `e${n++}:`, expiryMargin: margin });
            await addBoth(local, [remote], [a, b]);
            const t0 = performance.now();
            let last = origin;
            for (const { sleep, mode, set } of ops) {
              await new Promise((r) => setTimeout(r, sleep));
              // Never behind the previous call: the in-process engine keeps one clock.
              const now = Math.max(last, origin + (performance.now() - t0));
              last = now;
              swept += local.sweep(now, 1_000_000).dropped;
              const charges = chargesOf(set, keys);
              if (mode === 2) {
                const inputs = charges.map((c) => ({ key: c.key, now, cost: c.cost }));
                const got = await remote.checkMany(charges[0].limit, inputs, charges[0].kind);
                const want = local.checkMany(charges[0].limit, inputs, charges[0].kind);
                expect(got.decisions.map(answer)).toEqual(want.decisions.map(answer));
              } else if (mode === 0 || charges.length === 1) {
                const got = await checkOne(remote, charges[0], now);
                expect(answer(got)).toEqual(answer(checkOne(local, charges[0], now)));
              } else {
                sameSet(await remote.checkAtomic(charges, now), local.checkAtomic(charges, now));
              }
            }
          },
        ),
        { numRuns: 5 },
      );
      // The trace did what it is for: keys expired on Redis and were swept in process.
      expect(await expired()).toBeGreaterThan(expiredBefore);
      expect(swept).toBeGreaterThan(0);
    });
  }
});
