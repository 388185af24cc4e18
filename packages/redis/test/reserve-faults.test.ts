// Reservations with a real Redis when things go wrong: a settle whose reply is lost after it ran, a
// reserve sent while the server is paused (CLIENT PAUSE), and a process that reserves and dies.
// Nothing is refunded or charged twice, and nothing is left behind.
import { expect, it } from "vitest";
import { QuotaKey, limitSpec } from "@tideward/quota-engine";
import type { QuotaCharge } from "@tideward/quota-engine";
import { RedisQuotaEngine, ioredisClient } from "@tideward/redis";
import { startProxy } from "@tideward/redis/testing";
import { bucketTokens, patient, useRedis, withRedis } from "./server";

const alice = new QuotaKey("acme", "alice", "api");
const tenant = new QuotaKey("acme", "*", "api");
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
// Buckets that do not refill within a test: what they hold is what was charged.
const user = { name: "user", capacity: 50, refill: 1, window: 3_600_000 };
const tokens = { name: "tokens", capacity: 5_000, refill: 1, window: 3_600_000 };
const set: QuotaCharge[] = [
  { key: alice, limit: "user", cost: 1 },
  { key: tenant, limit: "tokens", cost: 800 },
];

withRedis("reservations under faults", () => {
  const redis = useRedis();

  /**
   * An engine under `prefix` with both limits, whose replies pass a proxy that can hold them back
   * (past its 150 ms timeout), and what its two buckets hold, read past the proxy.
   */
  const behindProxy = async (prefix: string) => {
    const proxy = await startProxy(redis.server().port);
    const engine = new RedisQuotaEngine(ioredisClient(await redis.raw({ port: proxy.port })), {
      ...patient,
      prefix,
      timeout: 150,
    });
    await engine.addLimit(limitSpec(user));
    await engine.addLimit(limitSpec(tokens));
    const direct = await redis.raw();
    const held = async (): Promise<(number | undefined)[]> => [
      bucketTokens(await direct.getBuffer(engine.redisKey(alice, "user")), user, 0),
      bucketTokens(await direct.getBuffer(engine.redisKey(tenant, "tokens")), tokens, 0),
    ];
    return { proxy, engine, direct, held };
  };

  /**
   * Settles `id` (reserved for `set`) at 300 tokens with its reply held back: the settle runs in
   * Redis (500 back) and rejects; retried once the reply passes, it answers already_settled and
   * refunds nothing more. What the first settle rejected with.
   */
  const settleLost = async ({ proxy, engine, held }: Awaited<ReturnType<typeof behindProxy>>, id: string) => {
    proxy.hold();
    const lost = await engine.settle(id, { tokens: 300 }, 0).then(
      () => "answered",
      (e: Error) => e.message,
    );
    expect(await held()).toEqual([49, 4_700]); // it did run: 500 back
    proxy.release();
    await sleep(20);
    const again = await engine.settle(id, { tokens: 300 }, 0);
    expect(again.ok ? "settled" : again.code).toBe("already_settled");
    expect(await held()).toEqual([49, 4_700]); // refunded once
    return lost;
  };

  it("a settle whose reply is lost ran once: it rejects saying so, and its retry answers already_settled", async () => {
    const s = await behindProxy("sl:");
    const { proxy, engine, held } = s;
    // Loads both scripts (a NOSCRIPT held back would keep the script from running at all).
    await engine.reserve(set, 0, { id: "warm" });
    expect((await engine.cancel("warm", 0)).ok).toBe(true);
    expect((await engine.reserve(set, 0, { id: "lost" })).code).toBe("reserved");
    expect(await held()).toEqual([49, 4_200]);
    expect(await settleLost(s, "lost")).toMatch(
      /settle of reservation "lost" got no answer from Redis.*settle again with the same id/,
    );
    expect((await engine.cancel("lost", 0)).ok).toBe(false);
    expect(await held()).toEqual([49, 4_700]); // the cancel gave nothing back
    await proxy.stop();
  });

  it("under an id the engine made, whose record keeps no digest of its keys, a lost settle ran once and its retry answers already_settled", async () => {
    const s = await behindProxy("sm:");
    const { proxy, engine, direct, held } = s;
    const warm = await engine.reserve(set, 0, { id: "warm" });
    expect((await engine.cancel(warm.id, 0)).ok).toBe(true);
    const made = await engine.reserve(set, 0);
    expect([made.code, made.id.startsWith("#")]).toEqual(["reserved", true]);
    expect(await held()).toEqual([49, 4_200]);
    // The records: the caller's id keeps the digest of its keys (16 hex digits), the engine's none.
    const record = async (id: string) => (await direct.getBuffer(`sm:{acme}v${id}`))?.subarray(9, 25).toString();
    expect(await record("warm")).toMatch(/^[0-9a-f]{16}$/);
    expect(await record(made.id)).toBe("-".repeat(16));
    expect(await settleLost(s, made.id)).toMatch(/got no answer from Redis/);
    await proxy.stop();
  });

  it("a reserve sent under CLIENT PAUSE is indeterminate; its retry with the id is replayed, charged once", async () => {
    const hasty = new RedisQuotaEngine(await redis.ioredis(), {
      ...patient,
      prefix: "sp:",
      timeout: 100,
      outage: "closed",
    });
    await hasty.addLimit(limitSpec(user));
    await hasty.addLimit(limitSpec(tokens));
    const direct = await redis.raw();
    expect((await hasty.reserve(set, 0, { id: "warm" })).code).toBe("reserved"); // loads the script
    await direct.call("CLIENT", "PAUSE", "300", "WRITE");
    const lost = await hasty.reserve(set, 0, { id: "paused" });
    // Failing closed meanwhile: refused, and nothing is known of it here.
    expect([lost.path, lost.allowed, lost.code]).toEqual(["indeterminate", false, "refused"]);
    await sleep(400); // the pause ends, and the script queued behind it runs
    const again = await hasty.reserve(set, 0, { id: "paused" });
    expect([again.path, again.code, again.replayed, again.committed]).toEqual(["store", "replayed", true, true]);
    expect(bucketTokens(await direct.getBuffer(hasty.redisKey(tenant, "tokens")), tokens, 0)).toBe(3_400); // 2 × 800
    const settled = await hasty.settle("paused", { tokens: 0 }, 0);
    expect(settled.ok && settled.charges.map((c) => c.refunded)).toEqual([0, 800]);
    expect(bucketTokens(await direct.getBuffer(hasty.redisKey(tenant, "tokens")), tokens, 0)).toBe(4_200);
  });

  it("a process that reserves and dies leaks nothing: the record expires in Redis, the charge stands", async () => {
    const client = await redis.ioredis();
    const policy = { ...patient, prefix: "sd:", expiryMargin: 50 };
    const dying = new RedisQuotaEngine(client, policy);
    await dying.addLimit(limitSpec(tokens));
    const direct = await redis.raw();
    const now = Date.now();
    const r = await dying.reserve([{ key: tenant, limit: "tokens", cost: 800 }], now, { id: "orphan", ttl: 150 });
    expect([r.code, r.expiresAfter]).toEqual(["reserved", 150]);
    const record = "sd:{acme}vorphan";
    const pttl = await direct.pttl(record);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(150 + 50 + 1);
    // Another process cannot settle it (it keeps no record of its keys): it answers so, changing nothing.
    const other = new RedisQuotaEngine(client, policy);
    await other.addLimit(limitSpec(tokens));
    const stranger = await other.settle("orphan", { tokens: 0 }, Date.now());
    expect(stranger.ok ? "settled" : stranger.code).toBe("unknown_reservation");
    await sleep(260);
    expect(await direct.exists(record)).toBe(0);
    expect(await direct.keys("sd:*")).toEqual([dying.redisKey(tenant, "tokens")]);
    // Settled as reserved: the 800 stay charged.
    const left = bucketTokens(await direct.getBuffer(dying.redisKey(tenant, "tokens")), tokens, Date.now());
    expect(Math.floor(left ?? 0)).toBe(4_200);
    // The id is free again.
    const anew = await other.reserve([{ key: tenant, limit: "tokens", cost: 100 }], Date.now(), { id: "orphan" });
    expect(anew.code).toBe("reserved");
  });
});
