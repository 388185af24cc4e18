import { Breaker, sre } from "@tideward/breaker";
import type { Sre } from "@tideward/breaker";
import { MAX_SPAN } from "@tideward/limiters/math";
import { MAX_KEY_PART } from "@tideward/quota-engine";
import type { QuotaKey } from "@tideward/quota-engine";
import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";

/**
 * What answers while Redis cannot:
 * - `"fallback"`: an in-process limiter of the same spec, its rate and capacity divided by
 *   {@link RedisPolicy.instances}, so the fleet together admits about the limit (go-zero's
 *   fallback admits the full rate on every instance: N times the limit);
 * - `"open"`: everything is admitted;
 * - `"closed"`: everything is refused.
 */
export type Outage = "fallback" | "open" | "closed";

/**
 * Which part answered a decision:
 * - `"store"`: Redis, in one script call;
 * - `"cache"`: the in-process cache of denied keys, from an earlier store answer still in force;
 * - `"fallback"`, `"open"`, `"closed"`: the outage mode, Redis being unreachable or the breaker
 *   refusing to wait on it (nothing was sent);
 * - `"indeterminate"`: the script was sent and no answer came in time (or the connection
 *   dropped): it may have been charged in Redis. The decision's `allowed` is the outage mode's
 *   answer; a repeat with the same request id is a no-op if the first did commit.
 */
export type Path = "store" | "cache" | "fallback" | "open" | "closed" | "indeterminate";

/** How a Redis-backed engine or limiter talks to Redis and what it does when it cannot. */
export interface RedisPolicy {
  /**
   * Put before every key, so several applications share one Redis. No braces (the hash tag
   * follows it). @defaultValue "tw:"
   */
  readonly prefix: string;
  /**
   * The most a script call is waited on, in milliseconds; past it the call answers from the
   * outage mode with path `"indeterminate"`. @defaultValue 250
   */
  readonly timeout: Span;
  /**
   * Whose clock decisions use: `"caller"` (the `now` each call passes, which the scripts never
   * let run behind a bucket's stored reading) or `"redis"` (the server's `TIME`, so app servers
   * with skewed clocks agree; `now` is then used only by the outage mode). @defaultValue "caller"
   */
  readonly clock: "caller" | "redis";
  /** What answers while Redis cannot. @defaultValue "fallback" */
  readonly outage: Outage;
  /**
   * How many instances share the limits, for the `"fallback"` outage mode: each instance's
   * local limiter gets `1 / instances` of each rate and capacity. A whole number, at least 1.
   * @defaultValue 1
   */
  readonly instances: number;
  /**
   * How long after its state would be a fresh key's again an idle key expires, in milliseconds
   * (0 or more). Expiry runs on Redis's clock while the state runs on the caller's: the margin
   * covers a caller's clock that runs slower than the server's and the time between a reading
   * and its write. Late costs memory for that long; early would admit what a kept key refuses.
   * @defaultValue 1000
   */
  readonly expiryMargin: Span;
  /** How long a request id is remembered, in milliseconds (at least 1). @defaultValue 60000 */
  readonly requestTtl: Span;
  /**
   * The breaker Redis calls sit behind (`@tideward/breaker`'s policy; only the fields you
   * change). @defaultValue the `sre` preset with a one-second window and a probe every 200 ms
   */
  readonly breaker: Partial<Sre>;
  /**
   * The Redis Cluster hash tag of a key's state: every key of one charge set must map to one
   * slot, so a set whose keys do not is refused before anything is sent. By default a key's
   * scope (a tenant: its users, its tenant-wide key and its resources share a slot); return a
   * constant to keep a whole engine on one slot. No `}` allowed, at least one character.
   * @defaultValue (key) => key.scope
   */
  readonly hashTag: (key: QuotaKey) => string;
  /**
   * Batches are split by cluster slot (one script call per slot) when true; without a cluster,
   * leave it false and a batch of any keys is one call. @defaultValue false
   */
  readonly cluster: boolean;
  /**
   * The most denied keys remembered in process until their `retryAfter`, so a client hammering
   * a refused key costs no round trip; 0 turns the cache off. A cached refusal is certain (no
   * other instance can make room sooner), but its `remaining` is the one read at the refusal
   * and its `retryAfter` is counted down locally, so figures may differ from the store's in the
   * last bits. @defaultValue 0
   */
  readonly deniedCache: number;
  /** The clock the breaker, the timeout and the denied-key cache read, in ms. @defaultValue performance.now */
  readonly monotonic: () => number;
  /** A draw in [0, 1) for the breaker. @defaultValue Math.random */
  readonly random: () => number;
}

/** The defaults every field of a {@link RedisPolicy} falls back to. */
export const redisPolicy: RedisPolicy = Object.freeze({
  prefix: "tw:",
  timeout: 250,
  clock: "caller",
  outage: "fallback",
  instances: 1,
  requestTtl: 60_000,
  expiryMargin: 1_000,
  breaker: Object.freeze({ window: 1_000, size: 10, probe: 200 }),
  hashTag: (key: QuotaKey) => key.scope,
  cluster: false,
  deniedCache: 0,
  monotonic: () => performance.now(),
  random: () => Math.random(),
});

const FIELDS = Object.keys(redisPolicy) as (keyof RedisPolicy)[];

function atMostSpan(ms: number, what: string): void {
  if (ms > MAX_SPAN) throw new RangeError(`${what} must be at most ${MAX_SPAN} (2^44), got ${check.describe(ms)}`);
}

/**
 * Lays `policy` over {@link redisPolicy} and checks every field once.
 *
 * @throws TypeError or RangeError naming the field and the value (and for a misspelt field the
 *   closest known name)
 */
export function resolvePolicy(policy: Partial<RedisPolicy> | undefined, what: string): RedisPolicy {
  const given = check.options(policy, FIELDS, what, "policy");
  const p = { ...redisPolicy, ...given };
  if (typeof p.prefix !== "string" || /[{}]/.test(p.prefix))
    throw new TypeError(`${what} prefix must be a string without braces, got ${JSON.stringify(p.prefix)}`);
  if (p.prefix.length > MAX_KEY_PART)
    throw new RangeError(`${what} prefix must be at most ${MAX_KEY_PART} characters, got ${p.prefix.length}`);
  check.positive(p.timeout, `${what} timeout (ms)`);
  if (p.clock !== "caller" && p.clock !== "redis")
    throw new TypeError(`${what} clock must be "caller" or "redis", got ${JSON.stringify(p.clock)}`);
  if (p.outage !== "fallback" && p.outage !== "open" && p.outage !== "closed")
    throw new TypeError(`${what} outage must be "fallback", "open" or "closed", got ${JSON.stringify(p.outage)}`);
  check.integer(p.instances, `${what} instances`, 1);
  // Both become a key's PX: past 2^44 ms (about 557 years) Redis would refuse every write.
  atMostSpan(check.positive(p.requestTtl, `${what} requestTtl (ms)`), `${what} requestTtl (ms)`);
  atMostSpan(check.nonNegative(p.expiryMargin, `${what} expiryMargin (ms)`), `${what} expiryMargin (ms)`);
  if (typeof p.hashTag !== "function")
    throw new TypeError(`${what} hashTag must be a function of a QuotaKey, got ${typeof p.hashTag}`);
  if (typeof p.cluster !== "boolean") throw new TypeError(`${what} cluster must be a boolean, got ${typeof p.cluster}`);
  check.integer(p.deniedCache, `${what} deniedCache`, 0);
  if (typeof p.monotonic !== "function")
    throw new TypeError(`${what} monotonic must be a function returning milliseconds`);
  if (typeof p.random !== "function")
    throw new TypeError(`${what} random must be a function returning a draw in [0, 1)`);
  const breaker = Object.freeze({
    ...redisPolicy.breaker,
    ...check.options(p.breaker, Object.keys(sre) as (keyof Sre)[], `${what} breaker`, "policy"),
  });
  try {
    new Breaker(breaker); // its own checks, at construction rather than at the first call
  } catch (error) {
    const message = `${what} breaker: ${(error as Error).message}`;
    throw error instanceof RangeError ? new RangeError(message) : new TypeError(message);
  }
  return Object.freeze({ ...p, breaker });
}
