// Keys whose parts hold the characters Redis names treat specially, and request ids reused: a
// scope with "}" (which ends a cluster hash tag) works like any other, and a repeat of a request
// id replays the first call's answer whatever it now asks for, single checks included.
import type Redis from "ioredis";
import { expect, it } from "vitest";
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import { answer } from "@tideward/quota-engine/conformance";
import { RedisQuotaEngine, slotOf } from "@tideward/redis";
import { bucketTokens, patient, useRedis, withRedis } from "./server";

const ORIGINS = [0.5, 1_722_222_222_000.5];
let n = 0;

withRedis("scopes with braces", () => {
  const redis = useRedis();

  for (const origin of ORIGINS) {
    it(`a scope holding "}" or "{" is charged like any other, its keys on one slot (origin ${origin})`, async () => {
      const remote = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: `br${n++}:` });
      const local = new QuotaEngine();
      for (const e of [remote, local]) {
        await e.addLimit(limitSpec({ name: "user", capacity: 3, refill: 1, window: 1_000 }));
        await e.addLimit(limitSpec({ name: "tenant", capacity: 5, refill: 1, window: 1_000 }));
      }
      // The in-process engine keeps one clock for all its keys: time only moves on.
      let now = origin;
      for (const scope of ["a}b", "}", "{x}", "a)b", "}{"]) {
        const user = new QuotaKey(scope, "alice", "api");
        const tenant = new QuotaKey(scope, "*", "api");
        // One tenant's keys share a slot, so a set of them is sent, not refused.
        expect(slotOf(remote.redisKey(user, "user"))).toBe(slotOf(remote.redisKey(tenant, "tenant")));
        for (let i = 0; i < 4; i++) {
          now += 100;
          const set = [charge(user, "user"), charge(tenant, "tenant")];
          const got = await remote.checkAtomic(set, now);
          const want = local.checkAtomic(set, now);
          expect([got.allowed, got.retryAfter, got.path]).toEqual([want.allowed, want.retryAfter, "store"]);
          expect(got.decisions.map(answer)).toEqual(want.decisions.map(answer));
          expect(answer(await remote.checkGcra(user, "user", now))).toEqual(answer(local.checkGcra(user, "user", now)));
          const id = await remote.checkWindow(user, "user", now, 1, { requestId: `w${scope}${i}` });
          expect(answer(id)).toEqual(answer(local.checkWindow(user, "user", now)));
        }
      }
      // "a}b" and "a)b" share a tag once "}" is replaced, never a state.
      const names = ["a}b", "a)b"].map((s) => remote.redisKey(new QuotaKey(s, "alice", "api"), "user"));
      expect(new Set(names).size).toBe(2);
    });
  }

  it("a hashTag that answers other than a non-empty string, or throws, is named before anything is sent", async () => {
    const key = new QuotaKey("acme", "alice", "api");
    for (const [hashTag, message] of [
      [() => "", 'RedisPolicy hashTag must return a non-empty string, got "" for the key 4:acme5:alice3:api'],
      [() => 7, "RedisPolicy hashTag must return a non-empty string, got 7 for the key 4:acme5:alice3:api"],
      [
        () => {
          throw new Error("tag lookup failed");
        },
        "tag lookup failed",
      ],
    ] as const) {
      const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, hashTag: hashTag as never });
      await engine.addLimit(limitSpec({ name: "user", capacity: 3, refill: 1, window: 1_000 }));
      expect(() => engine.checkTokenBucket(key, "user", 0)).toThrow(message);
      await expect(engine.checkAtomic([charge(key, "user")], 0)).rejects.toThrow(message);
      await expect(engine.checkMany("user", [{ key, now: 0 }])).rejects.toThrow(message);
    }
  });
});

withRedis("request ids reused", () => {
  const redis = useRedis();

  for (const origin of ORIGINS) {
    it(`a repeat with other costs replays the first answer and charges nothing, single checks saying replayed (origin ${origin})`, async () => {
      const direct: Redis = await redis.raw();
      const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: `rid${n++}:` });
      await engine.addLimit(limitSpec({ name: "user", capacity: 10, refill: 1, window: 3_600_000 }));
      await engine.addLimit(limitSpec({ name: "tenant", capacity: 50, refill: 1, window: 3_600_000 }));
      const alice = new QuotaKey("acme", "alice", "api");
      const acme = new QuotaKey("acme", "*", "api");
      const tokens = async (key: QuotaKey, limit: string): Promise<number | undefined> =>
        bucketTokens(
          await direct.getBuffer(engine.redisKey(key, limit)),
          engine.limit(limit) ?? limitSpec({ name: "none", capacity: 1 }),
          origin,
        );

      // Single checks of every kind.
      for (const check of ["checkTokenBucket", "checkWindow", "checkGcra"] as const) {
        const id = `one-${check}`;
        const first = await engine[check](alice, "user", origin, 3, { requestId: id });
        expect([first.allowed, first.cost, first.replayed]).toEqual([true, 3, false]);
        const again = await engine[check](alice, "user", origin + 5, 7, { requestId: id });
        expect(again.replayed).toBe(true);
        expect(answer(again)).toEqual(answer(first)); // the first call's cost and figures
      }
      expect(await tokens(alice, "user")).toBe(7); // the bucket charged once, for 3

      const set = [charge(alice, "user", 2), charge(acme, "tenant", 10)];
      const first = await engine.checkAtomic(set, origin + 10, { requestId: "set-1" });
      const before = [await tokens(alice, "user"), await tokens(acme, "tenant")];
      for (const costs of [
        [2, 10],
        [1, 40],
        [9, 1],
      ]) {
        const again = await engine.checkAtomic(
          [charge(alice, "user", costs[0]), charge(acme, "tenant", costs[1])],
          origin + 20,
          { requestId: "set-1" },
        );
        expect([again.replayed, again.committed, again.retryAfter]).toEqual([true, true, 0]);
        expect(again.decisions.map(answer)).toEqual(first.decisions.map(answer));
        expect(again.decisions.map((d) => d.replayed)).toEqual([true, true]);
      }
      expect([await tokens(alice, "user"), await tokens(acme, "tenant")]).toEqual(before);
      // Another set of limits under the same id is refused, naming it, and nothing is charged.
      await expect(engine.checkAtomic([charge(alice, "user", 1)], origin + 30, { requestId: "set-1" })).rejects.toThrow(
        'requestId "set-1" was first used for charges to other limits',
      );
      await expect(
        engine.checkAtomic([charge(alice, "tenant"), charge(acme, "user")], origin + 30, { requestId: "set-1" }),
      ).rejects.toThrow(RangeError);
      expect([await tokens(alice, "user"), await tokens(acme, "tenant")]).toEqual(before);
      // A hierarchical check says replayed too.
      await engine.addLink({ child: alice, parent: acme, limit: "user", ratio: 1 });
      const h = await engine.checkHierarchy(alice, "user", origin + 40, 1, "bucket", { requestId: "h" });
      const h2 = await engine.checkHierarchy(alice, "user", origin + 40, 2, "bucket", { requestId: "h" });
      expect([h.replayed, h2.replayed, answer(h2)]).toEqual([false, true, answer(h)]);
    });

    it(`a repeat naming other limits of the same numbers, other keys, another kind or another order is refused, naming the id, and charges nothing (origin ${origin})`, async () => {
      const direct: Redis = await redis.raw();
      const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: `rid${n++}:` });
      // Two limits with the very same capacity and rate: their charges send the same numbers.
      await engine.addLimit(limitSpec({ name: "requests", capacity: 10 }));
      await engine.addLimit(limitSpec({ name: "tokens", capacity: 10 }));
      const alice = new QuotaKey("acme", "alice", "api");
      const bob = new QuotaKey("acme", "bob", "api");
      const acme = new QuotaKey("acme", "*", "api");
      const state = async (): Promise<string[]> =>
        Promise.all(
          (await direct.keys(`rid${n - 1}:*`))
            .sort()
            .map(async (k) => `${k} ${(await direct.getBuffer(k))?.toString("hex")}`),
        );
      const refused = 'requestId "A" was first used for charges to other limits';
      expect((await engine.checkTokenBucket(alice, "requests", origin, 1, { requestId: "A" })).replayed).toBe(false);
      let before = await state();
      await expect(engine.checkTokenBucket(alice, "tokens", origin, 5, { requestId: "A" })).rejects.toThrow(refused);
      await expect(engine.checkTokenBucket(bob, "requests", origin, 1, { requestId: "A" })).rejects.toThrow(refused);
      await expect(engine.checkWindow(alice, "requests", origin, 1, { requestId: "A" })).rejects.toThrow(RangeError);
      expect(await state()).toEqual(before);
      // The same charge again is replayed.
      expect((await engine.checkTokenBucket(alice, "requests", origin, 3, { requestId: "A" })).replayed).toBe(true);
      const set = [charge(alice, "requests", 1), charge(acme, "tokens", 2)];
      expect((await engine.checkAtomic(set, origin, { requestId: "B" })).replayed).toBe(false);
      before = await state();
      for (const other of [
        [...set].reverse(),
        [set[0], charge(acme, "requests", 2)],
        [charge(alice, "tokens", 1), set[1]],
        [charge(bob, "requests", 1), set[1]],
      ]) {
        await expect(engine.checkAtomic(other, origin, { requestId: "B" })).rejects.toThrow(
          'requestId "B" was first used for charges to other limits',
        );
      }
      expect(await state()).toEqual(before);
      const again = await engine.checkAtomic(set, origin + 1, { requestId: "B" });
      expect([again.replayed, again.committed]).toEqual([true, true]);
      expect(await state()).toEqual(before);
    });
  }
});
