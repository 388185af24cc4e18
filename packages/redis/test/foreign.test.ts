// What someone else's value under a tideward name gets: a key of another Redis type (a hash, a
// list, a string where a hash belongs), bytes that are not tideward's, or numbers tideward never
// writes (NaN, infinities, instants past ±2^46 ms, amounts past ±2^53) is refused with a
// ScriptError naming the key, on every path, and nothing is written over it. It is a bad value,
// not an outage: the breaker never counts it, so every other key keeps its answers from Redis
// (with `outage: "closed"`, a count of it would refuse everyone).
import { expect, it } from "vitest";
import { QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import type { LimitSpec } from "@tideward/quota-engine";
import type Redis from "ioredis";
import { RedisBucket, RedisGcra, RedisPeriod, RedisQuotaEngine, RedisSliding, ScriptError } from "@tideward/redis";
import { patient, useRedis, withRedis } from "./server";

const alice = new QuotaKey("acme", "alice", "api");
const bob = new QuotaKey("acme", "bob", "api");
// 500 ms a token: one number. 333.3… ms a token: two.
const one = limitSpec({ name: "one", capacity: 5, refill: 2, window: 1_000 });
const two = limitSpec({ name: "two", capacity: 3, refill: 3, window: 1_000 });
let n = 0;

const named = (key: string): RegExp => new RegExp(`the key ${key.replace(/[{}]/g, "\\$&")} holds `);

/** What a key holds, to compare before and after: its type and its value's bytes. */
async function held(direct: Redis, key: string): Promise<string> {
  const type = await direct.type(key);
  if (type === "string") return `string ${(await direct.getBuffer(key))?.toString("hex")}`;
  if (type === "hash") return `hash ${JSON.stringify(await direct.hgetall(key))}`;
  if (type === "list") return `list ${JSON.stringify(await direct.lrange(key, 0, -1))}`;
  return type;
}

const doubles = (...xs: number[]): Buffer => {
  const b = Buffer.alloc(8 * xs.length);
  xs.forEach((x, i) => b.writeDoubleLE(x, i * 8));
  return b;
};

withRedis("someone else's value under a tideward name", () => {
  const redis = useRedis();
  const engineWith = async (outage: "closed" | "fallback", ...specs: LimitSpec[]): Promise<RedisQuotaEngine> => {
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, outage, prefix: `fo${n++}:` });
    for (const s of specs) await engine.addLimit(s);
    return engine;
  };

  for (const origin of [0, Date.now()]) {
    it(`a key of another type is refused by name on every path of the engine, written over never, and trips no breaker (origin ${origin})`, async () => {
      const direct = await redis.raw();
      for (const outage of ["closed", "fallback"] as const) {
        const engine = await engineWith(outage, one, two);
        for (const [limit, kind] of [
          ["one", "bucket"],
          ["two", "bucket"],
          ["two", "window"],
          ["two", "gcra"],
        ] as const) {
          for (const type of ["hash", "list"]) {
            const key = engine.redisKey(alice, limit, kind);
            await direct.del(key);
            if (type === "hash") await direct.hset(key, "owner", "someone else");
            else await direct.rpush(key, "someone else");
            const before = await held(direct, key);
            const calls: (() => Promise<unknown>)[] = [
              () =>
                kind === "bucket"
                  ? engine.checkTokenBucket(alice, limit, origin)
                  : kind === "window"
                    ? engine.checkWindow(alice, limit, origin)
                    : engine.checkGcra(alice, limit, origin),
              () => engine.checkAtomic([charge(alice, limit, 1, kind), charge(bob, limit, 1, kind)], origin),
              () => engine.checkAtomic([charge(alice, limit, 1, kind), charge(bob, "one", 1)], origin),
              () => engine.checkAtomic([charge(alice, limit, 1, kind)], origin, { requestId: `r${n++}` }),
              () => engine.peekAtomic([charge(alice, limit, 1, kind)], origin),
              () => engine.checkMany(limit, [{ key: alice, now: origin }], kind),
            ];
            if (kind === "bucket") calls.push(() => engine.lease(alice, limit, { slice: 1 }).fill(origin));
            for (let i = 0; i < 40; i++) {
              for (const call of calls) {
                const error = await call().then(
                  () => undefined,
                  (e: unknown) => e,
                );
                expect(error).toBeInstanceOf(ScriptError);
                expect((error as Error).message).toMatch(named(key));
                expect((error as Error).message).toContain(`holds a ${type}`);
              }
              if (i > 0) calls.length = 1;
            }
            expect(await held(direct, key)).toBe(before);
            // Every other key is still answered by Redis.
            const d = await engine.checkTokenBucket(bob, "two", origin);
            expect([d.allowed, d.path]).toEqual([true, "store"]);
            await direct.del(key, engine.redisKey(bob, "two"), engine.redisKey(bob, "one"));
          }
        }
      }
    });

    it(`a request id's key of another type is refused by name (origin ${origin})`, async () => {
      const direct = await redis.raw();
      const engine = await engineWith("closed", one);
      await engine.checkAtomic([charge(alice, "one")], origin, { requestId: "seen" });
      const rid = (await direct.keys(`fo${n - 1}:*`)).find((k) => !k.includes("one"));
      expect(rid).toBeDefined();
      await direct.del(rid as string);
      await direct.hset(rid as string, "x", "y");
      await expect(engine.checkAtomic([charge(alice, "one")], origin, { requestId: "seen" })).rejects.toThrow(
        named(rid as string),
      );
      expect(await direct.type(rid as string)).toBe("hash");
    });

    it(`the limiters refuse a key of another type by name, write nothing over it, and trip no breaker (origin ${origin})`, async () => {
      const direct = await redis.raw();
      const client = await redis.ioredis();
      const prefix = `fl${n++}:`;
      const policy = { ...patient, prefix, outage: "closed" } as const;
      const limiters = [
        new RedisBucket(client, "b", 10, { ...policy, burst: 3 }),
        new RedisGcra(client, "g", 10, { ...policy, burst: 3 }),
        new RedisPeriod(client, "p", 3, 1_000, policy),
        new RedisSliding(client, "s", 3, 1_000, policy),
      ];
      for (const limiter of limiters) {
        const key = limiter.redisKey("mallory");
        // A string where the sliding window keeps a hash; a hash where the others keep a string.
        if (limiter instanceof RedisSliding) await direct.set(key, "someone else's string");
        else await direct.hset(key, "owner", "someone else");
        const before = await held(direct, key);
        for (let i = 0; i < 40; i++) {
          await expect(limiter.take("mallory", origin)).rejects.toThrow(named(key));
          await expect(limiter.take("mallory", origin)).rejects.toThrow(ScriptError);
        }
        await expect(limiter.peek("mallory", origin)).rejects.toThrow(named(key));
        expect(await held(direct, key)).toBe(before);
        expect(await limiter.take("alice", origin)).not.toBe(false);
        expect((await limiter.decide("alice", origin)).path).toBe("store");
      }
      // A sliding window's hash of other fields, or of stamps that are not 8 bytes.
      const sliding = limiters[3] as RedisSliding;
      const key = sliding.redisKey("eve");
      for (const fields of [{ owner: "x" }, { 0: "xx", 1: "yy" }, { h: "short", 0: "12345678" }]) {
        await direct.del(key);
        await direct.hset(key, fields);
        const before = await held(direct, key);
        await expect(sliding.take("eve", origin)).rejects.toThrow(named(key));
        expect(await held(direct, key)).toBe(before);
      }
    });

    it(`numbers tideward never writes, and values of other lengths, are refused by name, not read (origin ${origin})`, async () => {
      const direct = await redis.raw();
      const engine = await engineWith("closed", one, two);
      const twoKey = engine.redisKey(alice, "two");
      const oneKey = engine.redisKey(alice, "one");
      const bad = [
        Buffer.from("0123456789abcdef"),
        doubles(Number.NaN, Number.NaN),
        doubles(1, Infinity),
        doubles(-Infinity, origin),
        doubles(1e300, -1e300),
        doubles(2 ** 54, origin),
        doubles(1, 2 ** 47),
        Buffer.from("garbage!"),
        Buffer.from("x"),
      ];
      for (const value of bad) {
        for (const [key, kind] of [
          [twoKey, "bucket"],
          [engine.redisKey(alice, "two", "window"), "window"],
          [engine.redisKey(alice, "two", "gcra"), "gcra"],
        ] as const) {
          await direct.set(key, value);
          const calls = [
            () =>
              kind === "bucket"
                ? engine.checkTokenBucket(alice, "two", origin)
                : kind === "window"
                  ? engine.checkWindow(alice, "two", origin)
                  : engine.checkGcra(alice, "two", origin),
            () => engine.checkAtomic([charge(alice, "two", 1, kind), charge(bob, "two", 1, kind)], origin),
            () => engine.peekAtomic([charge(alice, "two", 1, kind)], origin),
            () => engine.checkMany("two", [{ key: alice, now: origin }], kind),
          ];
          for (const call of calls) await expect(call()).rejects.toThrow(named(key));
          expect((await direct.getBuffer(key))?.equals(value)).toBe(true);
          await direct.del(key);
        }
        await direct.set(twoKey, value);
        await expect(engine.lease(alice, "two", { slice: 1 }).fill(origin)).rejects.toThrow(named(twoKey));
        await direct.del(twoKey);
      }
      // A bucket of one number: an instant past ±2^46 ms, or a double that is not a number.
      for (const value of [String(2 ** 47 * 4096), Buffer.concat([Buffer.from("d"), doubles(Number.NaN)])]) {
        await direct.set(oneKey, value);
        await expect(engine.checkTokenBucket(alice, "one", origin)).rejects.toThrow(named(oneKey));
        await expect(engine.checkAtomic([charge(alice, "one"), charge(bob, "one")], origin)).rejects.toThrow(
          named(oneKey),
        );
        await expect(engine.lease(alice, "one", { slice: 1 }).fill(origin)).rejects.toThrow(named(oneKey));
      }
      // The limiters likewise.
      const client = await redis.ioredis();
      const policy = { ...patient, prefix: `fn${n++}:` };
      const bucket = new RedisBucket(client, "b", 10, { ...policy, burst: 5 });
      const gcra = new RedisGcra(client, "g", 10, policy);
      const period = new RedisPeriod(client, "p", 3, 1_000, policy);
      for (const [limiter, values] of [
        [bucket, [Buffer.from("garbage!"), doubles(Number.NaN, origin, origin), doubles(1, 2 ** 46, origin)]],
        [gcra, [Buffer.from("garbage!"), doubles(origin, Number.NaN), doubles(2 ** 46, 0)]],
        [period, [Buffer.from("garbage!"), doubles(Infinity, 1), doubles(origin + 1, -1)]],
      ] as const) {
        for (const value of values) {
          const key = limiter.redisKey("id1");
          await direct.set(key, value);
          await expect(limiter.take("id1", origin)).rejects.toThrow(named(key));
          await expect(limiter.peek("id1", origin)).rejects.toThrow(named(key));
          expect((await direct.getBuffer(key))?.equals(value)).toBe(true);
        }
      }
    });

    it(`a bucket holding more than its capacity (the limit lowered since) is charged with an expiry, not an error (origin ${origin})`, async () => {
      const direct = await redis.raw();
      const engine = await engineWith("closed", two);
      const key = engine.redisKey(alice, "two");
      await direct.set(key, doubles(1e6, origin));
      const d = await engine.checkTokenBucket(alice, "two", origin);
      expect([d.allowed, d.path]).toEqual([true, "store"]);
      expect(await direct.pttl(key)).toBeGreaterThan(0);
      await direct.set(key, doubles(1e6, origin));
      const set = await engine.checkAtomic([charge(alice, "two"), charge(bob, "two")], origin);
      expect(set.committed).toBe(true);
      expect(await direct.pttl(key)).toBeGreaterThan(0);
      await direct.set(key, doubles(1e6, origin));
      expect((await engine.checkMany("two", [{ key: alice, now: origin }])).decisions[0]?.allowed).toBe(true);
      expect(await direct.pttl(key)).toBeGreaterThan(0);
      // RedisBucket after its burst was lowered.
      const client = await redis.ioredis();
      const bucket = new RedisBucket(client, "b", 10, { ...patient, prefix: `fo${n++}:`, burst: 3 });
      await direct.set(bucket.redisKey("id"), doubles(1e6, origin, origin));
      expect(await bucket.take("id", origin)).toBe(true);
      expect(await direct.pttl(bucket.redisKey("id"))).toBeGreaterThan(0);
      await direct.set(bucket.redisKey("id"), doubles(1e6, origin, origin));
      expect(await bucket.take("id", origin, 5)).toBe(false);
    });
  }
});
