// The Redis quota engine: its configuration and key names, and on a real Redis what it decides,
// reports and keeps (exact fractions, shadow limits, the denied-key cache, expiry, batches). What
// it answers while the connection is down is in engine-outage.test.ts.
import Redis from "ioredis";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, charge, limitSpec, perSecond } from "@tideward/quota-engine";
import type { EvaluationInput } from "@tideward/quota-engine";
import { answer } from "@tideward/quota-engine/conformance";
import { CrossSlotError, RedisQuotaEngine, ioredisClient, nodeRedisClient, slotOf } from "@tideward/redis";
import { disconnected, fullAtOf, useRedis, withRedis, patient } from "./server";
import { alice, bob, carol } from "./keys";

describe("configuration and bad input", () => {
  it("policies and clients are checked at construction, naming the field", () => {
    const down = ioredisClient(disconnected());
    expect(() => new RedisQuotaEngine(down, { ...patient, timout: 5 } as never)).toThrow(
      'RedisQuotaEngine has no option "timout"; did you mean "timeout"?',
    );
    expect(() => new RedisQuotaEngine(down, { ...patient, prefix: "a{b" })).toThrow(TypeError);
    expect(() => new RedisQuotaEngine(down, { ...patient, timeout: 0 })).toThrow(RangeError);
    expect(() => new RedisQuotaEngine(down, { ...patient, outage: "maybe" as never })).toThrow(
      'RedisQuotaEngine outage must be "fallback", "open" or "closed", got "maybe"',
    );
    expect(() => new RedisQuotaEngine(down, { ...patient, instances: 1.5 })).toThrow(RangeError);
    expect(() => new RedisQuotaEngine(null as never)).toThrow(TypeError);
    expect(() => ioredisClient(new Redis({ lazyConnect: true }))).toThrow("enableOfflineQueue: false");
    expect(() => ioredisClient(new Redis({ lazyConnect: true, enableOfflineQueue: false }))).toThrow(
      "autoResendUnfulfilledCommands: false",
    );
    const looks = { isReady: false, options: {}, evalSha: () => Promise.resolve(), eval: () => Promise.resolve() };
    expect(() => nodeRedisClient({ ...looks, withTypeMapping: () => looks })).toThrow("disableOfflineQueue: true");
    expect(() => nodeRedisClient(looks as never)).toThrow("nodeRedisClient needs a node-redis client (redis 5 or 6)");
  });

  it("key names: the scope left out when it is the hash tag, the full id otherwise; no two states share one", () => {
    const engine = new RedisQuotaEngine(ioredisClient(disconnected()), { prefix: "p:" });
    void engine.addLimit(perSecond("r", 1));
    void engine.addLimit(perSecond("r1", 1));
    void engine.addLimit(perSecond("t", 3));
    // A token every 1 000 ms, a bucket of one number (F); every 333⅓ ms, one of two (B).
    expect(engine.redisKey(alice, "r")).toBe("p:{acme}F1:r5:aliceapi");
    expect(engine.redisKey(alice, "t")).toBe("p:{acme}B1:t5:aliceapi");
    expect(engine.redisKey(alice, "r", "window")).toBe("p:{acme}W1:r5:aliceapi");
    const tagged = new RedisQuotaEngine(ioredisClient(disconnected()), { prefix: "p:", hashTag: () => "all" });
    void tagged.addLimit(perSecond("r", 1));
    expect(tagged.redisKey(alice, "r", "gcra")).toBe("p:{all}g1:r4:acme5:alice3:api");
    expect(tagged.redisKey(alice, "r")).toBe("p:{all}f1:r4:acme5:alice3:api");
    // Parts that run into each other in one form or the other still make different names.
    const names = new Set<string>();
    const parts = ["a", "a1", "1", "1:a", "a3:api"];
    let count = 0;
    for (const e of [engine, tagged]) {
      for (const limit of ["r", "r1", "t"]) {
        for (const subject of parts) {
          for (const resource of parts) {
            for (const kind of ["bucket", "window", "gcra"] as const) {
              names.add(e.redisKey(new QuotaKey("acme", subject, resource), limit, kind));
              count++;
            }
          }
        }
      }
    }
    expect(names.size).toBe(count);
  });

  it("slots follow the cluster specification's CRC16 and hash tags", () => {
    // Values from the Redis Cluster specification and redis-cli CLUSTER KEYSLOT.
    expect(slotOf("123456789")).toBe(12_739);
    expect(slotOf("foo")).toBe(12_182);
    expect(slotOf("{user1000}.following")).toBe(slotOf("{user1000}.followers"));
    expect(slotOf("foo{}{bar}")).toBe(slotOf("foo{}{bar}")); // an empty tag hashes the whole key
    expect(slotOf("{}x")).not.toBe(slotOf("x"));
  });
});

withRedis("the engine on a real Redis", () => {
  const redis = useRedis();

  it("a charge set whose keys cannot share a cluster slot is refused before anything is sent, naming them", async () => {
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: "x:" });
    await engine.addLimit(perSecond("r", 5));
    const scripts = async (): Promise<number> => {
      const line = (await redis.server().command("INFO", "commandstats"))
        .split("\n")
        .find((l) => l.startsWith("cmdstat_evalsha:"));
      return Number(/calls=(\d+)/.exec(line ?? "")?.[1] ?? 0);
    };
    const other = new QuotaKey("globex", "*", "api");
    expect(slotOf(engine.redisKey(alice, "r"))).not.toBe(slotOf(engine.redisKey(other, "r")));
    const set = [
      { key: alice, limit: "r", cost: 1 },
      { key: other, limit: "r", cost: 1 },
    ];
    const before = await scripts();
    await expect(engine.checkAtomic(set, 0)).rejects.toThrow(CrossSlotError);
    await expect(engine.checkAtomic(set, 0)).rejects.toThrow(
      `x:{acme}F1:r5:aliceapi (slot ${slotOf("x:{acme}F1:r5:aliceapi")}), x:{globex}F1:r1:*api`,
    );
    expect(await scripts()).toBe(before);
    // One scope, one slot: the same set within a tenant is sent.
    expect(
      (
        await engine.checkAtomic(
          [
            { key: alice, limit: "r", cost: 1 },
            { key: bob, limit: "r", cost: 1 },
          ],
          0,
        )
      ).committed,
    ).toBe(true);
    expect(await scripts()).toBe(before + 1);
  });

  it("fractions come back exact (as strings), never truncated", async () => {
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: "frac:" });
    await engine.addLimit(limitSpec({ name: "r", capacity: 3, refill: 3, window: 1_000 }));
    for (let i = 0; i < 3; i++) await engine.checkTokenBucket(alice, "r", 0.25);
    const d = await engine.checkTokenBucket(alice, "r", 0.25);
    const local = new QuotaEngine();
    local.addLimit(limitSpec({ name: "r", capacity: 3, refill: 3, window: 1_000 }));
    for (let i = 0; i < 3; i++) local.checkTokenBucket(alice, "r", 0.25);
    expect(answer(d)).toEqual(answer(local.checkTokenBucket(alice, "r", 0.25)));
    expect(d.retryAfter).toBe(1_000 / 3);
  });

  for (const [o, origin] of [0, 1_722_222_222_000.5].entries()) {
    it(`a set never decides behind the reading of a bucket it touches: a late caller's set is charged at that reading (origin ${origin})`, async () => {
      const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: `late${o}:` });
      const local = new QuotaEngine();
      // 1 000 / 3 ms a token, off the one-number grid: buckets of two numbers, each with its reading.
      const spec = limitSpec({ name: "r", capacity: 10, refill: 3, window: 1_000 });
      // 100 ms a token: a bucket of one number, charged at the set's clock too.
      const one = limitSpec({ name: "g", capacity: 10, refill: 10, window: 1_000 });
      for (const s of [spec, one]) {
        await engine.addLimit(s);
        local.addLimit(s);
      }
      const set = [charge(alice, "r", 1), charge(bob, "r", 1), charge(carol, "g", 1)];
      expect(answer(await engine.checkTokenBucket(alice, "r", origin + 5_000))).toEqual(
        answer(local.checkTokenBucket(alice, "r", origin + 5_000)),
      );
      // A second behind alice's reading: both are charged at 5 000, bob's fresh bucket included.
      const late = await engine.checkAtomic(set, origin + 4_000);
      expect(late.decisions.map(answer)).toEqual(local.checkAtomic(set, origin + 4_000).decisions.map(answer));
      // Had bob's been counted from 4 000, a second of refill would have topped it up to 10 by now.
      const after = await engine.checkTokenBucket(bob, "r", origin + 5_000);
      expect(answer(after)).toEqual(answer(local.checkTokenBucket(bob, "r", origin + 5_000)));
      expect(after.remaining).toBe(8);
      expect(answer(await engine.checkTokenBucket(carol, "g", origin + 5_000))).toEqual(
        answer(local.checkTokenBucket(carol, "g", origin + 5_000)),
      );
    });

    it(`large sets of token buckets decide as in process: 16 keys, 20 keys, and 20 with repeats past the 16th (origin ${origin})`, async () => {
      const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: `large${o}:` });
      const local = new QuotaEngine();
      for (const s of [perSecond("one", 4), limitSpec({ name: "two", capacity: 4, refill: 3, window: 1_000 })]) {
        await engine.addLimit(s);
        local.addLimit(s);
      }
      const users = Array.from({ length: 20 }, (_, i) => new QuotaKey("acme", `u${i}`, "api"));
      const sets = [
        users.slice(0, 16).map((u, i) => charge(u, i % 2 === 0 ? "one" : "two", 1 + (i % 3))),
        users.map((u, i) => charge(u, i % 2 === 0 ? "one" : "two", 1 + (i % 3))),
        users.map((u, i) => charge(i >= 17 ? users[i - 17] : u, i >= 17 ? "one" : "two", 2)),
      ];
      for (let t = 0; t < 6; t++) {
        for (const set of sets) {
          const got = await engine.checkAtomic(set, origin + 100 * t);
          const want = local.checkAtomic(set, origin + 100 * t);
          expect([got.committed, got.failedIndex, got.retryAfter]).toEqual([
            want.committed,
            want.failedIndex,
            want.retryAfter,
          ]);
          expect(got.decisions.map(answer)).toEqual(want.decisions.map(answer));
        }
      }
    });
  }

  it("shadow mode decides and reports, never refuses", async () => {
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: "shadow:" });
    await engine.addLimit(perSecond("enforced", 10));
    await engine.addLimit(perSecond("trial", 2), { shadow: true });
    const got = [];
    for (let i = 0; i < 3; i++) got.push(await engine.checkTokenBucket(alice, "trial", 0));
    expect(got.map((d) => [d.allowed, d.shadow?.allowed, d.shadow?.reason])).toEqual([
      [true, true, "ok"],
      [true, true, "ok"],
      [true, false, "exhausted"],
    ]);
    expect(got[2]?.shadow?.retryAfter).toBe(500);
    // In a set, a shadow limit that would refuse holds nothing back; the enforced one is charged.
    const set = await engine.checkAtomic(
      [
        { key: alice, limit: "enforced", cost: 1 },
        { key: alice, limit: "trial", cost: 1 },
      ],
      0,
    );
    expect([set.committed, set.decisions[1]?.shadow?.allowed, set.decisions[0]?.remaining]).toEqual([true, false, 9]);
    // Nor is it charged: still dry, it turns the next away as before, while a set it fits charges it.
    const next = await engine.checkTokenBucket(alice, "trial", 0);
    expect([next.allowed, next.shadow?.allowed, next.shadow?.retryAfter]).toEqual([true, false, 500]);
    const later = await engine.checkAtomic(
      [
        { key: alice, limit: "enforced", cost: 1 },
        { key: alice, limit: "trial", cost: 1 },
      ],
      500,
    );
    expect([later.committed, later.decisions[1]?.shadow?.allowed]).toEqual([true, true]);
    expect((await engine.checkTokenBucket(alice, "trial", 500)).shadow?.allowed).toBe(false);
  });

  for (const origin of [0, Date.now() + 0.5]) {
    it(`a shadow limit's single checks of every kind answer what the enforced limit would, never refuse, and charge only what fits (origin ${origin})`, async () => {
      // A window and a GCRA flow that would refuse threw a ScriptError ("disagree") here.
      const shadowed = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: `sh${origin}:` });
      const enforced = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: `en${origin}:` });
      // 500 ms a token: a bucket of one number; 333.3… ms: of two.
      for (const spec of [limitSpec({ name: "one", capacity: 2, refill: 2, window: 1_000 }), perSecond("two", 3)]) {
        await shadowed.addLimit(spec, { shadow: true });
        await enforced.addLimit(spec);
      }
      for (const limit of ["one", "two"])
        for (const check of ["checkWindow", "checkGcra", "checkTokenBucket"] as const) {
          for (let i = 0; i < 5; i++) {
            const now = origin + i * 10;
            const d = await shadowed[check](alice, limit, now);
            const e = await enforced[check](alice, limit, now);
            expect([limit, check, i, d.allowed, d.reason, d.shadow]).toEqual([
              limit,
              check,
              i,
              true,
              "ok",
              { allowed: e.allowed, reason: e.reason, retryAfter: e.retryAfter },
            ]);
            expect([d.remaining, d.resetAfter, d.path]).toEqual([e.remaining, e.resetAfter, "store"]);
          }
        }
    });
  }

  it("the denied-key cache answers a refused key locally until its retryAfter, and is bounded", async () => {
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: "deny:", deniedCache: 2 });
    await engine.addLimit(limitSpec({ name: "r", capacity: 1, refill: 1, window: 1_000 }));
    expect((await engine.checkTokenBucket(alice, "r", 0)).path).toBe("store");
    const refused = await engine.checkTokenBucket(alice, "r", 0);
    expect([refused.allowed, refused.path, refused.retryAfter]).toEqual([false, "store", 1_000]);
    const cached = await engine.checkTokenBucket(alice, "r", 400);
    expect([cached.allowed, cached.path, cached.retryAfter, cached.reason]).toEqual([false, "cache", 600, "exhausted"]);
    expect((await engine.checkTokenBucket(alice, "r", 1_000)).path).toBe("store"); // its time is up
    // Bounded: a third refused key pushes the oldest out.
    const keys = ["k1", "k2", "k3"].map((s) => new QuotaKey("acme", s, "api"));
    for (const k of keys) {
      await engine.checkTokenBucket(k, "r", 2_000);
      await engine.checkTokenBucket(k, "r", 2_000);
    }
    expect((await engine.checkTokenBucket(keys[0], "r", 2_001)).path).toBe("store");
    expect((await engine.checkTokenBucket(keys[2], "r", 2_001)).path).toBe("cache");
  });

  it("with the server's clock, callers whose clocks disagree by an hour decide alike", async () => {
    const client = await redis.ioredis();
    const east = new RedisQuotaEngine(client, { ...patient, prefix: "time:", clock: "redis" });
    const west = new RedisQuotaEngine(client, { ...patient, prefix: "time:", clock: "redis" });
    for (const e of [east, west]) await e.addLimit(limitSpec({ name: "r", capacity: 4, refill: 1, window: 60_000 }));
    const now = Date.now();
    const got = [];
    for (let i = 0; i < 3; i++) {
      got.push((await east.checkTokenBucket(alice, "r", now + 3_600_000)).allowed);
      got.push((await west.checkTokenBucket(alice, "r", now - 3_600_000)).allowed);
    }
    expect(got).toEqual([true, true, true, true, false, false]);
    const d = await west.checkTokenBucket(alice, "r", 0);
    expect(d.retryAfter).toBeGreaterThan(50_000); // a minute a token, counted on the server's clock
    expect(d.retryAfter).toBeLessThanOrEqual(60_000);
  });

  it("idle keys expire when their state would be a fresh key's again", async () => {
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: "ttl:", expiryMargin: 0 });
    await engine.addLimit(limitSpec({ name: "r", capacity: 10, refill: 10, window: 1_000, burst: 4 }));
    const direct = await redis.raw();
    // Redis counts a TTL down on its own clock: a loaded machine may take a while between a write
    // and the read of its TTL, so the lower bounds allow for the time that passed.
    const since = (t0: number): number => performance.now() - t0 + 2;
    const t0 = performance.now();
    await engine.checkTokenBucket(alice, "r", 0, 3); // 300 ms to refill
    await engine.checkWindow(alice, "r", 0, 1); // the window closes in 1 000 ms
    await engine.checkGcra(alice, "r", 0, 2); // TAT 200 ms ahead
    const ttl = async (kind: "bucket" | "window" | "gcra"): Promise<number> =>
      direct.pttl(engine.redisKey(alice, "r", kind));
    const [b, w, g] = [await ttl("bucket"), await ttl("window"), await ttl("gcra")];
    const spent = since(t0);
    expect(b).toBeGreaterThanOrEqual(300 - spent);
    expect(b).toBeLessThanOrEqual(302);
    expect(w).toBeGreaterThanOrEqual(1_000 - spent);
    expect(w).toBeLessThanOrEqual(1_002);
    expect(g).toBeGreaterThanOrEqual(200 - spent);
    expect(g).toBeLessThanOrEqual(202);
    // The default margin keeps a key a second or two longer (full again at 300 ms, plus the margin,
    // rounded up to a multiple of it: 2 000): late costs memory, early would over-admit.
    const padded = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: "ttl2:" });
    await padded.addLimit(limitSpec({ name: "r", capacity: 10, refill: 10, window: 1_000 }));
    const key = padded.redisKey(alice, "r");
    const t1 = performance.now();
    await padded.checkTokenBucket(alice, "r", 0, 3);
    const late = await direct.pttl(key);
    expect(late).toBeGreaterThanOrEqual(2_000 - since(t1));
    expect(late).toBeLessThanOrEqual(2_001);
    // Full again at 600 ms: the same rounded expiry, so the key keeps its own (not extended).
    await padded.checkTokenBucket(alice, "r", 0, 3);
    expect(await direct.pttl(key)).toBeLessThanOrEqual(late);
    // At 500 ms, 9 tokens taken: full again at 1 500, expiry 3 000 — set anew, counted from now.
    const t2 = performance.now();
    await padded.checkTokenBucket(alice, "r", 500, 9);
    const later = await direct.pttl(key);
    expect(later).toBeGreaterThanOrEqual(2_500 - since(t2));
    expect(later).toBeLessThanOrEqual(2_501);
  });

  it("a key's expiry never falls before its state is a fresh key's plus the margin, however often it is written", async () => {
    // Real time on both sides, so Redis's expiry and the state's instants can be compared.
    const margin = 150;
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: "ttl3:", expiryMargin: margin });
    await engine.addLimit(limitSpec({ name: "u", capacity: 20, refill: 40, window: 1_000 }));
    await engine.addLimit(limitSpec({ name: "t", capacity: 200, refill: 400, window: 1_000, burst: 30 }));
    const direct = await redis.raw();
    const tenant = new QuotaKey("acme", "*", "api");
    const users = [alice, bob];
    let worst = Infinity;
    let seed = 11;
    const draw = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const started = Date.now();
    for (let i = 0; Date.now() - started < 700 && i < 2_000; i++) {
      const user = users[draw(2)];
      const set = [
        { key: user, limit: "u", cost: 1 + draw(3) },
        { key: tenant, limit: "t", cost: 1 + draw(9) },
        { key: tenant, limit: "t", cost: 1 + draw(5), kind: "gcra" as const },
      ];
      const before = Date.now();
      if (draw(3) === 0) await engine.checkTokenBucket(user, "u", before, 1 + draw(2));
      else await engine.checkAtomic(set, before);
      // Each key: its state is fresh at f (caller's clock); Redis must keep it until f + margin.
      for (const [key, limit, kind] of [
        [user, "u", "bucket"],
        [tenant, "t", "bucket"],
        [tenant, "t", "gcra"],
      ] as const) {
        const name = engine.redisKey(key, limit, kind);
        const state = await direct.getBuffer(name);
        const pttl = await direct.pttl(name);
        if (state === null) continue;
        const spec = engine.limit(limit);
        if (spec === undefined) throw new Error("no spec");
        // A bucket of one number holds the instant it is full again; anything else two doubles.
        const full = kind === "bucket" ? fullAtOf(state) : undefined;
        const one = full !== undefined;
        const a = one ? 0 : state.readDoubleLE(0);
        const b = full ?? state.readDoubleLE(8);
        const fresh = one ? b : kind === "bucket" ? b + (spec.capacity - a) * (spec.window / spec.refill) : b + a;
        // How long past (fresh + margin) the key will live, in Redis's time counted from `before`.
        worst = Math.min(worst, pttl + (Date.now() - before) - (fresh + margin - before));
      }
    }
    // A few ms for the clocks' own steps and the time between the write and the reads.
    expect(worst).toBeGreaterThan(-5);
  });

  it("calls made in one turn leave eight to a write (the socket corked for the turn), each with its own answer", async () => {
    const raw = await redis.raw();
    // Every flush of the socket to the kernel: one per command uncorked, one per eight corked.
    const socket = (
      raw as unknown as { stream: { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void } }
    ).stream;
    let flushes = 0;
    const write = socket._write.bind(socket);
    const writev = socket._writev.bind(socket);
    socket._write = (...a) => {
      flushes++;
      write(...a);
    };
    socket._writev = (...a) => {
      flushes++;
      writev(...a);
    };
    const keys = Array.from({ length: 50 }, (_, i) => new QuotaKey("acme", `u${i % 10}`, "api"));
    for (const coalesce of [true, false]) {
      const engine = new RedisQuotaEngine(ioredisClient(raw, { coalesce }), {
        ...patient,
        prefix: `cork${String(coalesce)}:`,
      });
      await engine.addLimit(perSecond("r", 3));
      await engine.checkTokenBucket(alice, "r", 0); // the script loaded, outside the count
      const before = flushes;
      const got = await Promise.all(keys.map((k) => engine.checkTokenBucket(k, "r", 0)));
      expect([coalesce, flushes - before]).toEqual([coalesce, coalesce ? 7 : 50]);
      const local = new QuotaEngine();
      local.addLimit(perSecond("r", 3));
      local.checkTokenBucket(alice, "r", 0);
      expect(got.map(answer)).toEqual(keys.map((k) => answer(local.checkTokenBucket(k, "r", 0))));
    }
    // The connection still serves other commands, and nothing is left corked.
    expect(await raw.ping()).toBe("PONG");
    expect((raw as unknown as { stream: { writableCorked: number } }).stream.writableCorked).toBe(0);
  });

  it("a batch decides every input in order, chunked into few calls, as the in-process batch does", async () => {
    const client = await redis.ioredis();
    const spec = limitSpec({ name: "r", capacity: 3, refill: 2, window: 1_000 });
    const inputs: EvaluationInput[] = [];
    for (let i = 0; i < 600; i++)
      inputs.push({
        key: new QuotaKey("acme", `u${i % 7}`, "api"),
        now: 1_700_000_000_000 + i * 13.7,
        cost: 1 + (i % 3),
      });
    for (const kind of ["bucket", "window", "gcra"] as const) {
      const engine = new RedisQuotaEngine(client, { ...patient, prefix: `batch-${kind}:` });
      const local = new QuotaEngine();
      await engine.addLimit(spec);
      local.addLimit(spec);
      const got = await engine.checkMany("r", inputs, kind);
      const want = local.checkMany("r", inputs, kind);
      expect([got.total, got.allowed, got.denied]).toEqual([want.total, want.allowed, want.denied]);
      expect(got.decisions.map(answer)).toEqual(want.decisions.map(answer));
      expect(got.decisions.every((d) => d.path === "store")).toBe(true);
    }
  });
});
