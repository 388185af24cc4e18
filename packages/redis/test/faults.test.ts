// Faults with a real Redis: a reply that never comes after the script committed, a server killed
// and restarted mid-run, a storm of atomic charges, a replica promoted.
import { monitorEventLoopDelay } from "node:perf_hooks";
import Redis from "ioredis";
import { afterAll, expect, it } from "vitest";
import { QuotaKey, limitSpec, perSecond } from "@tideward/quota-engine";
import type { QuotaCharge } from "@tideward/quota-engine";
import { RedisQuotaEngine, ioredisClient } from "@tideward/redis";
import type { Path, RedisDecision } from "@tideward/redis";
import { startProxy, startRedis } from "@tideward/redis/testing";
import type { RedisServer } from "@tideward/redis/testing";
import { bucketTokens, patient, safe, useRedis, withRedis } from "./server";

const alice = new QuotaKey("acme", "alice", "api");
const tenant = new QuotaKey("acme", "*", "api");
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
// The tokens a bucket's key holds at `at` (no refill within these tests), or undefined when it has none.
const held = async (redis: Redis, key: string, capacity: number, at: number): Promise<number | undefined> =>
  bucketTokens(await redis.getBuffer(key), { capacity, refill: 1, window: 3_600_000 }, at);

withRedis("faults", () => {
  const redis = useRedis();
  const extra: (RedisServer | Redis)[] = [];
  afterAll(async () => {
    for (const x of extra) {
      if (x instanceof Redis) x.disconnect();
      else await x.stop();
    }
  });

  it("commit-then-timeout: the answer is indeterminate, the charge counted once; a repeat with the request id is a no-op", async () => {
    const proxy = await startProxy(redis.server().port);
    const viaProxy = ioredisClient(await redis.raw({ port: proxy.port }));
    // One engine that gives up after 100 ms (the lost call), one patient with the rest: on a loaded
    // machine a call that should answer may take longer than 100 ms.
    const hasty = new RedisQuotaEngine(viaProxy, { ...patient, prefix: "ct:", timeout: 100, outage: "closed" });
    const engine = new RedisQuotaEngine(viaProxy, { ...patient, prefix: "ct:", outage: "closed" });
    for (const e of [hasty, engine]) {
      await e.addLimit(limitSpec({ name: "user", capacity: 5, refill: 1, window: 3_600_000 }));
      await e.addLimit(limitSpec({ name: "tenant", capacity: 50, refill: 1, window: 3_600_000 }));
    }
    const set: QuotaCharge[] = [
      { key: alice, limit: "user", cost: 2 },
      { key: tenant, limit: "tenant", cost: 10 },
    ];
    const direct = await redis.raw();
    const tokens = async (key: QuotaKey, limit: string): Promise<number | undefined> =>
      held(direct, engine.redisKey(key, limit), limit === "user" ? 5 : 50, 0);

    expect((await engine.checkTokenBucket(alice, "user", 0, 0 + 1, { requestId: "warm" })).path).toBe("store"); // loads the script
    await direct.del(engine.redisKey(alice, "user"));
    proxy.hold(); // the script reaches Redis and runs; its reply is held back past the timeout
    // Judged net of how late this process's timers ran (the timeout's fires late by as much).
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const started = performance.now();
    const lost = await hasty.checkAtomic(set, 0, { requestId: "req-1" });
    const took = performance.now() - started;
    lag.disable();
    expect(took - lag.max / 1e6).toBeLessThan(100 + 150);
    // Failing closed, the wait is the breaker's probe interval (a wait of 0 would say it passed).
    expect([lost.path, lost.allowed, lost.committed, lost.retryAfter]).toEqual(["indeterminate", false, false, 200]);
    expect([await tokens(alice, "user"), await tokens(tenant, "tenant")]).toEqual([3, 40]); // it did commit
    proxy.release();
    await sleep(20);

    // The caller retries with the same id: the stored answer, nothing charged again.
    const again = await engine.checkAtomic(set, 0, { requestId: "req-1" });
    expect([again.path, again.replayed, again.committed]).toEqual(["store", true, true]);
    expect(again.decisions.map((d) => d.remaining)).toEqual([3, 40]);
    expect([await tokens(alice, "user"), await tokens(tenant, "tenant")]).toEqual([3, 40]);
    // A new id is a new charge.
    const next = await engine.checkAtomic(set, 0, { requestId: "req-2" });
    expect([next.replayed, next.decisions.map((d) => d.remaining)]).toEqual([false, [1, 30]]);
    // Single checks take a request id too.
    const one = await engine.checkTokenBucket(alice, "user", 0, 1, { requestId: "req-3" });
    const same = await engine.checkTokenBucket(alice, "user", 0, 1, { requestId: "req-3" });
    expect([one.remaining, same.remaining, await tokens(alice, "user")]).toEqual([0, 0, 0]);
    await proxy.stop();
  });

  it("commit-then-timeout through node-redis too: indeterminate, then the request id's stored answer", async () => {
    const proxy = await startProxy(redis.server().port);
    const client = await redis.nodeRedis(proxy.port);
    const hasty = new RedisQuotaEngine(client, { ...patient, prefix: "ctn:", timeout: 100, outage: "open" });
    const engine = new RedisQuotaEngine(client, { ...patient, prefix: "ctn:", outage: "open" });
    for (const e of [hasty, engine])
      await e.addLimit(limitSpec({ name: "user", capacity: 5, refill: 1, window: 3_600_000 }));
    expect((await engine.checkTokenBucket(alice, "user", 0, 1, { requestId: "warm" })).path).toBe("store");
    proxy.hold();
    const lost = await hasty.checkTokenBucket(alice, "user", 0, 2, { requestId: "n-1" });
    expect([lost.path, lost.allowed]).toEqual(["indeterminate", true]); // fail open meanwhile
    proxy.release();
    await sleep(20);
    const again = await engine.checkTokenBucket(alice, "user", 0, 2, { requestId: "n-1" });
    expect([again.path, again.remaining]).toEqual(["store", 2]); // charged once: 5 − 1 − 2
    await proxy.stop();
  });

  it("killed mid-run: every call answers within its timeout from the outage mode; restarted: the store path resumes", async () => {
    const server = await startRedis();
    extra.push(server);
    const client = new Redis({ host: "127.0.0.1", port: server.port, ...safe, retryStrategy: () => 50 });
    client.on("error", () => undefined);
    extra.push(client);
    await client.connect();
    const timeout = 300;
    const engine = new RedisQuotaEngine(ioredisClient(client), {
      ...patient,
      prefix: "kill:",
      timeout,
      outage: "fallback",
      instances: 4,
      breaker: { window: 500, size: 5, probe: 50 },
    });
    await engine.addLimit(perSecond("r", 1_000_000));
    // The script loaded before the callers start, so the first answers do not wait on it.
    expect((await engine.checkTokenBucket(new QuotaKey("acme", "warm", "api"), "r", Date.now())).path).toBe("store");
    const paths: { at: number; path: Path; took: number }[] = [];
    // How late this process's timers ran: on a loaded machine every timer, the timeout's included,
    // fires late by as much, and a call's time is judged net of it.
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const t0 = performance.now();
    let phase = "before";
    let stop = false;
    const caller = async (i: number): Promise<void> => {
      const key = new QuotaKey("acme", `u${i}`, "api");
      while (!stop) {
        const start = performance.now();
        const d: RedisDecision = await engine.checkTokenBucket(key, "r", Date.now());
        paths.push({ at: start - t0, path: d.path, took: performance.now() - start });
        // Outage answers come at once: let timers run between calls, as real request handlers do.
        await sleep(phase === "down" ? 1 : 0);
      }
    };
    const run = Promise.all(Array.from({ length: 50 }, (_, i) => caller(i)));
    // Killed once the callers have had 200 answers from the store (about 400 ms on a quiet machine;
    // on a loaded one, a fixed 400 ms was mostly the callers' first, slowest calls).
    const stored = (): number => paths.filter((p) => p.path === "store").length;
    for (let waited = 0; stored() < 200 && waited < 15_000; waited += 10) await sleep(10);
    await sleep(Math.max(0, 400 - (performance.now() - t0)));
    phase = "down";
    await server.kill();
    const killedAt = performance.now() - t0;
    await sleep(600);
    const restarting = performance.now() - t0; // Redis may answer any moment from here
    await server.restart();
    const restartedAt = performance.now() - t0;
    phase = "after";
    await sleep(2_000);
    stop = true;
    await run;
    const during = paths.filter((p) => p.at > killedAt + timeout && p.at < restarting);
    // Before the kill, Redis answered (on a loaded machine a few calls may time out: indeterminate).
    const before = paths.filter((p) => p.at < killedAt - 50);
    expect(before.every((p) => p.path === "store" || p.path === "indeterminate" || p.path === "fallback")).toBe(true);
    expect(before.filter((p) => p.path === "store").length / before.length).toBeGreaterThan(0.5);
    expect(during.length).toBeGreaterThan(100);
    expect(during.every((p) => p.path === "fallback" || p.path === "indeterminate")).toBe(true);
    lag.disable();
    // No call waited past its timeout (plus the timer's tick, the loop's worst lateness and slack).
    expect(paths.reduce((m, p) => Math.max(m, p.took), 0)).toBeLessThan(timeout + 250 + lag.max / 1e6);
    // Most outage answers came at once, without waiting on Redis.
    expect(during.filter((p) => p.took < 20).length / during.length).toBeGreaterThan(0.9);
    // The store path resumed after the restart.
    expect(paths.some((p) => p.at > restartedAt && p.path === "store")).toBe(true);
    const late = paths.filter((p) => p.at > restartedAt + 1_000);
    expect(late.filter((p) => p.path === "store").length / late.length).toBeGreaterThan(0.5);
  }, 40_000);

  it("a storm of 10,000 atomic charges from 50 callers in flight: totals charged equal totals admitted", async () => {
    // A timeout long enough for a loaded machine: this test is about atomicity, not outages.
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: "storm:", timeout: 10_000 });
    // No refill within the storm (one unit an hour), so every unit charged is a unit admitted.
    await engine.addLimit(limitSpec({ name: "user", capacity: 400, refill: 1, window: 3_600_000 }));
    await engine.addLimit(limitSpec({ name: "tenant", capacity: 20_000, refill: 1, window: 3_600_000 }));
    const users = Array.from({ length: 10 }, (_, i) => new QuotaKey("acme", `u${i}`, "api"));
    const admitted = new Map<string, number>();
    let allowed = 0;
    let seed = 7;
    const draw = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return 1 + (seed % n);
    };
    const caller = async (): Promise<void> => {
      for (let i = 0; i < 200; i++) {
        const user = users[draw(10) - 1];
        const set = [
          { key: user, limit: "user", cost: draw(3) },
          { key: tenant, limit: "tenant", cost: draw(5) },
        ];
        const r = await engine.checkAtomic(set, 1_000);
        expect(r.path).toBe("store");
        if (r.committed) {
          allowed++;
          for (const c of set) admitted.set(c.key.id + c.limit, (admitted.get(c.key.id + c.limit) ?? 0) + c.cost);
        }
      }
    };
    await Promise.all(Array.from({ length: 50 }, caller));
    const direct = await redis.raw();
    let userTotal = 0;
    for (const user of users) {
      const left = (await held(direct, engine.redisKey(user, "user"), 400, 1_000)) ?? 400;
      expect(400 - left).toBe(admitted.get(`${user.id}user`) ?? 0);
      userTotal += 400 - left;
    }
    const tenantLeft = (await held(direct, engine.redisKey(tenant, "tenant"), 20_000, 1_000)) ?? 20_000;
    expect(20_000 - tenantLeft).toBe(admitted.get(`${tenant.id}tenant`));
    // Users ran dry (10 × 400 units), so sets were refused, and none got past a drained bucket.
    expect(userTotal).toBeLessThanOrEqual(4_000);
    expect(allowed).toBeGreaterThan(1_000);
    expect(allowed).toBeLessThan(10_000);
  }, 30_000);

  it("a replica promoted with REPLICAOF NO ONE: scripts reloaded there, state carried over", async () => {
    const primary = await startRedis({ args: ["--repl-diskless-sync-delay", "0"] });
    const replica = await startRedis();
    extra.push(primary, replica);
    await replica.command("REPLICAOF", "127.0.0.1", primary.port);
    const connect = async (port: number): Promise<Redis> => {
      const c = new Redis({ host: "127.0.0.1", port, ...safe });
      c.on("error", () => undefined);
      extra.push(c);
      await c.connect();
      return c;
    };
    const first = new RedisQuotaEngine(ioredisClient(await connect(primary.port)), { ...patient, prefix: "fo:" });
    await first.addLimit(limitSpec({ name: "r", capacity: 5, refill: 1, window: 3_600_000 }));
    for (let i = 0; i < 3; i++) await first.checkTokenBucket(alice, "r", 0);
    for (let i = 0; i < 100 && !(await replica.command("INFO", "replication")).includes("master_link_status:up"); i++)
      await sleep(50);
    const key = first.redisKey(alice, "r");
    const watcher = await connect(replica.port);
    for (let i = 0; i < 200 && (await held(watcher, key, 5, 0)) !== 2; i++) await sleep(25);
    expect(await held(watcher, key, 5, 0)).toBe(2);
    expect(await replica.command("REPLICAOF", "NO", "ONE")).toBe("OK");
    // The application fails over to the promoted replica, which has never seen the script.
    const after = new RedisQuotaEngine(ioredisClient(await connect(replica.port)), { ...patient, prefix: "fo:" });
    await after.addLimit(limitSpec({ name: "r", capacity: 5, refill: 1, window: 3_600_000 }));
    const d = await after.checkTokenBucket(alice, "r", 0);
    expect([d.path, d.allowed, d.remaining]).toEqual(["store", true, 1]);
  }, 20_000);
});
