// Bad input to every Redis class's constructor, each refused with a clear message naming the field
// and the value (and for a misspelt option the closest known name), before anything is sent. No
// server needed: the client never connects. Bad input to calls is in bad-input-calls.test.ts.
import Redis from "ioredis";
import { describe, expect, it } from "vitest";
import { RedisBucket, RedisGcra, RedisPeriod, RedisQuotaEngine, RedisSliding, ioredisClient } from "@tideward/redis";
import { any, down } from "./bad-input";

type Case = [name: string, run: () => unknown, throws: ErrorConstructor, message: string];

const constructors: Case[] = [
  [
    "an engine without a client",
    () => new RedisQuotaEngine(any(null)),
    TypeError,
    "RedisQuotaEngine client must be a ScriptClient (ioredisClient(redis) or nodeRedisClient(client)), got null",
  ],
  [
    "a misspelt policy field",
    () => new RedisQuotaEngine(down, any({ timout: 5 })),
    TypeError,
    'RedisQuotaEngine has no option "timout"; did you mean "timeout"?',
  ],
  [
    "a policy that is null",
    () => new RedisQuotaEngine(down, any(null)),
    TypeError,
    "RedisQuotaEngine policy must be an object, got null",
  ],
  [
    "a prefix with a brace",
    () => new RedisQuotaEngine(down, { prefix: "a{b" }),
    TypeError,
    'RedisQuotaEngine prefix must be a string without braces, got "a{b"',
  ],
  [
    "a prefix past 1024 characters",
    () => new RedisQuotaEngine(down, { prefix: "p".repeat(1_025) }),
    RangeError,
    "RedisQuotaEngine prefix must be at most 1024 characters, got 1025",
  ],
  [
    "a request ttl past 2^44 ms (every write would fail in Redis)",
    () => new RedisQuotaEngine(down, { requestTtl: 1e300 }),
    RangeError,
    "RedisQuotaEngine requestTtl (ms) must be at most 17592186044416 (2^44), got 1e+300",
  ],
  [
    "an expiry margin past 2^44 ms",
    () => new RedisBucket(down, "b", 5, { expiryMargin: 2 ** 45 }),
    RangeError,
    "RedisBucket expiryMargin (ms) must be at most 17592186044416 (2^44), got 35184372088832",
  ],
  [
    "a timeout of 0",
    () => new RedisQuotaEngine(down, { timeout: 0 }),
    RangeError,
    "RedisQuotaEngine timeout (ms) must be above 0, got 0",
  ],
  [
    "a timeout given as a string",
    () => new RedisQuotaEngine(down, { timeout: any("250") }),
    TypeError,
    'RedisQuotaEngine timeout (ms) must be a number, got string "250"',
  ],
  [
    "a clock that is neither",
    () => new RedisQuotaEngine(down, { clock: any("server") }),
    TypeError,
    'RedisQuotaEngine clock must be "caller" or "redis", got "server"',
  ],
  [
    "an unknown outage mode",
    () => new RedisQuotaEngine(down, { outage: any("maybe") }),
    TypeError,
    'RedisQuotaEngine outage must be "fallback", "open" or "closed", got "maybe"',
  ],
  [
    "a fraction of an instance",
    () => new RedisQuotaEngine(down, { instances: 1.5 }),
    RangeError,
    "RedisQuotaEngine instances must be a whole number, got 1.5",
  ],
  [
    "no instances",
    () => new RedisQuotaEngine(down, { instances: 0 }),
    RangeError,
    "RedisQuotaEngine instances must be 1 or more, got 0",
  ],
  [
    "a negative expiry margin",
    () => new RedisQuotaEngine(down, { expiryMargin: -1 }),
    RangeError,
    "RedisQuotaEngine expiryMargin (ms) must be 0 or more, got -1",
  ],
  [
    "a request ttl of NaN",
    () => new RedisQuotaEngine(down, { requestTtl: NaN }),
    RangeError,
    "RedisQuotaEngine requestTtl (ms) must be a finite number, got NaN",
  ],
  [
    "a hash tag that is not a function",
    () => new RedisQuotaEngine(down, { hashTag: any("scope") }),
    TypeError,
    "RedisQuotaEngine hashTag must be a function of a QuotaKey, got string",
  ],
  [
    "cluster as a string",
    () => new RedisQuotaEngine(down, { cluster: any("yes") }),
    TypeError,
    "RedisQuotaEngine cluster must be a boolean, got string",
  ],
  [
    "a fractional denied cache",
    () => new RedisQuotaEngine(down, { deniedCache: 2.5 }),
    RangeError,
    "RedisQuotaEngine deniedCache must be a whole number, got 2.5",
  ],
  [
    "a misspelt breaker field",
    () => new RedisQuotaEngine(down, { breaker: any({ windw: 500 }) }),
    TypeError,
    'RedisQuotaEngine breaker has no option "windw"; did you mean "window"?',
  ],
  [
    "a breaker window of 0",
    () => new RedisQuotaEngine(down, { breaker: { window: 0 } }),
    RangeError,
    "RedisQuotaEngine breaker: Sre window (ms) must be above 0, got 0",
  ],
  [
    "a breaker k below its floor",
    () => new RedisQuotaEngine(down, { breaker: { k: 0.5, floor: 1 } }),
    RangeError,
    "RedisQuotaEngine breaker: Sre k must be at least floor (1), got 0.5",
  ],
  [
    "a breaker that is null",
    () => new RedisQuotaEngine(down, { breaker: any(null) }),
    TypeError,
    "RedisQuotaEngine breaker policy must be an object, got null",
  ],
  [
    "a monotonic clock that is a number",
    () => new RedisQuotaEngine(down, { monotonic: any(5) }),
    TypeError,
    "RedisQuotaEngine monotonic must be a function returning milliseconds",
  ],
  [
    "a misspelt adapter option",
    () =>
      ioredisClient(
        any(new Redis({ lazyConnect: true, enableOfflineQueue: false, autoResendUnfulfilledCommands: false })),
        any({ coalese: false }),
      ),
    TypeError,
    'ioredisClient has no option "coalese"; did you mean "coalesce"?',
  ],
  [
    "coalesce as a string",
    () =>
      ioredisClient(
        any(new Redis({ lazyConnect: true, enableOfflineQueue: false, autoResendUnfulfilledCommands: false })),
        { coalesce: any("no") },
      ),
    TypeError,
    'ioredisClient coalesce must be a boolean, got string "no"',
  ],
  [
    "a bucket with no rate",
    () => new RedisBucket(down, "b", 0),
    RangeError,
    "RedisBucket rate (tokens per second) must be above 0, got 0",
  ],
  [
    "a bucket rate of NaN",
    () => new RedisBucket(down, "b", NaN),
    RangeError,
    "RedisBucket rate (tokens per second) must be a finite number, got NaN",
  ],
  [
    "a bucket rate left out",
    () => new RedisBucket(down, "b", any(undefined)),
    TypeError,
    "RedisBucket rate (tokens per second) is missing",
  ],
  [
    "a gcra rate left out",
    () => new RedisGcra(down, "g", any(undefined)),
    TypeError,
    "RedisGcra rate (per second) is missing",
  ],
  [
    "a period quota left out",
    () => new RedisPeriod(down, "p", any(undefined), 1_000),
    TypeError,
    "RedisPeriod quota is missing",
  ],
  [
    "a sliding window left out",
    () => new RedisSliding(down, "s", 3, any(undefined)),
    TypeError,
    "RedisSliding window (ms) is missing",
  ],
  [
    "a bucket rate as a string",
    () => new RedisBucket(down, "b", any("5")),
    TypeError,
    'RedisBucket rate (tokens per second) must be a number, got string "5"',
  ],
  [
    "a bucket that would take 2^44 ms to refill",
    () => new RedisBucket(down, "b", 1e-306),
    RangeError,
    "RedisBucket rate (tokens per second) must be at least 5.6843418860808015e-11 for a burst of 1 (it must refill within 17592186044416 ms, 2^44), got 1e-306",
  ],
  [
    "a bucket burst past 2^53",
    () => new RedisBucket(down, "b", 5, { burst: 2 ** 54 }),
    RangeError,
    "RedisBucket burst (tokens) must be at most 9007199254740991 (2^53 − 1), got 18014398509481984",
  ],
  [
    "a misspelt bucket option",
    () => new RedisBucket(down, "b", 5, any({ brust: 10 })),
    TypeError,
    'RedisBucket has no option "brust"; did you mean "burst"?',
  ],
  [
    "a misspelt policy field on a bucket",
    () => new RedisBucket(down, "b", 5, any({ prefx: "x:" })),
    TypeError,
    'RedisBucket has no option "prefx"; did you mean "prefix"?',
  ],
  [
    "bucket options that are null",
    () => new RedisBucket(down, "b", 5, any(null)),
    TypeError,
    "RedisBucket options must be an object, got null",
  ],
  [
    "a bucket with an empty name",
    () => new RedisBucket(down, "", 5),
    TypeError,
    'RedisBucket name must be a non-empty string, got ""',
  ],
  [
    "a bucket without a client",
    () => new RedisBucket(any({}), "b", 5),
    TypeError,
    "RedisBucket client must be a ScriptClient",
  ],
  [
    "a flow with a negative rate",
    () => new RedisGcra(down, "g", -1),
    RangeError,
    "RedisGcra rate (per second) must be above 0, got -1",
  ],
  [
    "a flow with an infinite burst",
    () => new RedisGcra(down, "g", 5, { burst: Infinity }),
    RangeError,
    "RedisGcra burst must be a finite number, got Infinity",
  ],
  [
    "a misspelt flow option",
    () => new RedisGcra(down, "g", 5, any({ burts: 2 })),
    TypeError,
    'RedisGcra has no option "burts"; did you mean "burst"?',
  ],
  [
    "a period quota of 0",
    () => new RedisPeriod(down, "p", 0, 1_000),
    RangeError,
    "RedisPeriod quota must be 1 or more, got 0",
  ],
  [
    "a fractional period quota",
    () => new RedisPeriod(down, "p", 2.5, 1_000),
    RangeError,
    "RedisPeriod quota must be a whole number, got 2.5",
  ],
  [
    "a period shorter than 2^-4 ms",
    () => new RedisPeriod(down, "p", 5, 1e-5),
    RangeError,
    "RedisPeriod period (ms) must be at least 0.0625 ms (2^-4; a shorter span is too close to a clock reading's own step), got 0.00001",
  ],
  [
    "a period past 2^44 ms",
    () => new RedisPeriod(down, "p", 5, 2 ** 45),
    RangeError,
    "RedisPeriod period (ms) must be at most 17592186044416 ms (2^44, about 557 years), got 35184372088832",
  ],
  [
    "align as a string",
    () => new RedisPeriod(down, "p", 5, 1_000, { align: any("yes") }),
    TypeError,
    'RedisPeriod align must be a boolean, got string "yes"',
  ],
  [
    "a misspelt period option",
    () => new RedisPeriod(down, "p", 5, 1_000, any({ aling: true })),
    TypeError,
    'RedisPeriod has no option "aling"; did you mean "align"?',
  ],
  [
    "a sliding quota past 2^24",
    () => new RedisSliding(down, "s", 2 ** 24 + 1, 1_000),
    RangeError,
    "RedisSliding quota must be at most 16777216 (2^24 stamps), got 16777217",
  ],
  [
    "a sliding window of 0",
    () => new RedisSliding(down, "s", 5, 0),
    RangeError,
    "RedisSliding window (ms) must be above 0, got 0",
  ],
  [
    "a top-up neither debt nor cap",
    () => new RedisQuotaEngine(down, any({ topUp: "owe" })),
    TypeError,
    'RedisQuotaEngine topUp must be "debt" or "cap", got "owe"',
  ],
  [
    "a reservation time to live of 0",
    () => new RedisQuotaEngine(down, { reservationTtl: 0 }),
    RangeError,
    "RedisQuotaEngine reservationTtl must be from 1 to 17592186044416 ms (2^44), got 0",
  ],
  [
    "a reservation bound past 2^24",
    () => new RedisQuotaEngine(down, { maxReservations: 2 ** 24 + 1 }),
    RangeError,
    "RedisQuotaEngine maxReservations must be at most 16777216 (2^24), got 16777217",
  ],
  [
    "a misspelt reservation field",
    () => new RedisQuotaEngine(down, any({ reservationTTL: 5 })),
    TypeError,
    'RedisQuotaEngine has no option "reservationTTL"; did you mean "reservationTtl"?',
  ],
  [
    "a misspelt sliding policy field",
    () => new RedisSliding(down, "s", 5, 1_000, any({ outge: "open" })),
    TypeError,
    'RedisSliding has no option "outge"; did you mean "outage"?',
  ],
];

describe("bad input at construction: a TypeError or RangeError naming the field and the value", () => {
  for (const [name, run, throws, message] of constructors) {
    it(name, () => {
      let error: unknown;
      try {
        run();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(throws);
      expect((error as Error).message.startsWith(message)).toBe(true);
    });
  }
});
