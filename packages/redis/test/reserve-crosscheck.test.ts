// Reserve, settle and cancel on Redis against the in-process engine, on random traffic at both
// clock scales: every reserve's report, every settle's charges (refunded, topped up, forgiven)
// and the checks between them that read what the settles left, bit for bit — token buckets of one
// number and of two, windows aligned or not, GCRA; top-ups in debt and capped.
import fc from "fast-check";
import { expect, it } from "vitest";
import { QuotaEngine, QuotaKey } from "@tideward/quota-engine";
import { answer } from "@tideward/quota-engine/conformance";
import { RedisQuotaEngine } from "@tideward/redis";
import { addBoth, came, chargesOf, checkOne, limitFields } from "./crosscheck";
import { patient, useRedis, withRedis } from "./server";

const keys = ["alice", "bob"].map((s) => new QuotaKey("t", s, "api"));
const limit = limitFields(24);
const op = fc.record({
  dt: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 400, noNaN: true })),
  // 0–3 a reserve, 4–5 a settle, 6 a cancel, 7 a check
  what: fc.nat(7),
  set: fc.array(
    fc.record({ key: fc.nat(1), limit: fc.nat(1), cost: fc.integer({ min: 1, max: 6 }), kind: fc.nat(2) }),
    { minLength: 1, maxLength: 3 },
  ),
  ttl: fc.constantFrom(undefined, 300, 1_500),
  // Which reservation made so far a settle or cancel names, and the units it gives each limit.
  pick: fc.nat(),
  units: fc.tuple(fc.option(fc.nat(14)), fc.option(fc.nat(14))),
});

withRedis("reservations on Redis against the in-process engine", () => {
  const redis = useRedis();
  let n = 0;
  for (const origin of [0, 1_722_222_222_000.5]) {
    it(`random reserves, settles and cancels decide alike (origin ${origin})`, async () => {
      const client = await redis.ioredis();
      await fc.assert(
        fc.asyncProperty(
          fc.tuple(limit, limit),
          fc.constantFrom("debt" as const, "cap" as const),
          fc.array(op, { minLength: 4, maxLength: 40 }),
          async (limits, topUp, ops) => {
            const local = new QuotaEngine({ topUp });
            const remote = new RedisQuotaEngine(client, { ...patient, prefix: `rx${n++}:`, topUp });
            await addBoth(local, [remote], limits);
            let now = origin;
            const ids: string[] = [];
            for (const { dt, what, set, ttl, pick, units } of ops) {
              now += dt;
              const charges = chargesOf(set, keys);
              if (what <= 3 || ids.length === 0) {
                const id = `r${ids.length}`;
                ids.push(id);
                const options = ttl === undefined ? { id } : { id, ttl };
                const got = await remote.reserve(charges, now, options);
                const want = local.reserve(charges, now, options);
                expect([got.code, got.id, got.committed, got.failedIndex, got.retryAfter, got.expiresAfter]).toEqual([
                  want.code,
                  want.id,
                  want.committed,
                  want.failedIndex,
                  want.retryAfter,
                  want.expiresAfter,
                ]);
                expect(got.decisions.map(answer)).toEqual(want.decisions.map(answer));
              } else if (what <= 6) {
                const id = ids[pick % ids.length];
                const actual: Record<string, number> = {};
                // A limit the reservation did not charge is answered alike too (unknown_dimension).
                units.forEach((u, i) => {
                  if (u !== null) actual[`l${i}`] = u;
                });
                const got = what === 6 ? await remote.cancel(id, now) : await remote.settle(id, actual, now);
                const want = what === 6 ? local.cancel(id, now) : local.settle(id, actual, now);
                expect(came(got)).toEqual(came(want));
              } else {
                const got = await checkOne(remote, charges[0], now);
                expect(answer(got)).toEqual(answer(checkOne(local, charges[0], now)));
              }
            }
          },
        ),
        { numRuns: 80 },
      );
    });
  }
});
