import { badInstant, bucketReady, gcraReady, until } from "@tideward/limiters/math";
import { costError, isCost, isInstant } from "@tideward/quota-engine/internal";
import { check } from "@tideward/time/internal";
import { bytes } from "./bytes";
import { required } from "./missing";
import type { Rule } from "./rules";
import { ANSWERED, FAILED, ScriptError } from "./runner";
import type { Runner } from "./runner";
import { lease as leaseScript } from "./scripts";

/** Options of a {@link Lease}. */
export interface LeaseOptions {
  /**
   * The most tokens the lease holds at once, taken from the global bucket in one round trip.
   * The fleet can admit at most `slice × instances` more than the bucket alone would over any
   * stretch of time (tokens taken earlier and spent later); from a standing start, none more.
   * A whole number of at least 1.
   */
  readonly slice: number;
  /**
   * When the lease holds fewer than this share of a slice, it asks for more in the background,
   * so a steady flow rarely finds it empty. In [0, 1). @defaultValue 0.5
   */
  readonly refillAt?: number;
}

/** How a lease reaches Redis: take up to `n` tokens, or give `n` back. */
export type LeaseCall = (
  op: "take" | "give",
  now: number,
  n: number,
) => Promise<{ granted: number; retryAfter: number } | undefined>;

// lease.lua's protocol, made and read here:
//   KEYS   the bucket's key: the engine's own for token-bucket checks of the limit
//   ARGV   the op (TAKE_TOKENS or GIVE_TOKENS), now (ms; '' for Redis's TIME), the expiry margin
//          (ms), how many tokens, then the limit's two numbers as a charge sends them (wire.ts):
//          its capacity and tokens a ms, or, for a bucket of one number, its capacity and a half
//          and its tick; when its limit was replaced, its one entry of versions (KEYS[2] on hold
//          the bucket's names in earlier versions: parts/versions.lua)
//   reply  three doubles: the whole tokens granted (take) or taken back (give); the tokens left
//          and the instant they were counted (a bucket of one number: the instant it is full
//          again, and the instant read), from which a dry bucket's wait is found here
const TAKE_TOKENS = "t";
const GIVE_TOKENS = "g";
const LEASE_REPLY = 24;

/**
 * What a lease's call at some instant reaches: the bucket's key (with, when its limit was replaced,
 * the names of its earlier versions) and the limit it is held to then.
 */
export interface LeaseTarget {
  readonly keys: readonly string[];
  readonly rule: Rule;
  /** The section of versions (parts/versions.lua) ARGV ends with; empty when none is read. */
  readonly versions: readonly string[];
}

/**
 * How a lease made by the engine reaches Redis: lease.lua on the bucket `target` names at each
 * call, the same key and state as the engine's token-bucket checks of its limit (followed as the
 * limit is replaced or the key overridden).
 */
export function leaseCall(
  runner: Runner,
  target: (now: number) => LeaseTarget,
  serverClock: boolean,
  margin: string,
): LeaseCall {
  return async (op, now, n) => {
    const { keys, rule, versions } = target(now);
    const { capacity, perMs, bucketSlack, oneNumber, tick, bucketTau, bucketReach } = rule.numbers;
    const [cap, rate] = rule.args[0];
    const outcome = await runner.run(leaseScript, keys, [
      op === "take" ? TAKE_TOKENS : GIVE_TOKENS,
      serverClock ? "" : String(now),
      margin,
      String(n),
      cap,
      rate,
      ...versions,
    ]);
    if (outcome.status !== ANSWERED) {
      if (outcome.status === FAILED && outcome.error instanceof ScriptError) throw outcome.error;
      return undefined;
    }
    const r = bytes(outcome.reply, leaseScript.name, LEASE_REPLY);
    const granted = r.readDoubleLE(0);
    const tokens = r.readDoubleLE(8);
    const t = r.readDoubleLE(16);
    // When a dry bucket holds one token again, from the caller's clock (the in-process formula).
    const from = serverClock ? t : now;
    // A bucket of one number answers the instant it is full again in place of the tokens.
    const ready = (): number =>
      oneNumber
        ? gcraReady(tokens, 0, t, 1, tick, bucketTau, bucketReach)
        : bucketReady(tokens, t, t, 1, perMs, capacity, bucketSlack);
    const retryAfter = granted === 0 && op === "take" ? until(from, t, ready()) : 0;
    return { granted, retryAfter };
  };
}

/**
 * A slice of a token bucket's global quota, spent in process at in-process speed.
 *
 * `take` is synchronous: it spends tokens the lease already holds and never waits on Redis.
 * When the lease runs low it asks Redis for more in the background (one script call, at most
 * one in flight); until they arrive, a take it cannot pay is refused. `release` gives the unspent
 * tokens back. While Redis is unreachable a lease spends what it holds, then refuses.
 *
 * @example
 * import Redis from "ioredis";
 * import { QuotaKey, limitSpec } from "@tideward/quota-engine";
 * const server = await startRedis(); // a redis-server on a free loopback port, for the example
 * const redis = new Redis(server.port, "127.0.0.1", { enableOfflineQueue: false, autoResendUnfulfilledCommands: false, lazyConnect: true });
 * await redis.connect();
 * // A call waits at most `timeout` ms (250 by default), then answers from the outage mode: 5 s
 * // here, so the example's fill reaches Redis on a busy machine too.
 * const engine = new RedisQuotaEngine(ioredisClient(redis), { timeout: 5_000 });
 * await engine.addLimit(limitSpec({ name: "requests", capacity: 1_000, refill: 1_000, window: 1_000 }));
 * const lease = engine.lease(new QuotaKey("acme", "*", "api"), "requests", { slice: 100 });
 * const now = Date.now();
 * await lease.fill(now); // 100
 * lease.take(now); // true — spent in process, no round trip
 * lease.held; // 99
 * // Given back at the same instant: the bucket, at 900 of 1 000, takes all 99 (later it would
 * // take only what fits under its capacity).
 * await lease.release(now); // 99
 * redis.disconnect();
 * await server.stop();
 */
export class Lease {
  /** The most tokens held at once. */
  readonly slice: number;
  readonly #low: number;
  readonly #call: LeaseCall;
  #held = 0;
  #pending: Promise<number> | undefined;
  // Not before this instant (caller's clock) is an empty bucket asked again.
  #quietUntil = -Infinity;
  #granted = 0;
  #returned = 0;
  #error: Error | undefined;

  /** @internal Made by `RedisQuotaEngine.lease`. */
  constructor(call: LeaseCall, options: LeaseOptions) {
    const o = check.options(options, ["slice", "refillAt"], "Lease");
    this.slice = check.integer(required(o.slice, "Lease slice"), "Lease slice", 1);
    const refillAt = o.refillAt ?? 0.5;
    if (typeof refillAt !== "number" || !(refillAt >= 0 && refillAt < 1))
      throw new RangeError(`Lease refillAt must be in [0, 1), got ${check.describe(refillAt)}`);
    this.#low = refillAt * this.slice;
    this.#call = call;
  }

  /** Tokens held now, spendable without a round trip. */
  get held(): number {
    return this.#held;
  }

  /** Tokens this lease has taken from Redis in all, and given back. */
  get totals(): { readonly granted: number; readonly returned: number } {
    return { granted: this.#granted, returned: this.#returned };
  }

  /**
   * Spends `cost` held tokens if the lease holds them; asks for more in the background when it
   * runs low. Never waits.
   *
   * @param now - the caller's clock, in milliseconds
   * @param cost - tokens, a whole number of at least 1; 1 by default
   * @throws RangeError or TypeError naming `cost` or `now` when either is malformed (nothing is spent)
   */
  take(now: number, cost = 1): boolean {
    // Checked on every path, the paying one first: a cost of -1 000 paid from a held slice would
    // mint a thousand tokens Redis never granted.
    if (!isCost(cost)) throw costError(cost, "Lease.take cost");
    if (!isInstant(now)) throw badInstant(now, "Lease.take now");
    const held = this.#held;
    if (held >= cost) {
      const left = held - cost;
      this.#held = left;
      if (left < this.#low && this.#pending === undefined) this.#refill(now);
      return true;
    }
    if (this.#pending === undefined) this.#refill(now);
    return false;
  }

  /**
   * Why a fill of this lease was last refused, until one succeeds: a {@link ScriptError} when the
   * bucket's key holds something that is not tideward state, a TypeError when the client answers
   * text; `undefined` before any refusal (a fill that reached no Redis changes nothing). Takes it
   * cannot pay are refused meanwhile.
   */
  get error(): Error | undefined {
    return this.#error;
  }

  /** A fill in the background: `fill` keeps its refusal in `error`; never an unhandled rejection. */
  #refill(now: number): void {
    this.fill(now).catch(() => 0);
  }

  /**
   * Asks Redis for tokens up to a full slice and resolves with how many arrived (0 when the
   * bucket is dry or Redis unreachable). At most one request is in flight; a second call shares it.
   *
   * @param now - the caller's clock, in milliseconds
   * @returns a promise rejected with a RangeError or TypeError naming `now` when it is not a
   *   reading within ±2^45 ms (nothing is sent); with a {@link ScriptError} naming the key when
   *   the bucket's key holds something that is not tideward state (nothing is granted)
   */
  fill(now: number): Promise<number> {
    if (!isInstant(now)) return Promise.reject(badInstant(now, "Lease.fill now"));
    if (this.#pending !== undefined) return this.#pending;
    const want = this.slice - this.#held;
    if (want <= 0 || now < this.#quietUntil) return Promise.resolve(0);
    const pending = this.#call("take", now, want).then(
      (r) => {
        this.#pending = undefined;
        if (r === undefined) return 0;
        this.#error = undefined;
        // Tokens spent meanwhile were the held ones; what arrives tops the lease up.
        this.#held += r.granted;
        this.#granted += r.granted;
        if (r.granted === 0) this.#quietUntil = now + r.retryAfter;
        return r.granted;
      },
      (e: unknown) => {
        this.#pending = undefined;
        // A refusal by the script or a malformed reply: an unreachable Redis answers undefined.
        this.#error = e instanceof Error ? e : new Error(String(e));
        throw e;
      },
    );
    this.#pending = pending;
    return pending;
  }

  /**
   * Gives every held token back to the global bucket (never above its capacity) and resolves
   * with how many it took back.
   *
   * @param now - the caller's clock, in milliseconds
   */
  async release(now: number): Promise<number> {
    if (!isInstant(now)) throw badInstant(now, "Lease.release now");
    // A failed fill says nothing about giving back: the give below meets the same key.
    await this.#pending?.catch(() => 0);
    const n = this.#held;
    if (n === 0) return 0;
    this.#held = 0;
    const r = await this.#call("give", now, n);
    const back = r?.granted ?? 0;
    this.#returned += back;
    return back;
  }
}
