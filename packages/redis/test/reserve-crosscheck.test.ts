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
import { simulated, useRedis, withRedis } from "./server";

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
  // A fractional time to live sends a reserve under an id the engine made in the general form.
  ttl: fc.constantFrom(undefined, 300, 1_500, 700.5),
  // Which reservation made so far a settle or cancel names, and the units it gives each limit.
  pick: fc.nat(),
  units: fc.tuple(fc.option(fc.nat(14)), fc.option(fc.nat(14))),
});

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
            const remote = new RedisQuotaEngine(client, { ...simulated, prefix: `rx${n++}:`, topUp });
            await addBoth(local, [remote], limits);
            let now = origin;
            // Each reservation's id on Redis and in process.
            const ids: [string, string][] = [];
            for (const { dt, what, set, ttl, pick, units } of ops) {
              now += dt;
              const charges = chargesOf(set, keys);
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
