// How a token bucket's state sits in Redis. A limit whose ms a token is a whole number of 2^-7 ms
// keeps one number, the instant the bucket is full again, as an integer of 2^-12 ms wherever it
// is one (always near Date.now()): Redis holds it inside the value's object (OBJECT ENCODING
// "int"), the in-process engine keeps the very same number, and both decide alike. Other limits keep two doubles under a name of their own. Anything else under
// a tideward name is refused, naming the key and what it holds.
import fc from "fast-check";
import { expect, it } from "vitest";
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import type { LimitSpec } from "@tideward/quota-engine";
import { answer } from "@tideward/quota-engine/conformance";
import { RedisQuotaEngine, ScriptError } from "@tideward/redis";
import { bucketTokens, fullAtOf, simulated, useRedis, withRedis } from "./server";

const alice = new QuotaKey("acme", "alice", "api");
const bob = new QuotaKey("acme", "bob", "api");
// A token every 500 ms: one number. A token every 514 285.7… ms: two.
const one = limitSpec({ name: "one", capacity: 5, refill: 2, window: 1_000 });
const two = limitSpec({ name: "two", capacity: 100, refill: 7, window: 3_600_000 });
let n = 0;

withRedis("a token bucket's state in Redis", () => {
  const redis = useRedis();
  const engineWith = async (...specs: LimitSpec[]): Promise<RedisQuotaEngine> => {
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...simulated, prefix: `st${n++}:` });
    for (const s of specs) await engine.addLimit(s);
    return engine;
  };

  it("one number: an integer-encoded value, after a check, a set, a batch and a lease; two numbers: 16 bytes", async () => {
    const engine = await engineWith(one, two);
    const direct = await redis.raw();
    const encoding = async (key: QuotaKey, limit: string): Promise<unknown> =>
      direct.call("OBJECT", "ENCODING", engine.redisKey(key, limit));
    await engine.checkTokenBucket(alice, "one", 1_722_222_222_000.25);
    expect(await encoding(alice, "one")).toBe("int");
    await engine.checkAtomic([charge(bob, "one", 2), charge(bob, "two", 1)], 1_722_222_222_000.5);
    expect(await encoding(bob, "one")).toBe("int");
    expect((await direct.getBuffer(engine.redisKey(bob, "two")))?.length).toBe(16);
    await engine.checkMany("one", [{ key: alice, now: 1_722_222_222_001, cost: 2 }]);
    expect(await encoding(alice, "one")).toBe("int");
    const lease = engine.lease(bob, "one", { slice: 2, refillAt: 0 });
    expect(await lease.fill(1_722_222_222_002)).toBe(2);
    expect(await encoding(bob, "one")).toBe("int");
    // The names differ by the form: a process of another version never reads the other's state.
    expect(engine.redisKey(alice, "one")).toMatch(/\}F3:one/);
    expect(engine.redisKey(alice, "two")).toMatch(/\}B3:two/);
  });

  it("property: Redis keeps the in-process engine's own number, and both decide alike, near 0 and near Date.now()", async () => {
    const direct = await redis.raw();
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          capacity: fc.integer({ min: 1, max: 9 }),
          refill: fc.constantFrom(1, 2, 4, 5, 8, 10, 16, 25),
          window: fc.constantFrom(100, 1_000, 60_000),
        }),
        fc.oneof(
          fc.constantFrom(0, 0.3),
          fc.double({ min: 0, max: 1e6, noNaN: true }),
          fc.double({ min: 1.6e12, max: 2.1e12, noNaN: true }),
          fc.double({ min: -(2 ** 45), max: 2 ** 45 - 2 ** 44, noNaN: true }),
        ),
        fc.array(fc.tuple(fc.double({ min: 0, max: 200, noNaN: true }), fc.integer({ min: 1, max: 4 }), fc.nat(1)), {
          minLength: 1,
          maxLength: 25,
        }),
        async (s, start, steps) => {
          const spec = limitSpec({ name: "l", ...s });
          const local = new QuotaEngine();
          local.addLimit(spec);
          const engine = await engineWith(spec);
          let now = start;
          for (const [dt, cost, who] of steps) {
            now += dt;
            const key = who === 0 ? alice : bob;
            const d = await engine.checkTokenBucket(key, "l", now, cost);
            expect(answer(d)).toEqual(answer(local.checkTokenBucket(key, "l", now, cost)));
          }
          // The very number: each key's value is the in-process F (as an integer of 2^-12 ms
          // wherever F is a multiple of it: always near Date.now()).
          for (const e of local.snapshot().fullAt) {
            const key = new QuotaKey(e.key.scope, e.key.subject, e.key.resource);
            const stored = await direct.getBuffer(engine.redisKey(key, "l"));
            if (stored === null) continue;
            expect(fullAtOf(stored)).toBe(e.full);
            if (e.full >= 2 ** 40)
              expect(await direct.call("OBJECT", "ENCODING", engine.redisKey(key, "l"))).toBe("int");
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it("a value that is not tideward state is refused with a ScriptError naming the key and what it holds, on every path", async () => {
    const engine = await engineWith(one, two);
    const direct = await redis.raw();
    // Two doubles (a bucket of two numbers' state) where one number belongs, and text where two do.
    await direct.set(engine.redisKey(alice, "one"), Buffer.alloc(16, 1));
    await direct.set(engine.redisKey(alice, "two"), "hello");
    const named = (key: string, what: string): RegExp =>
      new RegExp(`the key ${key.replace(/[{}]/g, "\\$&")} holds ${what}`.replace(/[()]/g, "\\$&"));
    const oneKey = engine.redisKey(alice, "one");
    const twoKey = engine.redisKey(alice, "two");
    const bytes = `16 bytes (bytes ${"01".repeat(16)})`;
    await expect(engine.checkTokenBucket(alice, "one", 0)).rejects.toThrow(ScriptError);
    await expect(engine.checkTokenBucket(alice, "one", 0)).rejects.toThrow(named(oneKey, bytes));
    await expect(engine.checkAtomic([charge(alice, "one", 1)], 0, { requestId: "x" })).rejects.toThrow(
      named(oneKey, bytes),
    );
    await expect(engine.peekAtomic([charge(alice, "one", 1)], 0)).rejects.toThrow(named(oneKey, bytes));
    await expect(engine.checkMany("one", [{ key: alice, now: 0 }])).rejects.toThrow(named(oneKey, bytes));
    // A lease's fill is refused likewise; a take refuses and keeps the reason its background
    // fill met, never an unhandled rejection.
    const lease = engine.lease(alice, "one", { slice: 1 });
    await expect(lease.fill(0)).rejects.toThrow(named(oneKey, bytes));
    expect(lease.error).toBeInstanceOf(ScriptError);
    expect(lease.take(0)).toBe(false);
    await expect(lease.fill(0)).rejects.toThrow(ScriptError);
    await new Promise((r) => setTimeout(r, 0));
    expect(lease.error).toBeInstanceOf(ScriptError);
    expect(lease.error?.message).toMatch(named(oneKey, bytes));
    expect([lease.held, lease.totals.granted]).toEqual([0, 0]);
    await expect(engine.checkAtomic([charge(alice, "two", 1), charge(bob, "two", 1)], 0)).rejects.toThrow(
      named(twoKey, '5 bytes ("hello")'),
    );
    // Nothing was written over what was there.
    expect(await direct.get(twoKey)).toBe("hello");
    expect((await direct.getBuffer(oneKey))?.equals(Buffer.alloc(16, 1))).toBe(true);
    // Once the key is tideward's again, a fill succeeds and the reason is gone.
    await direct.del(oneKey);
    expect(await lease.fill(0)).toBe(1);
    expect(lease.error).toBeUndefined();
  });

  it("a bucket of two numbers under the name of before is left alone: the one-number bucket starts full under its own", async () => {
    const engine = await engineWith(one);
    const direct = await redis.raw();
    // The state an earlier version kept for this bucket (2 of 5 tokens at 0), under its B name.
    const earlier = engine.redisKey(alice, "one").replace("}F3:", "}B3:");
    const state = Buffer.alloc(16);
    state.writeDoubleLE(2, 0);
    state.writeDoubleLE(0, 8);
    await direct.set(earlier, state);
    const d = await engine.checkTokenBucket(alice, "one", 0);
    expect([d.allowed, d.remaining]).toEqual([true, 4]);
    expect((await direct.getBuffer(earlier))?.equals(state)).toBe(true);
  });

  it("leases on a bucket of either form take, give back and never mint", async () => {
    for (const spec of [one, limitSpec({ ...two, capacity: 50 })]) {
      const engine = await engineWith(spec);
      const direct = await redis.raw();
      const lease = engine.lease(alice, spec.name, { slice: 20, refillAt: 0 });
      const cap = spec.capacity;
      expect(await lease.fill(0)).toBe(Math.min(20, cap));
      let spent = 0;
      while (lease.take(0)) spent++;
      expect(spent).toBe(Math.min(20, cap));
      // The refused take asked for more in the background: wait for it (a fill shares one in
      // flight, or asks again), then the bucket lacks exactly what the lease was granted.
      await lease.fill(0);
      const left = bucketTokens(await direct.getBuffer(engine.redisKey(alice, spec.name)), spec, 0);
      expect(left).toBe(cap - lease.totals.granted);
      expect(lease.totals.granted).toBeGreaterThanOrEqual(spent);
      // Given back: never above the capacity.
      expect(await engine.lease(alice, spec.name, { slice: 1 }).release(0)).toBe(0);
      const d = await engine.checkTokenBucket(alice, spec.name, 0);
      expect(d.allowed).toBe(cap - lease.totals.granted >= 1);
    }
  });
});
