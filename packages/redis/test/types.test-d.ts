// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import type Redis from "ioredis";
import { describe, expectTypeOf, test } from "vitest";
import type { RateLimit } from "@tideward/limiters";
import { QuotaKey, charge } from "@tideward/quota-engine";
import type { AtomicReport, Decision, QuotaStore } from "@tideward/quota-engine";
import {
  RedisBucket,
  RedisGcra,
  RedisPeriod,
  RedisQuotaEngine,
  RedisSliding,
  ioredisClient,
  nodeRedisClient,
  redisPolicy,
  scripts,
  slotOf,
} from "@tideward/redis";
import type {
  CallOptions,
  LuaScript,
  Outage,
  Path,
  RedisAtomicReport,
  RedisBatchReport,
  RedisDecision,
  RedisPolicy,
  ScriptClient,
  Shadow,
  TakeAnswer,
  CrossSlotError,
  Lease,
  ScriptError,
} from "@tideward/redis";
import { startRedis } from "@tideward/redis/testing";
import type { RedisServer } from "@tideward/redis/testing";

declare const redis: Redis;
const client = ioredisClient(redis);
const engine = new RedisQuotaEngine(client);
const alice = new QuotaKey("acme", "alice", "api");

describe("clients", () => {
  // node-redis's own types are left out: they alone take most of a type check's time.
  test("ioredis and node-redis both make a ScriptClient; nothing else stands in for one", () => {
    expectTypeOf(client).toEqualTypeOf<ScriptClient>();
    expectTypeOf(ioredisClient(redis, { coalesce: false })).toEqualTypeOf<ScriptClient>();
    expectTypeOf(nodeRedisClient).returns.toEqualTypeOf<ScriptClient>();
    // @ts-expect-error -- a plain object is no client
    new RedisQuotaEngine({});
    // @ts-expect-error -- the adapter, not the connection
    new RedisQuotaEngine(redis);
  });
});

describe("the engine", () => {
  test("is a QuotaStore whose checks return promises of Redis decisions", () => {
    expectTypeOf(engine).toMatchTypeOf<QuotaStore>();
    const d = engine.checkTokenBucket(alice, "requests", Date.now());
    expectTypeOf(d).toEqualTypeOf<Promise<RedisDecision>>();
    expectTypeOf(engine.checkWindow(alice, "requests", 0, 2)).toEqualTypeOf<Promise<RedisDecision>>();
    expectTypeOf(engine.checkGcra(alice, "requests", 0, 1, { requestId: "r-1" })).toEqualTypeOf<
      Promise<RedisDecision>
    >();
    expectTypeOf(engine.checkHierarchy(alice, "requests", 0)).toEqualTypeOf<Promise<RedisDecision>>();
    expectTypeOf(engine.checkMany("requests", [{ key: alice, now: 0 }])).toEqualTypeOf<Promise<RedisBatchReport>>();
    expectTypeOf<RedisDecision>().toMatchTypeOf<Decision>();
    expectTypeOf<RedisAtomicReport>().toMatchTypeOf<AtomicReport>();
    // @ts-expect-error -- a key is a QuotaKey, not its id
    void engine.checkTokenBucket(alice.id, "requests", 0);
    // @ts-expect-error -- no per-call options but a request id
    void engine.checkTokenBucket(alice, "requests", 0, 1, { timeout: 5 });
  });

  test("a decision says which part answered, whether it was replayed, and what a shadow limit would have said", async () => {
    const d = await engine.checkTokenBucket(alice, "requests", 0);
    expectTypeOf(d.path).toEqualTypeOf<Path>();
    expectTypeOf<Path>().toEqualTypeOf<"store" | "cache" | "fallback" | "open" | "closed" | "indeterminate">();
    expectTypeOf(d.replayed).toEqualTypeOf<boolean>();
    expectTypeOf(d.shadow).toEqualTypeOf<Shadow | undefined>();
    const set = await engine.checkAtomic([charge(alice, "requests")], 0, { requestId: "r" });
    expectTypeOf(set.replayed).toEqualTypeOf<boolean>();
    expectTypeOf(set.decisions).toEqualTypeOf<readonly RedisDecision[]>();
    // @ts-expect-error -- a decision is read-only
    d.replayed = true;
    // @ts-expect-error -- a report is read-only
    set.retryAfter = 0;
  });

  test("a request id is a string", () => {
    expectTypeOf<CallOptions>().toEqualTypeOf<{ readonly requestId?: string }>();
    // @ts-expect-error -- not a number
    const o: CallOptions = { requestId: 7 };
    void o;
  });

  test("leases are synchronous in process", () => {
    const lease = engine.lease(alice, "requests", { slice: 100 });
    expectTypeOf(lease).toEqualTypeOf<Lease>();
    expectTypeOf(lease.take(0)).toEqualTypeOf<boolean>();
    expectTypeOf(lease.fill(0)).toEqualTypeOf<Promise<number>>();
    expectTypeOf(lease.release(0)).toEqualTypeOf<Promise<number>>();
    // @ts-expect-error -- a slice is required
    engine.lease(alice, "requests", {});
  });
});

describe("the policy", () => {
  test("every field is optional where a policy is taken, and typed", () => {
    expectTypeOf(redisPolicy).toEqualTypeOf<RedisPolicy>();
    expectTypeOf<RedisPolicy["outage"]>().toEqualTypeOf<Outage>();
    expectTypeOf<Outage>().toEqualTypeOf<"fallback" | "open" | "closed">();
    expectTypeOf<RedisPolicy["clock"]>().toEqualTypeOf<"caller" | "redis">();
    expectTypeOf<RedisPolicy["hashTag"]>().toEqualTypeOf<(key: QuotaKey) => string>();
    new RedisQuotaEngine(client, { outage: "closed", breaker: { probe: 500 } });
    // @ts-expect-error -- not an outage mode
    new RedisQuotaEngine(client, { outage: "shut" });
    // @ts-expect-error -- a span is a number of milliseconds
    new RedisQuotaEngine(client, { timeout: "250ms" });
  });
});

describe("the limiters", () => {
  test("the in-process limiters' methods, returning promises", () => {
    const bucket = new RedisBucket(client, "api", 10, { burst: 20, outage: "open" });
    expectTypeOf(bucket.take("alice", 0)).toEqualTypeOf<Promise<boolean>>();
    expectTypeOf(bucket.decide("alice", 0, 2)).toEqualTypeOf<Promise<TakeAnswer>>();
    expectTypeOf(bucket.next("alice", 0)).toEqualTypeOf<Promise<number>>();
    expectTypeOf(bucket.rateLimit("alice", 0)).toEqualTypeOf<Promise<RateLimit>>();
    const period = new RedisPeriod(client, "p", 5, 1_000, { align: true });
    expectTypeOf(period.take("alice", 0)).toEqualTypeOf<Promise<"under" | "hit" | "over">>();
    expectTypeOf(period.decide("alice", 0)).toEqualTypeOf<Promise<TakeAnswer<"under" | "hit" | "over">>>();
    expectTypeOf(new RedisSliding(client, "s", 5, 1_000).left("a", 0)).toEqualTypeOf<Promise<number>>();
    expectTypeOf(new RedisGcra(client, "g", 5).remaining("a", 0)).toEqualTypeOf<Promise<number>>();
    // @ts-expect-error -- a sliding window takes no cost
    void new RedisSliding(client, "s", 5, 1_000).take("a", 0, 2);
    // @ts-expect-error -- no such option for a bucket
    new RedisBucket(client, "api", 10, { quota: 5 });
  });
});

describe("errors, scripts, slots and the test server", () => {
  test("typed errors and pinned scripts", async () => {
    expectTypeOf<CrossSlotError["keys"]>().toEqualTypeOf<readonly { readonly key: string; readonly slot: number }[]>();
    expectTypeOf<CrossSlotError>().toMatchTypeOf<RangeError>();
    expectTypeOf<ScriptError>().toMatchTypeOf<Error>();
    expectTypeOf(scripts.quota).toEqualTypeOf<LuaScript>();
    expectTypeOf(slotOf("a")).toEqualTypeOf<number>();
    const server = await startRedis();
    expectTypeOf(server).toEqualTypeOf<RedisServer>();
    expectTypeOf(server.port).toEqualTypeOf<number>();
  });
});
