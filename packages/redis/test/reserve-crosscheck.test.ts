// Reserve, settle and cancel on Redis against the in-process engine, on random traffic at both
// clock scales: every reserve's report, every settle's charges (refunded, topped up, forgiven)
// and the checks between them that read what the settles left, bit for bit — token buckets of one
// number and of two, windows aligned or not, GCRA; top-ups in debt and capped.
import fc from "fast-check";
import { expect, it } from "vitest";
import { QuotaEngine, QuotaKey, limitSpec } from "@tideward/quota-engine";
import type { ChargeKind, QuotaCharge, SettleResult } from "@tideward/quota-engine";
import { answer } from "@tideward/quota-engine/conformance";
import { RedisQuotaEngine } from "@tideward/redis";
import { patient, useRedis, withRedis } from "./server";

const KINDS: ChargeKind[] = ["bucket", "window", "gcra"];
const keys = ["alice", "bob"].map((s) => new QuotaKey("t", s, "api"));
const limit = fc.record({
  capacity: fc.integer({ min: 1, max: 24 }),
  refill: fc.integer({ min: 1, max: 30 }),
  // Any window (a bucket of two numbers, mostly), or one whose ms a token can be on the 2^-7 ms
  // grid (a bucket of one number for most refills).
  window: fc.oneof(fc.double({ min: 100, max: 3_000, noNaN: true }), fc.constantFrom(500, 1_000, 1_600, 2_000)),
  burst: fc.integer({ min: 1, max: 8 }),
  align: fc.boolean(),
});
const op = fc.record({
  dt: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 400, noNaN: true })),
  // 0–3 a reserve, 4–5 a settle, 6 a cancel, 7 a check
  what: fc.nat(7),
  set: fc.array(
    fc.record({ key: fc.nat(1), limit: fc.nat(1), cost: fc.integer({ min: 1, max: 6 }), kind: fc.nat(2) }),
    { minLength: 1, maxLength: 3 },
  ),
  // A fractional time to live sends a reserve under an id the engine made in the general form.
  ttl: fc.constantFrom(undefined, 300, 1_500, 700.5),
  // Which reservation made so far a settle or cancel names, and the units it gives each limit.
  pick: fc.nat(),
  units: fc.tuple(fc.option(fc.nat(14)), fc.option(fc.nat(14))),
});

// What a settle came to, without its keys (nor the id its reason names): the part both engines
// must agree on.
const came = (r: SettleResult, id: string): unknown =>
  r.ok ? r.charges.map(({ key: _key, ...rest }) => rest) : [r.code, r.reason.split(id).join("<id>")];

withRedis("reservations on Redis against the in-process engine", () => {
  const redis = useRedis();
  let n = 0;
  // Under the caller's ids, and under ids each engine makes (a set of buckets and GCRA on the
  // caller's clock then keeps its record's head alone, its charges in the process).
  for (const [origin, made] of [
    [0, false],
    [1_722_222_222_000.5, false],
    [0, true],
    [1_722_222_222_000.5, true],
  ] as const) {
    it(`random reserves, settles and cancels decide alike (origin ${origin}${made ? ", ids the engine made" : ""})`, async () => {
      const client = await redis.ioredis();
      await fc.assert(
        fc.asyncProperty(
          fc.tuple(limit, limit),
          fc.constantFrom("debt" as const, "cap" as const),
          fc.array(op, { minLength: 4, maxLength: 40 }),
          async (limits, topUp, ops) => {
            const local = new QuotaEngine({ topUp });
            const remote = new RedisQuotaEngine(client, { ...patient, prefix: `rx${n++}:`, topUp });
            for (const [i, s] of limits.entries()) {
              const spec = limitSpec({ name: `l${i}`, ...s });
              local.addLimit(spec);
              await remote.addLimit(spec);
            }
            let now = origin;
            // Each reservation's id on Redis and in process.
            const ids: [string, string][] = [];
            for (const { dt, what, set, ttl, pick, units } of ops) {
              now += dt;
              const charges: QuotaCharge[] = set.map((c) => ({
                key: keys[c.key],
                limit: `l${c.limit}`,
                cost: c.cost,
                kind: KINDS[c.kind],
              }));
              if (what <= 3 || ids.length === 0) {
                const id = made ? undefined : `r${ids.length}`;
                const options = ttl === undefined ? { id } : { id, ttl };
                const got = await remote.reserve(charges, now, options);
                const want = local.reserve(charges, now, options);
                // A refused reserve's made id names nothing to settle (in process it is "").
                if (id !== undefined || want.committed) ids.push([got.id, want.id]);
                expect([
                  got.code,
                  id ?? "made",
                  got.committed,
                  got.failedIndex,
                  got.retryAfter,
                  got.expiresAfter,
                ]).toEqual([
                  want.code,
                  id ?? "made",
                  want.committed,
                  want.failedIndex,
                  want.retryAfter,
                  want.expiresAfter,
                ]);
                expect(got.decisions.map(answer)).toEqual(want.decisions.map(answer));
              } else if (what <= 6) {
                const [id, localId] = ids[pick % ids.length];
                const actual: Record<string, number> = {};
                // A limit the reservation did not charge is answered alike too (unknown_dimension).
                units.forEach((u, i) => {
                  if (u !== null) actual[`l${i}`] = u;
                });
                const got = what === 6 ? await remote.cancel(id, now) : await remote.settle(id, actual, now);
                const want = what === 6 ? local.cancel(localId, now) : local.settle(localId, actual, now);
                expect(came(got, id)).toEqual(came(want, localId));
              } else {
                const c = charges[0];
                const got =
                  c.kind === "bucket"
                    ? await remote.checkTokenBucket(c.key, c.limit, now, c.cost)
                    : c.kind === "window"
                      ? await remote.checkWindow(c.key, c.limit, now, c.cost)
                      : await remote.checkGcra(c.key, c.limit, now, c.cost);
                const want =
                  c.kind === "bucket"
                    ? local.checkTokenBucket(c.key, c.limit, now, c.cost)
                    : c.kind === "window"
                      ? local.checkWindow(c.key, c.limit, now, c.cost)
                      : local.checkGcra(c.key, c.limit, now, c.cost);
                expect(answer(got)).toEqual(answer(want));
              }
            }
          },
        ),
        { numRuns: 80 },
      );
    });
  }
});
