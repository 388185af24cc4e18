// A quota store's decisions through the real SDK: in process, answering at once, and on a real
// redis-server, answering promises.
import { Redis } from "ioredis";
import { QuotaEngine, QuotaKey, charge, perMinute, perSecond } from "@tideward/quota-engine";
import type { Decision, QuotaStore } from "@tideward/quota-engine";
import { RedisQuotaEngine, ioredisClient } from "@tideward/redis";
import { startRedis } from "@tideward/redis/testing";
import { describe, expect, it } from "vitest";
import { instrumentQuota } from "../src/index";
import { metricsSdk } from "./support/sdk";

const DECISIONS = "tideward.quota.decisions";
const limit = "tideward.quota.limit";
const reason = "tideward.quota.reason";
const algorithm = "tideward.quota.algorithm";

const key = (subject: string) => new QuotaKey("tenant", subject, "api");

describe("an instrumented quota engine", () => {
  it("counts one decision a charge, by limit, reason and algorithm, and answers as the engine does", async () => {
    const sdk = metricsSdk();
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("user", 2));
    engine.addLimit(perMinute("org", 100));
    const quota = instrumentQuota(engine, { meter: sdk.meter, name: "quota" });
    const answers: Decision[] = [];
    for (let i = 0; i < 3; i++) answers.push(quota.checkTokenBucket(key("ada"), "user", 0));
    answers.push(quota.checkWindow(key("ada"), "org", 0), quota.checkGcra(key("bob"), "user", 0));
    // All or nothing: the user's bucket is spent, so the org's charge fits but is not committed.
    const report = quota.checkAtomic([charge(key("ada"), "org", 1), charge(key("ada"), "user", 1)], 0);
    expect(answers.map((d) => d.reason)).toEqual(["ok", "ok", "exhausted", "ok", "ok"]);
    expect(report.decisions.map((d) => d.reason)).toEqual(["not_committed", "exhausted"]);
    const batch = quota.checkMany(
      "user",
      [
        { key: key("cy"), now: 0 },
        { key: key("cy"), now: 0 },
      ],
      "window",
    );
    expect(batch.decisions.map((d) => d.reason)).toEqual(["ok", "ok"]);
    // A name the engine does not know is no attribute value: it reads _OTHER.
    expect(quota.checkTokenBucket(key("ada"), "no-such-limit", 0).reason).toBe("unknown_limit");
    // A peek decides nothing.
    quota.peekAtomic([charge(key("ada"), "user", 1)], 0);

    const m = await sdk.collect();
    const row = (l: string, a: string, r: string) => m.sum(DECISIONS, { [limit]: l, [algorithm]: a, [reason]: r });
    expect(row("user", "bucket", "ok")).toBe(2);
    expect(row("user", "bucket", "exhausted")).toBe(2);
    expect(row("org", "window", "ok")).toBe(1);
    expect(row("user", "gcra", "ok")).toBe(1);
    expect(row("org", "bucket", "not_committed")).toBe(1);
    expect(row("user", "window", "ok")).toBe(2);
    expect(row("_OTHER", "bucket", "unknown_limit")).toBe(1);
    expect(m.sum(DECISIONS)).toBe(10);
    expect(m.values(DECISIONS, limit).sort()).toEqual(["_OTHER", "org", "user"]);
    expect(m.sum("tideward.quota.keys", { "tideward.name": "quota" })).toBe(engine.stats().keys);
    expect(engine.stats().keys).toBeGreaterThan(0);

    const keys = engine.stats().keys;
    quota.close();
    quota.checkTokenBucket(key("dan"), "user", 0);
    expect(engine.stats().keys).toBeGreaterThan(keys);
    const after = await sdk.collect();
    expect(after.sum(DECISIONS)).toBe(10); // closed: counted no more, and the total kept
    expect(after.sum("tideward.quota.keys")).toBeLessThanOrEqual(keys); // and no longer read
    await sdk.shutdown();
  });

  it("counts a Redis engine's decisions when its promises settle", { timeout: 60_000 }, async () => {
    const sdk = metricsSdk();
    const server = await startRedis();
    const redis = new Redis(server.port, "127.0.0.1", {
      lazyConnect: true,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
    });
    try {
      await redis.connect();
      const engine = new RedisQuotaEngine(ioredisClient(redis), { prefix: "otel:" });
      await engine.addLimit(perSecond("user", 1));
      const quota = instrumentQuota(engine, { meter: sdk.meter, name: "redis" });
      const now = Date.now();
      const first = quota.checkTokenBucket(key("ada"), "user", now);
      expect(first).toBeInstanceOf(Promise); // the store's own answer, a promise
      const reasons = [(await first).reason, (await quota.checkTokenBucket(key("ada"), "user", now)).reason];
      expect(reasons).toEqual(["ok", "exhausted"]);
      const report = await quota.checkAtomic([charge(key("bob"), "user", 1)], now);
      expect(report.allowed).toBe(true);
      const m = await sdk.collect();
      expect(m.sum(DECISIONS, { [limit]: "user", [reason]: "ok" })).toBe(2);
      expect(m.sum(DECISIONS, { [limit]: "user", [reason]: "exhausted" })).toBe(1);
    } finally {
      redis.disconnect();
      await server.stop();
      await sdk.shutdown();
    }
  });

  it("counts a hierarchy's decision once a level, as an atomic set of the same charges", async () => {
    const sdk = metricsSdk();
    const engine = new QuotaEngine();
    engine.addLimit(perMinute("req", 2));
    const [job, project, tenant] = ["job", "project", "tenant"].map(key);
    engine.addLink({ child: job, parent: project, limit: "req", ratio: 1 });
    engine.addLink({ child: project, parent: tenant, limit: "req", ratio: 1 });
    const quota = instrumentQuota(engine, { meter: sdk.meter, name: "tree" });
    const reasons = [0, 1, 2].map(() => quota.checkHierarchy(job, "req", 0).reason);
    expect(reasons).toEqual(["ok", "ok", "exhausted"]);
    const report = quota.checkAtomic(engine.chain(job, "req"), 0);
    expect(report.decisions.map((d) => d.reason)).toEqual(["exhausted", "exhausted", "exhausted"]);
    const m = await sdk.collect();
    // Two hierarchies of three levels allowed, one denied at every level, and the atomic set.
    expect(m.sum(DECISIONS, { [limit]: "req", [reason]: "ok" })).toBe(6);
    expect(m.sum(DECISIONS, { [limit]: "req", [reason]: "exhausted" })).toBe(6);
    expect(m.sum(DECISIONS)).toBe(12);
    await sdk.shutdown();
  });

  it("hands back a report it cannot read as the store gave it, counting nothing for it", async () => {
    const sdk = metricsSdk();
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("user", 2));
    const many = { total: 1, allowed: 1, denied: 0, decisions: {} }; // no list
    const unreadable = {
      allowed: true,
      get reason(): string {
        throw new Error("getter");
      },
    };
    const atomic = { allowed: true, decisions: [engine.checkTokenBucket(key("ada"), "user", 0), unreadable] };
    const store = {
      checkAtomic: () => atomic,
      checkMany: () => many,
      checkTokenBucket: () => unreadable,
      checkHierarchy: () => Promise.resolve(unreadable),
    } as unknown as QuotaStore;
    const quota = instrumentQuota(store, { meter: sdk.meter, name: "garbage" });
    expect(quota.checkMany("user", [])).toBe(many);
    expect(quota.checkTokenBucket(key("ada"), "user", 0)).toBe(unreadable);
    expect(quota.checkAtomic([charge(key("ada"), "user", 1), charge(key("ada"), "user", 1)], 0)).toBe(atomic);
    expect(await quota.checkHierarchy(key("ada"), "user", 0)).toBe(unreadable);
    expect((await sdk.collect()).sum(DECISIONS)).toBe(0);
    await sdk.shutdown();
  });

  it("refuses what is not a quota store, naming what it got", () => {
    const sdk = metricsSdk();
    expect(() => instrumentQuota({} as never, { meter: sdk.meter, name: "q" })).toThrow(
      new TypeError("instrumentQuota expects a QuotaStore (a QuotaEngine, or a Redis engine), got [object Object]"),
    );
  });
});
