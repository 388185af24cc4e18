// Limits that change while the service runs, on Redis against the in-process engine, on random
// traffic at both clock scales: checks of every kind, charge sets, batches, reserves and settles,
// between replaces, overrides set and taken away, and limits removed and added again — decided
// bit for bit alike. Two instances share the store and each makes every change, as a fleet does:
// a key's state is re-based once however many make it.
import fc from "fast-check";
import { expect, it } from "vitest";
import { QuotaEngine, QuotaKey, limitSpec } from "@tideward/quota-engine";
import type { LimitFields, Result } from "@tideward/quota-engine";
import { answer } from "@tideward/quota-engine/conformance";
import { RedisQuotaEngine } from "@tideward/redis";
import { addBoth, came, chargesOf, checkOne, limitFields, sameSet } from "./crosscheck";
import { simulated, useRedis, withRedis } from "./server";

const keys = ["alice", "bob", "carol"].map((s) => new QuotaKey("t", s, "api"));
const limit = limitFields(24);
const fields = fc.record(
  {
    capacity: fc.integer({ min: 1, max: 40 }),
    refill: fc.integer({ min: 1, max: 30 }),
    window: fc.constantFrom(250, 1_000, 1_600),
    burst: fc.integer({ min: 1, max: 8 }),
  },
  { requiredKeys: [] },
);
const op = fc.record({
  dt: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 400, noNaN: true })),
  // 0–4 a check, 5 a set, 6 a batch, 7 a replace, 8 an override set or taken away, 9 a reserve,
  // 10 a settle, 11 a limit removed and added again
  what: fc.nat(11),
  set: fc.array(
    fc.record({ key: fc.nat(2), limit: fc.nat(1), cost: fc.integer({ min: 1, max: 6 }), kind: fc.nat(2) }),
    { minLength: 1, maxLength: 3 },
  ),
  spec: limit,
  fields,
  pick: fc.nat(),
  units: fc.nat(14),
});

const code = (r: Result<string>): string => (r.ok ? "ok" : `${r.code}: ${r.reason}`);

withRedis("limits that change on Redis against the in-process engine", () => {
  const redis = useRedis();
  let n = 0;
  for (const origin of [0, 1_722_222_222_000.5]) {
    it(`random replaces, overrides and removals between charges decide alike (origin ${origin})`, async () => {
      const [c1, c2] = [await redis.ioredis(), await redis.nodeRedis()];
      await fc.assert(
        fc.asyncProperty(fc.tuple(limit, limit), fc.array(op, { minLength: 4, maxLength: 40 }), async (limits, ops) => {
          const local = new QuotaEngine();
          const prefix = `rt${n++}:`;
          const fleet = [c1, c2].map((c) => new RedisQuotaEngine(c, { ...simulated, prefix, hashTag: () => "q" }));
          const add = async (name: string, s: Omit<LimitFields, "name">): Promise<void> => {
            const spec = limitSpec({ ...s, name });
            expect(local.addLimit(spec).ok).toBe(true);
            for (const e of fleet) expect((await e.addLimit(spec)).ok).toBe(true);
          };
          await addBoth(local, fleet, limits);
          let now = origin;
          const ids: string[] = [];
          const by = new Map<string, RedisQuotaEngine>();
          for (const [x, { dt, what, set, spec, fields: f, pick, units }] of ops.entries()) {
            now += dt;
            const remote = fleet[x % 2];
            const charges = chargesOf(set, keys);
            const c = charges[0];
            if (what <= 4) {
              expect(answer(await checkOne(remote, c, now))).toEqual(answer(checkOne(local, c, now)));
            } else if (what === 5) {
              sameSet(await remote.checkAtomic(charges, now), local.checkAtomic(charges, now));
            } else if (what === 6) {
              const inputs = set.map((s, i) => ({ key: keys[s.key], now: now + i, cost: s.cost }));
              const got = await remote.checkMany(c.limit, inputs, c.kind);
              const want = local.checkMany(c.limit, inputs, c.kind);
              expect(got.decisions.map(answer)).toEqual(want.decisions.map(answer));
              // The in-process engine's clock is at the last input's now (Redis keeps none).
              now += inputs.length - 1;
            } else if (what === 7) {
              const next = limitSpec({ ...spec, name: c.limit });
              const want = code(local.replaceLimit(next, now));
              for (const e of fleet) expect(code(await e.replaceLimit(next, now))).toBe(want);
            } else if (what === 8) {
              const has = local.override(c.key, c.limit) !== undefined;
              const want = code(
                has && pick % 2 === 0
                  ? local.removeOverride(c.key, c.limit, now)
                  : local.setOverride(c.key, c.limit, f, now),
              );
              for (const e of fleet)
                expect(
                  code(
                    await (has && pick % 2 === 0
                      ? e.removeOverride(c.key, c.limit, now)
                      : e.setOverride(c.key, c.limit, f, now)),
                  ),
                ).toBe(want);
            } else if (what === 9) {
              const id = `r${ids.length}`;
              ids.push(id);
              by.set(id, remote);
              const got = await remote.reserve(charges, now, { id });
              const want = local.reserve(charges, now, { id });
              expect([got.code, got.committed, got.retryAfter]).toEqual([want.code, want.committed, want.retryAfter]);
              expect(got.decisions.map(answer)).toEqual(want.decisions.map(answer));
            } else if (what === 10 && ids.length > 0) {
              // Settled from the instance that reserved it, which keeps its charges.
              const id = ids[pick % ids.length];
              const actual = { l0: units, l1: 14 - units };
              const got = await (by.get(id) as RedisQuotaEngine).settle(id, actual, now);
              expect(came(got)).toEqual(came(local.settle(id, actual, now)));
            } else if (what === 11) {
              expect(code(local.removeLimit(c.limit))).toBe("ok");
              for (const e of fleet) expect(code(await e.removeLimit(c.limit))).toBe("ok");
              await add(c.limit, spec);
            }
          }
        }),
        { numRuns: 60 },
      );
    });
  }
});
