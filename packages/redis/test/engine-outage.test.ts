// The Redis engine's and limiters' outage modes: what every decision answers while the connection
// is down (nothing is sent), open, closed or from a local fallback limiter.
import { describe, expect, it } from "vitest";
import { Bucket, Gcra, Period, Sliding } from "@tideward/limiters";
import { QuotaKey, charge, limitSpec, perSecond } from "@tideward/quota-engine";
import { RedisBucket, RedisGcra, RedisPeriod, RedisQuotaEngine, RedisSliding, ioredisClient } from "@tideward/redis";
import { disconnected } from "./server";
import { alice, bob } from "./keys";

describe("outage modes (nothing sent while the connection is down)", () => {
  for (const [outage, allowed] of [
    ["open", [true, true, true]],
    ["closed", [false, false, false]],
  ] as const) {
    it(`${outage}: every decision says so, at once`, async () => {
      const engine = new RedisQuotaEngine(ioredisClient(disconnected()), { outage });
      await engine.addLimit(perSecond("r", 1));
      const got = [];
      for (let i = 0; i < 3; i++) got.push(await engine.checkTokenBucket(alice, "r", 0));
      expect(got.map((d) => d.allowed)).toEqual(allowed);
      expect(got.map((d) => d.path)).toEqual([outage, outage, outage]);
      const set = await engine.checkAtomic([{ key: alice, limit: "r", cost: 1 }], 0);
      expect([set.path, set.committed]).toEqual([outage, outage === "open"]);
      // A refusal's wait is never 0, which would say the charge passed: closed, it is the
      // breaker's probe interval, the longest before a call reaches Redis again.
      const wait = outage === "open" ? 0 : 200;
      expect([set.retryAfter, ...got.map((d) => d.retryAfter)]).toEqual([wait, wait, wait, wait]);
      // A set naming an unknown limit is still answered, never thrown.
      const odd = await engine.checkAtomic(
        [
          { key: alice, limit: "r", cost: 1 },
          { key: alice, limit: "nope", cost: 1 },
        ],
        0,
      );
      expect(odd.decisions.map((d) => d.path)).toEqual([outage, outage]);
    });
  }

  it("closed: every refusal waits the breaker's probe interval, never 0 (which says a charge passed), at both clock scales", async () => {
    const probe = 750;
    const engine = new RedisQuotaEngine(ioredisClient(disconnected()), { outage: "closed", breaker: { probe } });
    await engine.addLimit(perSecond("r", 5));
    await engine.addLink({ child: alice, parent: new QuotaKey("acme", "*", "api"), limit: "r", ratio: 1 });
    const client = ioredisClient(disconnected());
    const limiters = [
      new RedisBucket(client, "b", 5, { outage: "closed", breaker: { probe } }),
      new RedisGcra(client, "g", 5, { outage: "closed", breaker: { probe } }),
      new RedisSliding(client, "s", 5, 1_000, { outage: "closed", breaker: { probe } }),
      new RedisPeriod(client, "p", 5, 1_000, { outage: "closed", breaker: { probe } }),
    ];
    for (const now of [0.25, Date.now() + 0.5]) {
      const singles = [
        await engine.checkTokenBucket(alice, "r", now),
        await engine.checkWindow(alice, "r", now, 2),
        await engine.checkGcra(alice, "r", now),
        await engine.checkHierarchy(alice, "r", now),
      ];
      expect(singles.map((d) => [d.allowed, d.path, d.retryAfter])).toEqual(
        singles.map(() => [false, "closed", probe]),
      );
      const set = await engine.checkAtomic([charge(alice, "r"), charge(bob, "r", 2, "gcra")], now);
      expect([set.allowed, set.failedIndex, set.retryAfter]).toEqual([false, 0, probe]);
      expect(set.decisions.map((d) => d.retryAfter)).toEqual([probe, probe]);
      expect((await engine.peekAtomic([charge(alice, "r")], now)).retryAfter).toBe(probe);
      for (const limiter of limiters) {
        expect(await limiter.next("a", now)).toBe(probe);
        expect(await limiter.rateLimit("a", now)).toEqual({ limit: 5, remaining: 0, reset: probe });
      }
    }
  });

  it("fallback: a local limiter of the same spec with the rate divided by the instances", async () => {
    const engine = new RedisQuotaEngine(ioredisClient(disconnected()), { outage: "fallback", instances: 4 });
    await engine.addLimit(limitSpec({ name: "r", capacity: 100, refill: 100, window: 1_000 }));
    let admitted = 0;
    for (let i = 0; i < 200; i++) if ((await engine.checkTokenBucket(alice, "r", 0)).allowed) admitted++;
    expect(admitted).toBe(25); // a quarter of the burst on each of four instances
    // A quarter of the rate: 25 a second, so 250 ms later 6 more tokens (6.25).
    let later = 0;
    for (let i = 0; i < 20; i++) if ((await engine.checkTokenBucket(alice, "r", 250)).allowed) later++;
    expect(later).toBe(6);
    const w = await engine.checkWindow(bob, "r", 0, 25);
    expect([w.path, w.allowed, (await engine.checkWindow(bob, "r", 1, 1)).allowed]).toEqual(["fallback", true, false]);
  });
});

describe("the limiters' outage modes", () => {
  it("fallback: each id gets a local limiter with the rate and burst divided by the instances, and says so", async () => {
    const client = ioredisClient(disconnected());
    const bucket = new RedisBucket(client, "b", 40, { burst: 40, instances: 4 });
    const got = [];
    for (let i = 0; i < 12; i++) got.push(await bucket.decide("alice", 0));
    expect(got.filter((d) => d.answer).length).toBe(10);
    expect(new Set(got.map((d) => d.path))).toEqual(new Set(["fallback"]));
    expect(await bucket.next("alice", 0)).toBe(100); // 10 a second locally
    const window = new RedisSliding(client, "s", 8, 1_000, { instances: 4 });
    expect([await window.take("a", 0), await window.take("a", 1), await window.take("a", 2)]).toEqual([
      true,
      true,
      false,
    ]);
    const closed = new RedisPeriod(client, "p", 5, 1_000, { outage: "closed" });
    expect(await closed.decide("a", 0)).toEqual({ answer: "over", path: "closed" });
    const open = new RedisBucket(client, "o", 1, { outage: "open" });
    expect([await open.take("a", 0), await open.take("a", 0), await open.peek("a", 0)]).toEqual([true, true, true]);
  });

  it("every limiter's take, peek and next answer from the outage mode: the in-process limiter's in fallback, else the open or closed answer", async () => {
    const client = ioredisClient(disconnected());
    // At a clock near 0 and near Date.now(), fractional; costs of 0.5 to 3 where a limiter takes one.
    for (const origin of [0, 1_700_000_000_000.25]) {
      const id = `a${origin}`;
      const steps: [at: number, n: number][] = [
        [0, 1],
        [0, 1],
        [0, 0.5],
        [10, 2],
        [10.5, 1],
        [60, 3],
        [60, 1],
        [200, 1],
        [1_000, 2],
        [1_000, 1],
      ];
      const costed: [RedisBucket | RedisGcra, Bucket | Gcra][] = [
        [new RedisBucket(client, "b", 20, { burst: 2 }), new Bucket(20, { burst: 2, now: origin })],
        [new RedisGcra(client, "g", 20, { burst: 2 }), new Gcra(20, { burst: 2 })],
      ];
      for (const [remote, local] of costed) {
        for (const [at, n] of steps) {
          const now = origin + at;
          expect(await remote.decide(id, now, n)).toEqual({ answer: local.take(now, n), path: "fallback" });
          expect([await remote.peek(id, now, n), await remote.next(id, now, n)]).toEqual([
            local.peek(now, n),
            local.next(now, n),
          ]);
        }
      }
      const counted: [RedisSliding | RedisPeriod, Sliding | Period][] = [
        [new RedisSliding(client, "s", 2, 100), new Sliding(2, 100)],
        [new RedisPeriod(client, "p", 2, 100, { align: true }), new Period(2, 100, { align: true })],
      ];
      for (const [remote, local] of counted) {
        for (const [at] of steps) {
          const now = origin + at;
          expect(await remote.decide(id, now)).toEqual({ answer: local.take(now), path: "fallback" });
          expect([await remote.peek(id, now), await remote.next(id, now)]).toEqual([local.peek(now), local.next(now)]);
        }
      }
    }
    for (const outage of ["open", "closed"] as const) {
      const yes = outage === "open";
      for (const remote of [new RedisBucket(client, "b", 1, { outage }), new RedisGcra(client, "g", 1, { outage })]) {
        // Above the burst too: the outage mode answers without looking at the cost.
        for (const n of [1, 5]) {
          expect(await remote.decide("a", 0, n)).toEqual({ answer: yes, path: outage });
          // Closed, a refusal's wait is the breaker's probe interval, not "never".
          expect([await remote.peek("a", 0, n), await remote.next("a", 0, n)]).toEqual([yes, yes ? 0 : 200]);
        }
      }
      const window = new RedisSliding(client, "s", 1, 100, { outage });
      expect([await window.decide("a", 0), await window.peek("a", 0)]).toEqual([{ answer: yes, path: outage }, yes]);
      const period = new RedisPeriod(client, "p", 1, 100, { outage });
      const answer = yes ? "under" : "over";
      expect([await period.decide("a", 0), await period.peek("a", 0)]).toEqual([{ answer, path: outage }, answer]);
    }
  });
});
