// Reserved, refunded and topped-up quota units through the real SDK: an in-process engine, a
// real redis-server, and admit's reserve-then-settle on top of an instrumented store.
import { Redis } from "ioredis";
import { admit } from "@tideward/guard";
import type { Verdict } from "@tideward/guard";
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import type { QuotaStore } from "@tideward/quota-engine";
import { RedisQuotaEngine, ioredisClient } from "@tideward/redis";
import { startRedis } from "@tideward/redis/testing";
import { describe, expect, it } from "vitest";
import { instrumentQuota } from "../src/index";
import { metricsSdk } from "./support/sdk";

const RESERVED = "tideward.quota.reserved";
const REFUNDED = "tideward.quota.refunded";
const TOPPED_UP = "tideward.quota.topped_up";
const DECISIONS = "tideward.quota.decisions";
const limit = "tideward.quota.limit";
const algorithm = "tideward.quota.algorithm";

const tenant = new QuotaKey("acme", "*", "chat");
// One scope, so that on Redis the set's keys share a slot.
const model = new QuotaKey("acme", "model", "model-l");
const specs = [
  limitSpec({ name: "tenant-tokens", capacity: 10_000, refill: 1, window: 3_600_000 }),
  limitSpec({ name: "model-tokens", capacity: 1_500, refill: 1, window: 3_600_000 }),
];
const request = (n: number) => [charge(tenant, "tenant-tokens", n), charge(model, "model-tokens", n, "gcra")];

describe("an instrumented quota store that reserves", () => {
  it("counts units reserved, refunded and topped up, by limit and algorithm, in process", async () => {
    const sdk = metricsSdk();
    const engine = new QuotaEngine();
    for (const s of specs) engine.addLimit(s);
    const quota = instrumentQuota(engine, { meter: sdk.meter, name: "llm" });
    const a = quota.reserve(request(800), 0);
    const b = quota.reserve(request(200), 0);
    const refused = quota.reserve(request(1_000), 0); // the model's 1 500 hold 500 more: refused
    expect([a.code, b.code, refused.code]).toEqual(["reserved", "reserved", "refused"]);
    expect(quota.settle(a.id, { "tenant-tokens": 300, "model-tokens": 300 }, 10).ok).toBe(true);
    expect(quota.settle(b.id, { "tenant-tokens": 350, "model-tokens": 250 }, 10).ok).toBe(true);
    const c = quota.reserve(request(100), 20);
    expect(quota.cancel(c.id, 30).ok).toBe(true);
    expect(quota.settle(a.id, {}, 40).ok).toBe(false); // settled already: nothing counted again
    const m = await sdk.collect();
    const units = (name: string, l: string, alg: string) => m.sum(name, { [limit]: l, [algorithm]: alg });
    expect(units(RESERVED, "tenant-tokens", "bucket")).toBe(1_100);
    expect(units(RESERVED, "model-tokens", "gcra")).toBe(1_100);
    expect(units(REFUNDED, "tenant-tokens", "bucket")).toBe(600); // 500 of a, 100 cancelled
    expect(units(REFUNDED, "model-tokens", "gcra")).toBe(600);
    expect(units(TOPPED_UP, "tenant-tokens", "bucket")).toBe(150);
    expect(units(TOPPED_UP, "model-tokens", "gcra")).toBe(50);
    // A reserve's decisions count as a charge set's: three reserved twice, one refused.
    expect(m.sum(DECISIONS, { [limit]: "model-tokens" })).toBe(4);
    quota.close();
    quota.settle(quota.reserve(request(10), 50).id, {}, 60);
    const after = await sdk.collect();
    expect(after.sum(RESERVED)).toBe(2_200); // closed: counted no more
    await sdk.shutdown();
  });

  it("counts admit's reservations as they settle after the response", async () => {
    const sdk = metricsSdk();
    const engine = new QuotaEngine();
    for (const s of specs) engine.addLimit(s);
    const store = instrumentQuota(engine, { meter: sdk.meter, name: "admit" });
    const admission = admit({ clock: () => 0, quota: { store, charges: (_key, n) => request(n), reserve: true } });
    const v = admission.check("alice", 800) as Verdict;
    v.settle({ "tenant-tokens": 300, "model-tokens": 900 });
    const m = await sdk.collect();
    expect(m.sum(RESERVED, { [limit]: "tenant-tokens" })).toBe(800);
    expect(m.sum(REFUNDED, { [limit]: "tenant-tokens" })).toBe(500);
    expect(m.sum(TOPPED_UP, { [limit]: "model-tokens" })).toBe(100);
    await sdk.shutdown();
  });

  it("has no reserve where the store has none, and makes no reservation instruments for it", async () => {
    const sdk = metricsSdk();
    const engine = new QuotaEngine();
    const plain = { limit: (n: string) => engine.limit(n), checkAtomic: () => undefined } as unknown as QuotaStore;
    const quota = instrumentQuota(plain, { meter: sdk.meter, name: "plain" });
    expect("reserve" in quota).toBe(false);
    const m = await sdk.collect();
    expect([RESERVED, REFUNDED, TOPPED_UP].filter((n) => m.has(n))).toEqual([]);
    await sdk.shutdown();
  });

  it("counts a Redis engine's units when its promises settle", { timeout: 60_000 }, async () => {
    const sdk = metricsSdk();
    const server = await startRedis();
    const redis = new Redis(server.port, "127.0.0.1", {
      lazyConnect: true,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
    });
    try {
      await redis.connect();
      const engine = new RedisQuotaEngine(ioredisClient(redis), { prefix: "otel-reserve:" });
      for (const s of specs) await engine.addLimit(s);
      const quota = instrumentQuota(engine, { meter: sdk.meter, name: "redis" });
      const now = Date.now();
      const r = await quota.reserve(request(800), now);
      expect(r.code).toBe("reserved");
      const s = await quota.settle(r.id, { "tenant-tokens": 300, "model-tokens": 1_000 }, now + 5);
      expect(s.ok).toBe(true);
      const m = await sdk.collect();
      expect(m.sum(RESERVED, { [limit]: "model-tokens", [algorithm]: "gcra" })).toBe(800);
      expect(m.sum(REFUNDED, { [limit]: "tenant-tokens" })).toBe(500);
      expect(m.sum(TOPPED_UP, { [limit]: "model-tokens" })).toBe(200);
    } finally {
      redis.disconnect();
      await server.stop();
      await sdk.shutdown();
    }
  });
});
