// @tideward/limiters' Bucket, Sliding, Period and Gcra on Redis: keyed (one Redis key per id),
// the same method names returning promises, one script call each. A take is decided and written
// in the script; every read (peek, next, the headroom, rateLimit) gets the state the script read
// and answers with the in-process formulas, so waits are searched onto the float grid here only.
import { Bucket, Gcra, MAX_SLIDING_QUOTA, Period, Sliding } from "@tideward/limiters";
import type { PeriodAnswer, RateLimit } from "@tideward/limiters";
import {
  MAX_COUNT,
  MAX_INSTANT,
  MAX_SPAN,
  badInstant,
  bucketFits,
  bucketFull,
  bucketLevel,
  bucketReady,
  bucketWhole,
  gcraFits,
  gcraLead,
  gcraReady,
  gcraRest,
  gcraWhole,
  slackOf,
  slidingFallenOut as fallenOut,
  spanProblem,
  until,
} from "@tideward/limiters/math";
import type { Breaker } from "@tideward/breaker";
import { check } from "@tideward/time/internal";
import type { ScriptClient } from "./client";
import { redisPolicy as policyFields, resolvePolicy } from "./policy";
import type { Path, RedisPolicy } from "./policy";
import { ANSWERED, FAILED, Runner, ScriptError, UNKNOWN } from "./runner";
import type { Outcome } from "./runner";
import {
  bucket as bucketScript,
  gcra as gcraScript,
  period as periodScript,
  sliding as slidingScript,
} from "./scripts";
import type { LuaScript } from "./scripts";
import { bytes } from "./bytes";

/** What a take answered and which part answered it. */
export interface TakeAnswer<T = boolean> {
  /** What the limiter answered: admitted or not (a Period: under, hit or over). */
  readonly answer: T;
  /** Which part answered (see {@link Path}). */
  readonly path: Path;
}

/** The local limiters of the outage mode, one per id, at most this many (the oldest goes). */
const LOCAL_LIMIT = 10_000;

const POLICY_FIELDS = Object.keys(policyFields) as (keyof RedisPolicy)[];

/** A script's answer to a limiter's read: the clock it read at, and the bytes of state held (none when absent). */
export interface LimiterRead {
  readonly now: number;
  readonly state: Buffer;
}

function positive(value: unknown, what: string): number {
  return check.positive(value, what);
}

// The error of a cost that is not a number of 0 or more, as the in-process limiters word it.
function badCost(n: unknown, what: string): Error {
  if (typeof n !== "number") return new TypeError(`${what} must be a number, got ${typeof n} ${check.describe(n)}`);
  return new RangeError(`${what} must be 0 or more, got ${check.describe(n)}`);
}

function costArg(n: number, what: string): string {
  if (typeof n !== "number" || !(n >= 0)) throw badCost(n, what);
  return n === Infinity ? "inf" : String(n);
}

// A Bucket's or a Gcra's burst, checked as theirs: the rate (per second) when not given, at most
// 2^53 − 1, under one raised to one, and refilled at that rate within 2^44 ms.
function burstOf(given: unknown, rate: number, what: string, rateWhat: string): number {
  let burst = given === undefined ? rate : positive(given, what);
  if (burst > MAX_COUNT) throw new RangeError(`${what} must be at most ${MAX_COUNT} (2^53 − 1), got ${burst}`);
  if (burst < 1) burst = 1;
  if ((burst * 1_000) / rate <= MAX_SPAN) return burst;
  throw new RangeError(
    `${rateWhat} must be at least ${(burst * 1_000) / MAX_SPAN} for a burst of ${burst} (it must refill within ${MAX_SPAN} ms, 2^44), got ${check.describe(rate)}`,
  );
}

function whole(value: unknown, what: string, most: number, bound: string): number {
  const n = check.integer(value, what, 1);
  if (n > most) throw new RangeError(`${what} must be at most ${most} (${bound}), got ${n}`);
  return n;
}

function spanOf(value: unknown, what: string): number {
  const ms = check.positive(value, what);
  const problem = spanProblem(ms);
  if (problem !== undefined) throw new RangeError(`${what} ${problem}`);
  return ms;
}

// What the limiters' takes and reads share, called with what differs: functions set in
// RedisLimiter's body to reach its protected parts (protected methods would be new members of the
// published class). An outage mode's local limiter (Bucket, Gcra, Sliding, Period) answers them.
interface Local {
  take(now: number, n?: number): unknown;
  peek(now: number, n?: number): unknown;
  next(now: number, n?: number): number;
}
const TAKE = 0;
const PEEK = 1;
const NEXT = 2;
/** The outage mode's answer to a take, peek or next (`op`): the local limiter's in fallback, else `open` or `closed`. */
let outage: <A>(limiter: RedisLimiter<Local>, id: string, now: number, n: number, op: number, open: A, closed: A) => A;
/** A take of a yes-or-no limiter: the script's flag, or the outage mode's; `costWhat` names the cost (undefined: none). */
let decideTake: (
  limiter: RedisLimiter<Local>,
  id: string,
  now: number,
  n: number,
  costWhat: string | undefined,
  what: string,
) => Promise<TakeAnswer>;

/**
 * What the Redis limiters share: a name keeping their keys apart, the policy, the breaker their
 * calls sit behind, the key naming and the outage mode's local limiters (one per id, at most
 * 10 000).
 */
export abstract class RedisLimiter<L> {
  /** The name that keeps this limiter's keys apart from others' under one prefix. */
  readonly name: string;
  /** The policy in force. */
  readonly policy: RedisPolicy;
  readonly #runner: Runner;
  readonly #script: LuaScript;
  readonly #prefix: string;
  readonly #kind: string;
  readonly #serverClock: boolean;
  readonly #margin: string;
  readonly #local = new Map<string, L>();
  readonly #params: readonly string[];

  constructor(
    client: ScriptClient,
    name: unknown,
    kind: string,
    script: LuaScript,
    params: readonly string[],
    policy: Partial<RedisPolicy>,
    what: string,
  ) {
    if (client === null || typeof client !== "object" || typeof client.evalsha !== "function") {
      throw new TypeError(
        `${what} client must be a ScriptClient (ioredisClient(redis) or nodeRedisClient(client)), got ${check.describe(client)}`,
      );
    }
    if (typeof name !== "string" || name.length === 0)
      throw new TypeError(`${what} name must be a non-empty string, got ${check.describe(name)}`);
    this.name = name;
    this.policy = resolvePolicy(policy, what);
    this.#runner = new Runner(client, {
      timeout: this.policy.timeout,
      breaker: this.policy.breaker,
      clock: this.policy.monotonic,
      roll: this.policy.random,
    });
    this.#script = script;
    this.#prefix = this.policy.prefix;
    this.#kind = kind;
    this.#serverClock = this.policy.clock === "redis";
    this.#margin = String(this.policy.expiryMargin);
    this.#params = params;
  }

  /** The breaker Redis calls sit behind. */
  get breaker(): Breaker {
    return this.#runner.breaker;
  }

  /** The Redis key of `id`'s state: its own hash tag, so each id may live on any cluster slot. */
  redisKey(id: string): string {
    if (typeof id !== "string" || id.length === 0)
      throw new TypeError(`id must be a non-empty string, got ${check.describe(id)}`);
    return `${this.#prefix}{${id}}${this.#kind}${this.name.length}:${this.name}`;
  }

  // One script call: op "t" (take, with its cost as the last argument) or a read ("r", or the
  // sliding window's "l"). Resolves with the reply, or undefined and the outage path.
  protected async call(
    op: string,
    id: string,
    now: number,
    cost: string | undefined,
    what: string,
  ): Promise<{ reply: Buffer; path: Path } | { reply: undefined; path: Path }> {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) throw badInstant(now, `${what} now`);
    const args = [op, this.#serverClock ? "" : String(now), this.#margin, ...this.#params];
    if (cost !== undefined) args.push(cost);
    const outcome: Outcome = await this.#runner.run(this.#script, [this.redisKey(id)], args);
    if (outcome.status === ANSWERED) return { reply: bytes(outcome.reply), path: "store" };
    if (outcome.status === FAILED && outcome.error instanceof ScriptError) throw outcome.error;
    return { reply: undefined, path: outcome.status === UNKNOWN ? "indeterminate" : this.policy.outage };
  }

  /** A read: the script's clock and the state it holds, or undefined when Redis cannot answer. */
  protected async read(id: string, now: number, what: string, op = "r"): Promise<LimiterRead | undefined> {
    const r = await this.call(op, id, now, undefined, what);
    if (r.reply === undefined) return undefined;
    return { now: r.reply.readDoubleLE(0), state: r.reply.subarray(8) };
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

  static {
    outage = (limiter, id, now, n, op, open, closed) => {
      const mode = limiter.policy.outage;
      if (mode !== "fallback") return mode === "open" ? open : closed;
      const local = limiter.local(id, now);
      // The local limiter answers as its Redis limiter does, in the type of `open` and `closed`.
      return (op === TAKE ? local.take(now, n) : op === PEEK ? local.peek(now, n) : local.next(now, n)) as typeof open;
    };
    decideTake = async (limiter, id, now, n, costWhat, what) => {
      const r = await limiter.call("t", id, now, costWhat === undefined ? undefined : costArg(n, costWhat), what);
      if (r.reply !== undefined) return { answer: r.reply[0] === 49, path: r.path };
      return { answer: outage(limiter, id, now, n, TAKE, true, false), path: r.path };
    };
  }
}

/** Options of a {@link RedisBucket}: the bucket's `burst` and the {@link RedisPolicy} fields. */
export type RedisBucketOptions = { readonly burst?: number } & Partial<RedisPolicy>;

/**
 * `@tideward/limiters`' token {@link @tideward/limiters#Bucket | Bucket} on Redis, one bucket per id: `rate` tokens a second
 * up to `burst`, starting full. Each id's bucket answers call for call as an in-process `Bucket`
 * made at its first reading.
 *
 * @example
 * import Redis from "ioredis";
 * const server = await startRedis(); // a redis-server on a free loopback port, for the example
 * const redis = new Redis(server.port, "127.0.0.1", { enableOfflineQueue: false, autoResendUnfulfilledCommands: false, lazyConnect: true });
 * await redis.connect();
 * const perUser = new RedisBucket(ioredisClient(redis), "api", 20, { burst: 2 });
 * const now = Date.now();
 * await perUser.take("alice", now); // true
 * await perUser.take("alice", now); // true
 * await perUser.take("alice", now); // false
 * await perUser.next("alice", now); // 50 — ms until a token is back, at 20 a second
 * redis.disconnect();
 * await server.stop();
 */
export class RedisBucket extends RedisLimiter<Bucket> {
  /** Tokens accrued per second. */
  readonly rate: number;
  /** The most tokens a bucket holds. */
  readonly burst: number;
  readonly #perMs: number;
  readonly #slack: number;

  /**
   * @param client - the connection
   * @param name - keeps these buckets apart from others under one prefix; a non-empty string
   * @param rate - tokens accrued per second, above zero and finite, enough to refill the burst
   *   within 2^44 ms
   * @param options - the bucket's `burst` (as {@link @tideward/limiters#Bucket | Bucket}'s: at most 2^53 − 1, under one
   *   raised to one) and the {@link RedisPolicy} fields; read once, an unknown name is a
   *   `TypeError` naming the closest known one
   * @throws RangeError or TypeError naming the field and the value
   */
  constructor(client: ScriptClient, name: string, rate: number, options?: RedisBucketOptions) {
    const { burst: given, ...policy } = check.options(options, ["burst", ...POLICY_FIELDS], "RedisBucket");
    const r = positive(rate, "RedisBucket rate (tokens per second)");
    const burst = burstOf(given, r, "RedisBucket burst (tokens)", "RedisBucket rate (tokens per second)");
    const perMs = r / 1_000;
    super(client, name, "B", bucketScript, [String(burst), String(perMs)], policy, "RedisBucket");
    this.rate = r;
    this.burst = burst;
    this.#perMs = perMs;
    this.#slack = slackOf(burst);
  }

  protected makeLocal(now: number, instances: number): Bucket {
    return new Bucket(this.rate / instances, { burst: Math.max(1, this.burst / instances), now });
  }

  // The three fields a bucket keeps, as an in-process Bucket keeps them; a fresh one is full at
  // the script's reading.
  #fields(read: LimiterRead): [tokens: number, at: number, latest: number] {
    if (read.state.length < 24) return [this.burst, read.now, read.now];
    return [read.state.readDoubleLE(0), read.state.readDoubleLE(8), read.state.readDoubleLE(16)];
  }

  /** Whether `n` tokens are available in `id`'s bucket at `now` (ms), taking them if they are. */
  async take(id: string, now: number, n = 1): Promise<boolean> {
    return (await this.decide(id, now, n)).answer;
  }

  /** {@link RedisBucket.take}, saying which part answered. */
  decide(id: string, now: number, n = 1): Promise<TakeAnswer> {
    return decideTake(this, id, now, n, "RedisBucket.take n", "RedisBucket.take");
  }

  /** What {@link RedisBucket.take} would answer, taking nothing. */
  async peek(id: string, now: number, n = 1): Promise<boolean> {
    costArg(n, "RedisBucket.peek n");
    const read = await this.read(id, now, "RedisBucket.peek");
    if (read === undefined) return outage(this, id, now, n, PEEK, true, false);
    const [tokens, at, latest] = this.#fields(read);
    const t = read.now > latest ? read.now : latest;
    return bucketFits(bucketLevel(tokens, at, t, this.#perMs, this.burst), n, this.burst, this.#slack);
  }

  /** Milliseconds until `n` tokens are available (0 now, `Infinity` above the burst). */
  async next(id: string, now: number, n = 1): Promise<number> {
    costArg(n, "RedisBucket.next n");
    const read = await this.read(id, now, "RedisBucket.next");
    if (read === undefined) return outage(this, id, now, n, NEXT, 0, Infinity);
    const [tokens, at, latest] = this.#fields(read);
    const from = read.now > latest ? read.now : latest;
    return until(read.now, from, bucketReady(tokens, at, from, n, this.#perMs, this.burst, this.#slack));
  }

  /** The tokens `id`'s bucket holds at `now`, fractions included. */
  async tokens(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisBucket.tokens");
    if (read === undefined)
      return this.policy.outage === "fallback"
        ? this.local(id, now).tokens(now)
        : this.policy.outage === "open"
          ? this.burst
          : 0;
    const [tokens, at, latest] = this.#fields(read);
    const level = bucketLevel(tokens, at, read.now > latest ? read.now : latest, this.#perMs, this.burst);
    return level > 0 ? level : 0;
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const read = await this.read(id, now, "RedisBucket.rateLimit");
    if (read === undefined) return this.local(id, now).rateLimit(now);
    const [tokens, at, latest] = this.#fields(read);
    const from = read.now > latest ? read.now : latest;
    const level = bucketLevel(tokens, at, from, this.#perMs, this.burst);
    const reset = until(read.now, from, bucketFull(tokens, at, from, this.#perMs, this.burst, this.#slack));
    return { limit: Math.floor(this.burst), remaining: bucketWhole(level, this.burst, this.#slack), reset };
  }
}

/** Options of a {@link RedisGcra}: the flow's `burst` and the {@link RedisPolicy} fields. */
export type RedisGcraOptions = { readonly burst?: number } & Partial<RedisPolicy>;

/**
 * `@tideward/limiters`' {@link @tideward/limiters#Gcra | Gcra} on Redis, one flow per id, answering call for call as an
 * in-process `Gcra`.
 */
export class RedisGcra extends RedisLimiter<Gcra> {
  /** Requests of cost one per second. */
  readonly rate: number;
  /** Requests of cost one that pass back to back from rest. */
  readonly burst: number;
  /** The emission interval, in milliseconds per request of cost one. */
  readonly interval: number;
  readonly #tau: number;
  readonly #reach: number;
  readonly #slack: number;

  /**
   * @param client - the connection
   * @param name - keeps these flows apart from others under one prefix; a non-empty string
   * @param rate - requests of cost one per second, above zero and finite, enough to refill the
   *   burst within 2^44 ms
   * @param options - the flow's `burst` (as {@link @tideward/limiters#Gcra | Gcra}'s) and the {@link RedisPolicy} fields;
   *   read once, an unknown name is a `TypeError` naming the closest known one
   * @throws RangeError or TypeError naming the field and the value
   */
  constructor(client: ScriptClient, name: string, rate: number, options?: RedisGcraOptions) {
    const { burst: given, ...policy } = check.options(options, ["burst", ...POLICY_FIELDS], "RedisGcra");
    const r = positive(rate, "RedisGcra rate (per second)");
    const burst = burstOf(given, r, "RedisGcra burst", "RedisGcra rate (per second)");
    const interval = 1_000 / r;
    const tau = burst * interval;
    const slack = slackOf(burst) * interval;
    const reach = tau + slack;
    super(client, name, "G", gcraScript, [String(burst), String(interval), String(reach)], policy, "RedisGcra");
    this.rate = r;
    this.burst = burst;
    this.interval = interval;
    this.#tau = tau;
    this.#slack = slack;
    this.#reach = reach;
  }

  protected makeLocal(_now: number, instances: number): Gcra {
    return new Gcra(this.rate / instances, { burst: Math.max(1, this.burst / instances) });
  }

  // The latest admission and how far ahead the flow then was; a fresh flow has admitted nothing.
  #fields(read: LimiterRead): [at: number, ahead: number] {
    if (read.state.length < 16) return [-Infinity, 0];
    return [read.state.readDoubleLE(0), read.state.readDoubleLE(8)];
  }

  /** Whether a request of cost `n` conforms at `now` (ms), recording it if it does. */
  async take(id: string, now: number, n = 1): Promise<boolean> {
    return (await this.decide(id, now, n)).answer;
  }

  /** {@link RedisGcra.take}, saying which part answered. */
  decide(id: string, now: number, n = 1): Promise<TakeAnswer> {
    return decideTake(this, id, now, n, "RedisGcra.take n", "RedisGcra.take");
  }

  /** What {@link RedisGcra.take} would answer, recording nothing. */
  async peek(id: string, now: number, n = 1): Promise<boolean> {
    costArg(n, "RedisGcra.peek n");
    const read = await this.read(id, now, "RedisGcra.peek");
    if (read === undefined) return outage(this, id, now, n, PEEK, true, false);
    const [at, ahead] = this.#fields(read);
    return n <= this.burst && gcraFits(gcraLead(at, ahead, read.now), n, this.interval, this.#reach);
  }

  /** Milliseconds until a request of cost `n` would conform (`Infinity` above the burst). */
  async next(id: string, now: number, n = 1): Promise<number> {
    costArg(n, "RedisGcra.next n");
    const read = await this.read(id, now, "RedisGcra.next");
    if (read === undefined) return outage(this, id, now, n, NEXT, 0, Infinity);
    if (n > this.burst) return Infinity;
    const [at, ahead] = this.#fields(read);
    return until(read.now, read.now, gcraReady(at, ahead, read.now, n, this.interval, this.#tau, this.#reach));
  }

  /** Requests of cost one that would conform back to back at `now`. */
  async remaining(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisGcra.remaining");
    if (read === undefined) return this.local(id, now).remaining(now);
    const [at, ahead] = this.#fields(read);
    return gcraWhole(gcraLead(at, ahead, read.now), this.interval, this.burst, this.#slack);
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const read = await this.read(id, now, "RedisGcra.rateLimit");
    if (read === undefined) return this.local(id, now).rateLimit(now);
    const [at, ahead] = this.#fields(read);
    const remaining = gcraWhole(gcraLead(at, ahead, read.now), this.interval, this.burst, this.#slack);
    return {
      limit: Math.floor(this.burst),
      remaining,
      reset: until(read.now, read.now, gcraRest(at, ahead, read.now)),
    };
  }
}

/** Options of a {@link RedisPeriod}: `align` and the {@link RedisPolicy} fields. */
export type RedisPeriodOptions = { readonly align?: boolean } & Partial<RedisPolicy>;

const QUOTAS: readonly PeriodAnswer[] = ["under", "hit", "over"];

/**
 * `@tideward/limiters`' {@link @tideward/limiters#Period | Period} (a fixed window answering under / hit / over) on Redis,
 * one counter per id, answering call for call as an in-process `Period`.
 */
export class RedisPeriod extends RedisLimiter<Period> {
  /** Events admitted per period. */
  readonly quota: number;
  /** How long a period is, in milliseconds. */
  readonly period: number;
  /** Whether periods open on multiples of `period`. */
  readonly align: boolean;

  /**
   * @param client - the connection
   * @param name - keeps these counters apart from others under one prefix; a non-empty string
   * @param quota - events per period, a whole number from 1 to 2^53 − 1
   * @param period - milliseconds, from 2^-4 to 2^44
   * @param options - `align` (as {@link @tideward/limiters#Period | Period}'s) and the {@link RedisPolicy} fields; read once,
   *   an unknown name is a `TypeError` naming the closest known one
   * @throws RangeError or TypeError naming the field and the value
   */
  constructor(client: ScriptClient, name: string, quota: number, period: number, options?: RedisPeriodOptions) {
    const { align: given, ...policy } = check.options(options, ["align", ...POLICY_FIELDS], "RedisPeriod");
    const q = whole(quota, "RedisPeriod quota", MAX_COUNT, "2^53 − 1");
    const p = spanOf(period, "RedisPeriod period (ms)");
    const align = given ?? false;
    if (typeof align !== "boolean")
      throw new TypeError(`RedisPeriod align must be a boolean, got ${typeof align} ${check.describe(align)}`);
    super(client, name, "P", periodScript, [String(q), String(p), align ? "1" : "0"], policy, "RedisPeriod");
    this.quota = q;
    this.period = p;
    this.align = align;
  }

  protected makeLocal(_now: number, instances: number): Period {
    return new Period(Math.max(1, Math.floor(this.quota / instances)), this.period, { align: this.align });
  }

  // The open period's end and the events admitted in it; a fresh counter has none open.
  #fields(read: LimiterRead): [end: number, count: number] {
    if (read.state.length < 16) return [-Infinity, 0];
    return [read.state.readDoubleLE(0), read.state.readDoubleLE(8)];
  }

  /** Counts one event for `id` at `now` (if admitted): `"under"` and `"hit"` are admitted, `"over"` is not. */
  async take(id: string, now: number): Promise<PeriodAnswer> {
    return (await this.decide(id, now)).answer;
  }

  /** {@link RedisPeriod.take}, saying which part answered. */
  async decide(id: string, now: number): Promise<TakeAnswer<PeriodAnswer>> {
    const r = await this.call("t", id, now, undefined, "RedisPeriod.take");
    if (r.reply !== undefined)
      return { answer: r.reply[0] === 117 ? "under" : r.reply[0] === 104 ? "hit" : "over", path: r.path };
    return { answer: outage<PeriodAnswer>(this, id, now, 1, TAKE, "under", "over"), path: r.path };
  }

  /** What {@link RedisPeriod.take} would answer, counting nothing. */
  async peek(id: string, now: number): Promise<PeriodAnswer> {
    const read = await this.read(id, now, "RedisPeriod.peek");
    if (read === undefined) return outage<PeriodAnswer>(this, id, now, 1, PEEK, "under", "over");
    const [end, count] = this.#fields(read);
    const next = read.now >= end ? 1 : count + 1;
    return QUOTAS[next < this.quota ? 0 : next === this.quota ? 1 : 2];
  }

  /** How many more events the period would admit at `now`. */
  async left(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisPeriod.left");
    if (read === undefined) return this.local(id, now).left(now);
    const [end, count] = this.#fields(read);
    return read.now >= end ? this.quota : this.quota - count;
  }

  /** Milliseconds until an event would be admitted. */
  async next(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisPeriod.next");
    if (read === undefined) return this.local(id, now).next(now);
    const [end, count] = this.#fields(read);
    return read.now >= end || count < this.quota ? 0 : until(read.now, read.now, end);
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const read = await this.read(id, now, "RedisPeriod.rateLimit");
    if (read === undefined) return this.local(id, now).rateLimit(now);
    const [end, count] = this.#fields(read);
    return {
      limit: this.quota,
      remaining: read.now >= end ? this.quota : this.quota - count,
      reset: until(read.now, read.now, end),
    };
  }
}

/**
 * `@tideward/limiters`' exact {@link @tideward/limiters#Sliding | Sliding} window on Redis, one window per id (its stamps a
 * ring in hash fields), answering call for call as an in-process `Sliding`.
 */
export class RedisSliding extends RedisLimiter<Sliding> {
  /** Events admitted in any window-long stretch. */
  readonly quota: number;
  /** The stretch, in milliseconds. */
  readonly window: number;

  /**
   * @param client - the connection
   * @param name - keeps these windows apart from others under one prefix; a non-empty string
   * @param quota - events in any window-long stretch, a whole number from 1 to 2^24 (as
   *   {@link @tideward/limiters#Sliding | Sliding}'s; each is a hash field in Redis)
   * @param window - milliseconds, from 2^-4 to 2^44
   * @param policy - the {@link RedisPolicy} fields; read once, an unknown name is a `TypeError`
   *   naming the closest known one
   * @throws RangeError or TypeError naming the field and the value
   */
  constructor(client: ScriptClient, name: string, quota: number, window: number, policy?: Partial<RedisPolicy>) {
    const given = check.options(policy, POLICY_FIELDS, "RedisSliding", "policy");
    const q = whole(quota, "RedisSliding quota", MAX_SLIDING_QUOTA, "2^24 stamps");
    const w = spanOf(window, "RedisSliding window (ms)");
    super(client, name, "S", slidingScript, [String(q), String(w)], given, "RedisSliding");
    this.quota = q;
    this.window = w;
  }

  protected makeLocal(_now: number, instances: number): Sliding {
    return new Sliding(Math.max(1, Math.floor(this.quota / instances)), this.window);
  }

  // The script's clock, the newest stamp and the oldest (-Infinity for none), and its count.
  #fields(read: LimiterRead): [now: number, last: number, oldest: number] {
    return [read.now, read.state.readDoubleLE(0), read.state.readDoubleLE(8)];
  }

  /** Whether an event for `id` at `now` is within the quota, counting it if it is. */
  async take(id: string, now: number): Promise<boolean> {
    return (await this.decide(id, now)).answer;
  }

  /** {@link RedisSliding.take}, saying which part answered. */
  decide(id: string, now: number): Promise<TakeAnswer> {
    return decideTake(this, id, now, 1, undefined, "RedisSliding.take");
  }

  /** What {@link RedisSliding.take} would answer, counting nothing. */
  async peek(id: string, now: number): Promise<boolean> {
    const read = await this.read(id, now, "RedisSliding.peek");
    if (read === undefined) return outage(this, id, now, 1, PEEK, true, false);
    const [at, last, oldest] = this.#fields(read);
    return (at < last ? last : at) - oldest >= this.window;
  }

  /** How many more events the window would admit at `now`. */
  async left(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisSliding.left", "l");
    if (read === undefined) return this.local(id, now).left(now);
    return read.state.readDoubleLE(16);
  }

  /** Milliseconds until the window has room. */
  async next(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisSliding.next");
    if (read === undefined) return this.local(id, now).next(now);
    const [at, last, oldest] = this.#fields(read);
    const from = at < last ? last : at;
    return until(at, from, fallenOut(oldest, this.window, from));
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const read = await this.read(id, now, "RedisSliding.rateLimit", "l");
    if (read === undefined) return this.local(id, now).rateLimit(now);
    const [at, last] = this.#fields(read);
    const remaining = read.state.readDoubleLE(16);
    if (remaining === this.quota) return { limit: this.quota, remaining, reset: 0 };
    // The window is empty again once the newest stamp falls out.
    const from = at < last ? last : at;
    return { limit: this.quota, remaining, reset: until(at, from, fallenOut(last, this.window, from)) };
  }
}
