// @tideward/limiters' exact Sliding window on Redis, one window per id (its stamps a ring in hash fields).
import { MAX_SLIDING_QUOTA, Sliding } from "@tideward/limiters";
import type { RateLimit } from "@tideward/limiters";
import { slidingFallenOut as fallenOut, until } from "@tideward/limiters/math";
import { check } from "@tideward/time/internal";
import { shortReply } from "../bytes";
import type { ScriptClient } from "../client";
import { sliding as slidingScript } from "../scripts";
import {
  COUNT,
  POLICY_FIELDS,
  RedisLimiter,
  closedWait,
  decideTake,
  outage,
  outageRateLimit,
  spanOf,
  whole,
} from "./limiter";
import type { RedisPolicy } from "../policy";
import type { LimiterRead, TakeAnswer } from "./limiter";

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
  #fields(read: LimiterRead, counted = false): [now: number, last: number, oldest: number] {
    const size = counted ? 24 : 16;
    if (read.state.length !== size) throw shortReply(slidingScript.name, read.state.length + 8, size + 8);
    return [read.now, read.state.readDoubleLE(0), read.state.readDoubleLE(8)];
  }

  /** Whether an event for `id` at `now` is within the quota, counting it if it is. */
  async take(id: string, now: number): Promise<boolean> {
    return (await this.decide(id, now)).answer;
  }

  /** {@link RedisSliding.take}, saying which part answered. */
  decide(id: string, now: number): Promise<TakeAnswer> {
    return decideTake(this, id, now, 1, undefined, (l) => l.take(now), "RedisSliding.take");
  }

  /** What {@link RedisSliding.take} would answer, counting nothing. */
  async peek(id: string, now: number): Promise<boolean> {
    const read = await this.read(id, now, "RedisSliding.peek");
    if (read === undefined) return outage(this, id, now, (l) => l.peek(now), true, false);
    const [at, last, oldest] = this.#fields(read);
    return (at < last ? last : at) - oldest >= this.window;
  }

  /** How many more events the window would admit at `now`. */
  async left(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisSliding.left", COUNT);
    if (read === undefined) return outage(this, id, now, (l) => l.left(now), this.quota, 0);
    this.#fields(read, true);
    return read.state.readDoubleLE(16);
  }

  /** Milliseconds until the window has room. */
  async next(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisSliding.next");
    if (read === undefined) return outage(this, id, now, (l) => l.next(now), 0, closedWait(this));
    const [at, last, oldest] = this.#fields(read);
    const from = at < last ? last : at;
    return until(at, from, fallenOut(oldest, this.window, from));
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const read = await this.read(id, now, "RedisSliding.rateLimit", COUNT);
    if (read === undefined) return outageRateLimit(this, id, now, this.quota);
    const [at, last] = this.#fields(read, true);
    const remaining = read.state.readDoubleLE(16);
    if (remaining === this.quota) return { limit: this.quota, remaining, reset: 0 };
    // The window is empty again once the newest stamp falls out.
    const from = at < last ? last : at;
    return { limit: this.quota, remaining, reset: until(at, from, fallenOut(last, this.window, from)) };
  }
}
