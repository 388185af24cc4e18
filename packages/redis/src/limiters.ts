// @tideward/limiters' Bucket, Sliding, Period and Gcra on Redis: keyed (one Redis key per id),
// the same method names returning promises, one script call each.
import { Bucket, Gcra, Period, Sliding } from "@tideward/limiters";
import type { Quota, RateLimit } from "@tideward/limiters";
import { check } from "@tideward/time";
import type { ScriptClient } from "./client";
import { redisPolicy as policyFields, resolvePolicy } from "./policy";
import type { Path, RedisPolicy } from "./policy";
import { ANSWERED, FAILED, Runner, ScriptError, UNKNOWN } from "./runner";
import type { Outcome } from "./runner";
import { bucket as bucketScript, gcra as gcraScript, period as periodScript, sliding as slidingScript } from "./scripts";
import type { LuaScript } from "./scripts";

/** What a take answered and which part answered it. */
export interface TakeAnswer<T = boolean> {
  /** What the limiter answered: admitted or not (a Period: under, hit or over). */
  readonly answer: T;
  /** Which part answered (see {@link Path}). */
  readonly path: Path;
}

/** The local limiters of the outage mode, one per id, at most this many (the oldest goes). */
const LOCAL_LIMIT = 10_000;

function num(text: string): number {
  return text === "inf" ? Infinity : Number(text);
}

function rateLimitOf(text: string): RateLimit {
  const [limit, remaining, reset] = text.split(",");
  return { limit: Number(limit), remaining: Number(remaining), reset: num(reset) };
}

abstract class RedisLimiter<L> {
  /** The name that keeps this limiter's keys apart from others' under one prefix. */
  readonly name: string;
  /** The policy in force. */
  readonly policy: RedisPolicy;
  readonly #runner: Runner;
  readonly #script: LuaScript;
  readonly #prefix: string;
  readonly #kind: string;
  readonly #serverClock: boolean;
  readonly #local = new Map<string, L>();
  protected readonly params: readonly string[];

  constructor(client: ScriptClient, name: string, kind: string, script: LuaScript, params: readonly string[], policy: Partial<RedisPolicy> | undefined, what: string) {
    if (client === null || typeof client !== "object" || typeof client.evalsha !== "function") {
      throw new TypeError(`${what} client must be a ScriptClient (ioredisClient(redis) or nodeRedisClient(client)), got ${check.describe(client)}`);
    }
    if (typeof name !== "string" || name.length === 0) throw new TypeError(`${what} name must be a non-empty string, got ${check.describe(name)}`);
    this.name = name;
    this.policy = resolvePolicy(policy, what);
    this.#runner = new Runner(client, { timeout: this.policy.timeout, breaker: this.policy.breaker, clock: this.policy.monotonic, roll: this.policy.random });
    this.#script = script;
    this.#prefix = this.policy.prefix;
    this.#kind = kind;
    this.#serverClock = this.policy.clock === "redis";
    this.params = params;
  }

  /** The breaker Redis calls sit behind. */
  get breaker(): Runner["breaker"] {
    return this.#runner.breaker;
  }

  /** The Redis key of `id`'s state: its own hash tag, so each id may live on any cluster slot. */
  redisKey(id: string): string {
    if (typeof id !== "string" || id.length === 0) throw new TypeError(`id must be a non-empty string, got ${check.describe(id)}`);
    return `${this.#prefix}{${id}}${this.#kind}${this.name.length}:${this.name}`;
  }

  protected async call(op: string, id: string, now: number, extra: string | undefined, what: string): Promise<{ reply: string; path: Path } | { reply: undefined; path: Path }> {
    if (!Number.isFinite(now)) throw new RangeError(`${what} now must be a finite number of milliseconds, got ${check.describe(now)}`);
    const args = [op, this.#serverClock ? "" : String(now), String(this.policy.expiryMargin), ...this.params];
    if (extra !== undefined) args.push(extra);
    const outcome: Outcome = await this.#runner.run(this.#script, [this.redisKey(id)], args);
    if (outcome.status === ANSWERED) return { reply: outcome.reply as string, path: "store" };
    if (outcome.status === FAILED && outcome.error instanceof ScriptError) throw outcome.error;
    return { reply: undefined, path: outcome.status === UNKNOWN ? "indeterminate" : this.policy.outage };
  }

  /** The outage mode's local limiter for `id` (fallback mode only). */
  protected local(id: string, now: number): L {
    let limiter = this.#local.get(id);
    if (limiter === undefined) {
      if (this.#local.size >= LOCAL_LIMIT) {
        const oldest = this.#local.keys().next();
        if (oldest.done !== true) this.#local.delete(oldest.value);
      }
      limiter = this.makeLocal(now, this.policy.instances);
      this.#local.set(id, limiter);
    }
    return limiter;
  }

  protected abstract makeLocal(now: number, instances: number): L;
}

function cost(n: number, what: string): string {
  if (typeof n !== "number" || !(n >= 0) || n === Infinity) throw new RangeError(`${what} n must be a finite number of 0 or more, got ${check.describe(n)}`);
  return String(n);
}

/**
 * `@tideward/limiters`' token {@link Bucket} on Redis, one bucket per id: `rate` tokens a second
 * up to `burst`, starting full.
 *
 * @example
 * const perUser = new RedisBucket(ioredisClient(redis), "api", 20, { burst: 40 });
 * if (!(await perUser.take("alice", Date.now()))) refuse();
 */
export class RedisBucket extends RedisLimiter<Bucket> {
  /** Tokens accrued per second. */
  readonly rate: number;
  /** The most tokens a bucket holds. */
  readonly burst: number;

  /**
   * @param rate - tokens accrued per second, above zero and finite
   * @param options - the bucket's `burst` (as {@link Bucket}'s) and the {@link RedisPolicy} fields
   * @throws RangeError or TypeError naming the field, as `new Bucket` does, or a policy field
   */
  constructor(client: ScriptClient, name: string, rate: number, options: { readonly burst?: number } & Partial<RedisPolicy> = {}) {
    const { burst, ...policy } = check.options(options, ["burst", ...(Object.keys(policyFields) as (keyof RedisPolicy)[])] as never, "RedisBucket") as { burst?: number } & Partial<RedisPolicy>;
    const model = new Bucket(rate, burst === undefined ? {} : { burst });
    super(client, name, "B", bucketScript, [String(model.rate), String(model.burst)], policy, "RedisBucket");
    this.rate = model.rate;
    this.burst = model.burst;
  }

  protected makeLocal(now: number, instances: number): Bucket {
    return new Bucket(this.rate / instances, { burst: Math.max(1, this.burst / instances), now });
  }

  /** Whether `n` tokens are available in `id`'s bucket at `now` (ms), taking them if they are. */
  async take(id: string, now: number, n = 1): Promise<boolean> {
    return (await this.decide(id, now, n)).answer;
  }

  /** {@link RedisBucket.take}, saying which part answered. */
  async decide(id: string, now: number, n = 1): Promise<TakeAnswer> {
    const r = await this.call("take", id, now, cost(n, "RedisBucket.take"), "RedisBucket.take");
    if (r.reply !== undefined) return { answer: r.reply === "1", path: r.path };
    return { answer: this.policy.outage === "fallback" ? this.local(id, now).take(now, n) : this.policy.outage === "open", path: r.path };
  }

  /** What {@link RedisBucket.take} would answer, taking nothing. */
  async peek(id: string, now: number, n = 1): Promise<boolean> {
    const r = await this.call("peek", id, now, cost(n, "RedisBucket.peek"), "RedisBucket.peek");
    if (r.reply !== undefined) return r.reply === "1";
    return this.policy.outage === "fallback" ? this.local(id, now).peek(now, n) : this.policy.outage === "open";
  }

  /** Milliseconds until `n` tokens are available (0 now, `Infinity` above the burst). */
  async next(id: string, now: number, n = 1): Promise<number> {
    const r = await this.call("next", id, now, cost(n, "RedisBucket.next"), "RedisBucket.next");
    if (r.reply !== undefined) return num(r.reply);
    return this.policy.outage === "fallback" ? this.local(id, now).next(now, n) : this.policy.outage === "open" ? 0 : Infinity;
  }

  /** The tokens `id`'s bucket holds at `now`, fractions included. */
  async tokens(id: string, now: number): Promise<number> {
    const r = await this.call("tokens", id, now, "0", "RedisBucket.tokens");
    if (r.reply !== undefined) return num(r.reply);
    return this.policy.outage === "fallback" ? this.local(id, now).tokens(now) : this.policy.outage === "open" ? this.burst : 0;
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const r = await this.call("rate", id, now, "0", "RedisBucket.rateLimit");
    if (r.reply !== undefined) return rateLimitOf(r.reply);
    return this.local(id, now).rateLimit(now);
  }
}

/** `@tideward/limiters`' {@link Gcra} on Redis, one flow per id. */
export class RedisGcra extends RedisLimiter<Gcra> {
  /** Requests of cost one per second. */
  readonly rate: number;
  /** Requests of cost one that pass back to back from rest. */
  readonly burst: number;

  /**
   * @param rate - requests of cost one per second, above zero and finite
   * @param options - the flow's `burst` (as {@link Gcra}'s) and the {@link RedisPolicy} fields
   */
  constructor(client: ScriptClient, name: string, rate: number, options: { readonly burst?: number } & Partial<RedisPolicy> = {}) {
    const { burst, ...policy } = check.options(options, ["burst", ...(Object.keys(policyFields) as (keyof RedisPolicy)[])] as never, "RedisGcra") as { burst?: number } & Partial<RedisPolicy>;
    const model = new Gcra(rate, burst === undefined ? {} : { burst });
    super(client, name, "G", gcraScript, [String(model.rate), String(model.burst)], policy, "RedisGcra");
    this.rate = model.rate;
    this.burst = model.burst;
  }

  protected makeLocal(_now: number, instances: number): Gcra {
    return new Gcra(this.rate / instances, { burst: Math.max(1, this.burst / instances) });
  }

  /** Whether a request of cost `n` conforms at `now` (ms), recording it if it does. */
  async take(id: string, now: number, n = 1): Promise<boolean> {
    return (await this.decide(id, now, n)).answer;
  }

  /** {@link RedisGcra.take}, saying which part answered. */
  async decide(id: string, now: number, n = 1): Promise<TakeAnswer> {
    const r = await this.call("take", id, now, cost(n, "RedisGcra.take"), "RedisGcra.take");
    if (r.reply !== undefined) return { answer: r.reply === "1", path: r.path };
    return { answer: this.policy.outage === "fallback" ? this.local(id, now).take(now, n) : this.policy.outage === "open", path: r.path };
  }

  /** What {@link RedisGcra.take} would answer, recording nothing. */
  async peek(id: string, now: number, n = 1): Promise<boolean> {
    const r = await this.call("peek", id, now, cost(n, "RedisGcra.peek"), "RedisGcra.peek");
    if (r.reply !== undefined) return r.reply === "1";
    return this.policy.outage === "fallback" ? this.local(id, now).peek(now, n) : this.policy.outage === "open";
  }

  /** Milliseconds until a request of cost `n` would conform. */
  async next(id: string, now: number, n = 1): Promise<number> {
    const r = await this.call("next", id, now, cost(n, "RedisGcra.next"), "RedisGcra.next");
    if (r.reply !== undefined) return num(r.reply);
    return this.policy.outage === "fallback" ? this.local(id, now).next(now, n) : this.policy.outage === "open" ? 0 : Infinity;
  }

  /** Requests of cost one that would conform back to back at `now`. */
  async remaining(id: string, now: number): Promise<number> {
    const r = await this.call("remaining", id, now, "0", "RedisGcra.remaining");
    if (r.reply !== undefined) return num(r.reply);
    return this.local(id, now).remaining(now);
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const r = await this.call("rate", id, now, "0", "RedisGcra.rateLimit");
    if (r.reply !== undefined) return rateLimitOf(r.reply);
    return this.local(id, now).rateLimit(now);
  }
}

/** `@tideward/limiters`' {@link Period} (a fixed window answering under / hit / over) on Redis, one counter per id. */
export class RedisPeriod extends RedisLimiter<Period> {
  /** Events admitted per period. */
  readonly quota: number;
  /** How long a period is, in milliseconds. */
  readonly period: number;
  /** Whether periods open on multiples of `period`. */
  readonly align: boolean;

  /**
   * @param quota - events per period, a whole number of one or more
   * @param period - milliseconds, above zero and finite
   * @param options - `align` (as {@link Period}'s) and the {@link RedisPolicy} fields
   */
  constructor(client: ScriptClient, name: string, quota: number, period: number, options: { readonly align?: boolean } & Partial<RedisPolicy> = {}) {
    const { align, ...policy } = check.options(options, ["align", ...(Object.keys(policyFields) as (keyof RedisPolicy)[])] as never, "RedisPeriod") as { align?: boolean } & Partial<RedisPolicy>;
    const model = new Period(quota, period, align === undefined ? {} : { align });
    super(client, name, "P", periodScript, [String(model.quota), String(model.period), model.align ? "1" : "0"], policy, "RedisPeriod");
    this.quota = model.quota;
    this.period = model.period;
    this.align = model.align;
  }

  protected makeLocal(_now: number, instances: number): Period {
    return new Period(Math.max(1, Math.floor(this.quota / instances)), this.period, { align: this.align });
  }

  /** Counts one event for `id` at `now` (if admitted): `"under"` and `"hit"` are admitted, `"over"` is not. */
  async take(id: string, now: number): Promise<Quota> {
    return (await this.decide(id, now)).answer;
  }

  /** {@link RedisPeriod.take}, saying which part answered. */
  async decide(id: string, now: number): Promise<TakeAnswer<Quota>> {
    const r = await this.call("take", id, now, undefined, "RedisPeriod.take");
    if (r.reply !== undefined) return { answer: r.reply as Quota, path: r.path };
    const answer: Quota = this.policy.outage === "fallback" ? this.local(id, now).take(now) : this.policy.outage === "open" ? "under" : "over";
    return { answer, path: r.path };
  }

  /** What {@link RedisPeriod.take} would answer, counting nothing. */
  async peek(id: string, now: number): Promise<Quota> {
    const r = await this.call("peek", id, now, undefined, "RedisPeriod.peek");
    if (r.reply !== undefined) return r.reply as Quota;
    return this.policy.outage === "fallback" ? this.local(id, now).peek(now) : this.policy.outage === "open" ? "under" : "over";
  }

  /** How many more events the period would admit at `now`. */
  async left(id: string, now: number): Promise<number> {
    const r = await this.call("left", id, now, undefined, "RedisPeriod.left");
    if (r.reply !== undefined) return num(r.reply);
    return this.local(id, now).left(now);
  }

  /** Milliseconds until an event would be admitted. */
  async next(id: string, now: number): Promise<number> {
    const r = await this.call("next", id, now, undefined, "RedisPeriod.next");
    if (r.reply !== undefined) return num(r.reply);
    return this.local(id, now).next(now);
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const r = await this.call("rate", id, now, undefined, "RedisPeriod.rateLimit");
    if (r.reply !== undefined) return rateLimitOf(r.reply);
    return this.local(id, now).rateLimit(now);
  }
}

/** `@tideward/limiters`' exact {@link Sliding} window on Redis, one window per id (its stamps a ring in hash fields). */
export class RedisSliding extends RedisLimiter<Sliding> {
  /** Events admitted in any window-long stretch. */
  readonly quota: number;
  /** The stretch, in milliseconds. */
  readonly window: number;

  /**
   * @param quota - events in any window-long stretch, a whole number of one or more
   * @param window - milliseconds, above zero and finite
   */
  constructor(client: ScriptClient, name: string, quota: number, window: number, policy?: Partial<RedisPolicy>) {
    const model = new Sliding(quota, window);
    super(client, name, "S", slidingScript, [String(model.quota), String(model.window)], policy, "RedisSliding");
    this.quota = model.quota;
    this.window = model.window;
  }

  protected makeLocal(_now: number, instances: number): Sliding {
    return new Sliding(Math.max(1, Math.floor(this.quota / instances)), this.window);
  }

  /** Whether an event for `id` at `now` is within the quota, counting it if it is. */
  async take(id: string, now: number): Promise<boolean> {
    return (await this.decide(id, now)).answer;
  }

  /** {@link RedisSliding.take}, saying which part answered. */
  async decide(id: string, now: number): Promise<TakeAnswer> {
    const r = await this.call("take", id, now, undefined, "RedisSliding.take");
    if (r.reply !== undefined) return { answer: r.reply === "1", path: r.path };
    return { answer: this.policy.outage === "fallback" ? this.local(id, now).take(now) : this.policy.outage === "open", path: r.path };
  }

  /** What {@link RedisSliding.take} would answer, counting nothing. */
  async peek(id: string, now: number): Promise<boolean> {
    const r = await this.call("peek", id, now, undefined, "RedisSliding.peek");
    if (r.reply !== undefined) return r.reply === "1";
    return this.policy.outage === "fallback" ? this.local(id, now).peek(now) : this.policy.outage === "open";
  }

  /** How many more events the window would admit at `now`. */
  async left(id: string, now: number): Promise<number> {
    const r = await this.call("left", id, now, undefined, "RedisSliding.left");
    if (r.reply !== undefined) return num(r.reply);
    return this.local(id, now).left(now);
  }

  /** Milliseconds until the window has room. */
  async next(id: string, now: number): Promise<number> {
    const r = await this.call("next", id, now, undefined, "RedisSliding.next");
    if (r.reply !== undefined) return num(r.reply);
    return this.local(id, now).next(now);
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const r = await this.call("rate", id, now, undefined, "RedisSliding.rateLimit");
    if (r.reply !== undefined) return rateLimitOf(r.reply);
    return this.local(id, now).rateLimit(now);
  }
}

