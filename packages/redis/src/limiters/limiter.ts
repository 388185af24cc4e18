// What the Redis limiters (RedisBucket, RedisGcra, RedisPeriod, RedisSliding) share: keyed state
// (one Redis key per id), one script call a take or a read, the breaker and timeout their calls sit
// behind, and the outage mode's answers. A take is decided and written in the script; every read
// (peek, next, the headroom, rateLimit) gets the state the script read and answers with the
// in-process formulas, so waits are searched onto the float grid in one place only.
import type { Breaker } from "@tideward/breaker";
import type { RateLimit } from "@tideward/limiters";
import { MAX_COUNT, MAX_INSTANT, MAX_SPAN, badInstant, spanProblem } from "@tideward/limiters/math";
import { check } from "@tideward/time/internal";
import { bytes } from "../bytes";
import { required } from "../missing";
import type { ScriptClient } from "../client";
import { redisPolicy as policyFields, resolvePolicy } from "../policy";
import type { Path, RedisPolicy } from "../policy";
import { ANSWERED, FAILED, Runner, ScriptError, UNKNOWN } from "../runner";
import type { Outcome } from "../runner";
import type { LuaScript } from "../scripts";

/** What a take answered and which part answered it. */
export interface TakeAnswer<T = boolean> {
  /** What the limiter answered: admitted or not (a Period: under, hit or over). */
  readonly answer: T;
  /** Which part answered (see {@link Path}). */
  readonly path: Path;
}

// The limiters' scripts (bucket, gcra, period and sliding.lua) all speak one protocol, made and
// read here and in each limiter's file:
//   KEYS   the id's key (redisKey)
//   ARGV   the op (TAKE, READ, or the sliding window's COUNT), now (ms; '' for Redis's TIME), the
//          expiry margin (ms: a key expires this long after its state would be a fresh one's),
//          the limiter's own numbers (its `params`, as sent at construction), then a take's cost
//          when the limiter takes one (RedisBucket's n, RedisGcra's n)
//   reply  a take: one byte, TAKEN or else "0" (a RedisPeriod's: UNDER, HIT or else "o", over); a read:
//          the script's clock (a double, 8 bytes) then the state the key holds, as its doubles
//          (none when absent), from which the limiter answers with the in-process formulas
//          (RedisSliding's: the newest stamp and the oldest, and on COUNT how many more it admits)
/** A take. */
export const TAKE = "t";
/** A read of the clock and the state. */
export const READ = "r";
/** RedisSliding's read that also counts the free slots. */
export const COUNT = "l";
/** A take's reply: taken, admitted. ("1") */
export const TAKEN = 0x31;
/** Bytes a read's reply starts with: the script's clock. */
const CLOCK = 8;

/** The local limiters of the outage mode, one per id, at most this many (the oldest goes). */
const LOCAL_LIMIT = 10_000;

export const POLICY_FIELDS = Object.keys(policyFields) as (keyof RedisPolicy)[];

/** A script's answer to a limiter's read: the clock it read at, and the bytes of state held (none when absent). */
export interface LimiterRead {
  readonly now: number;
  readonly state: Buffer;
}

export function positive(value: unknown, what: string): number {
  return check.positive(required(value, what), what);
}

// The error of a cost that is not a number of 0 or more, as the in-process limiters word it.
function badCost(n: unknown, what: string): Error {
  if (typeof n !== "number") return new TypeError(`${what} must be a number, got ${typeof n} ${check.describe(n)}`);
  return new RangeError(`${what} must be 0 or more, got ${check.describe(n)}`);
}

export function costArg(n: number, what: string): string {
  if (typeof n !== "number" || !(n >= 0)) throw badCost(n, what);
  return n === Infinity ? "inf" : String(n);
}

/**
 * A RedisBucket's or a RedisGcra's options read once: its rate (per second, above zero) and burst,
 * checked as a Bucket's or a Gcra's are (the rate when not given, at most 2^53 − 1, under one
 * raised to one, refilled at that rate within 2^44 ms), and the policy fields left. `what` names
 * the class; `rateWhat` and `burstWhat` the two numbers in its errors.
 */
export function rateAndBurst(
  rate: unknown,
  options: ({ readonly burst?: number } & Partial<RedisPolicy>) | undefined,
  what: string,
  rateWhat: string,
  burstWhat: string,
): { rate: number; burst: number; policy: Partial<RedisPolicy> } {
  const { burst: given, ...policy } = check.options(options, ["burst", ...POLICY_FIELDS], what);
  const r = positive(rate, `${what} ${rateWhat}`);
  let burst = given === undefined ? r : positive(given, `${what} ${burstWhat}`);
  if (burst > MAX_COUNT)
    throw new RangeError(`${what} ${burstWhat} must be at most ${MAX_COUNT} (2^53 − 1), got ${burst}`);
  if (burst < 1) burst = 1;
  if ((burst * 1_000) / r <= MAX_SPAN) return { rate: r, burst, policy };
  throw new RangeError(
    `${what} ${rateWhat} must be at least ${(burst * 1_000) / MAX_SPAN} for a burst of ${burst} (it must refill within ${MAX_SPAN} ms, 2^44), got ${check.describe(r)}`,
  );
}

export function whole(value: unknown, what: string, most: number, bound: string): number {
  const n = check.integer(required(value, what), what, 1);
  if (n > most) throw new RangeError(`${what} must be at most ${most} (${bound}), got ${n}`);
  return n;
}

export function spanOf(value: unknown, what: string): number {
  const ms = check.positive(required(value, what), what);
  const problem = spanProblem(ms);
  if (problem !== undefined) throw new RangeError(`${what} ${problem}`);
  return ms;
}

// The outage mode's answer and a yes-or-no limiter's take, reaching RedisLimiter's protected parts:
// set in its body (protected methods would be new members of the published class).
let outageOf: typeof outage;
let takeOf: typeof decideTake;

/**
 * The outage mode's answer while Redis cannot give one: in `"fallback"` what `local` reads from
 * the id's in-process limiter, else `open` or `closed`.
 */
export function outage<L, A>(
  limiter: RedisLimiter<L>,
  id: string,
  now: number,
  local: (l: L) => A,
  open: A,
  closed: A,
): A {
  return outageOf(limiter, id, now, local, open, closed);
}

/**
 * A take of a yes-or-no limiter: the script's flag, or the outage mode's. `costWhat` names the
 * cost `n` in its error (undefined: the limiter takes no cost); a bad cost or reading rejects.
 */
export function decideTake<L>(
  limiter: RedisLimiter<L>,
  id: string,
  now: number,
  n: number,
  costWhat: string | undefined,
  local: (l: L) => boolean,
  what: string,
): Promise<TakeAnswer> {
  return takeOf(limiter, id, now, n, costWhat, local, what);
}

/**
 * What an HTTP `RateLimit` header needs while Redis cannot answer: the local limiter's in
 * `"fallback"`; open, all of `limit` and no reset; closed, none, and the {@link closedWait}.
 */
export function outageRateLimit<L extends { rateLimit(now: number): RateLimit }>(
  limiter: RedisLimiter<L>,
  id: string,
  now: number,
  limit: number,
): RateLimit {
  return outageOf(
    limiter,
    id,
    now,
    (l) => l.rateLimit(now),
    { limit, remaining: limit, reset: 0 },
    { limit, remaining: 0, reset: closedWait(limiter) },
  );
}

/** What a closed outage tells a caller to wait (ms): the breaker's probe interval, the longest before a call reaches Redis again. */
export function closedWait(limiter: RedisLimiter<unknown>): number {
  return limiter.breaker.policy.probe;
}

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

  // One script call (see the protocol above): TAKE, with its cost as the last argument when it has
  // one, or a read (READ, COUNT). Resolves with the reply, or undefined and the outage path.
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
    if (outcome.status === ANSWERED)
      return { reply: bytes(outcome.reply, this.#script.name, op === TAKE ? 1 : CLOCK), path: "store" };
    if (outcome.status === FAILED && outcome.error instanceof ScriptError) throw outcome.error;
    return { reply: undefined, path: outcome.status === UNKNOWN ? "indeterminate" : this.policy.outage };
  }

  /** A read: the script's clock and the state it holds, or undefined when Redis cannot answer. */
  protected async read(id: string, now: number, what: string, op = READ): Promise<LimiterRead | undefined> {
    const r = await this.call(op, id, now, undefined, what);
    if (r.reply === undefined) return undefined;
    return { now: r.reply.readDoubleLE(0), state: r.reply.subarray(CLOCK) };
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
    outageOf = (limiter, id, now, local, open, closed) => {
      const mode = limiter.policy.outage;
      if (mode !== "fallback") return mode === "open" ? open : closed;
      return local(limiter.local(id, now));
    };
    takeOf = async (limiter, id, now, n, costWhat, local, what) => {
      const r = await limiter.call(TAKE, id, now, costWhat === undefined ? undefined : costArg(n, costWhat), what);
      if (r.reply !== undefined) return { answer: r.reply[0] === TAKEN, path: r.path };
      return { answer: outageOf(limiter, id, now, local, true, false), path: r.path };
    };
  }
}
