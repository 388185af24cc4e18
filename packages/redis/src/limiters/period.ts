// @tideward/limiters' Period (a fixed window answering under / hit / over) on Redis, one counter per id.
import { Period } from "@tideward/limiters";
import type { PeriodAnswer, RateLimit } from "@tideward/limiters";
import { MAX_COUNT, until } from "@tideward/limiters/math";
import { check } from "@tideward/time/internal";
import { shortReply } from "../bytes";
import type { ScriptClient } from "../client";
import { period as periodScript } from "../scripts";
import { POLICY_FIELDS, RedisLimiter, TAKE, closedWait, outage, outageRateLimit, spanOf, whole } from "./limiter";
import type { RedisPolicy } from "../policy";
import type { LimiterRead, TakeAnswer } from "./limiter";

// A take's reply (the limiters' protocol: limiter.ts): admitted under the quota ("u"), admitted
// as the event that reaches it ("h"), or else over ("o").
const UNDER = 0x75;
const HIT = 0x68;

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
    if (read.state.length === 0) return [-Infinity, 0];
    if (read.state.length !== 16) throw shortReply(periodScript.name, read.state.length + 8, 24);
    return [read.state.readDoubleLE(0), read.state.readDoubleLE(8)];
  }

  /** Counts one event for `id` at `now` (if admitted): `"under"` and `"hit"` are admitted, `"over"` is not. */
  async take(id: string, now: number): Promise<PeriodAnswer> {
    return (await this.decide(id, now)).answer;
  }

  /** {@link RedisPeriod.take}, saying which part answered. */
  async decide(id: string, now: number): Promise<TakeAnswer<PeriodAnswer>> {
    const r = await this.call(TAKE, id, now, undefined, "RedisPeriod.take");
    if (r.reply !== undefined)
      return { answer: r.reply[0] === UNDER ? "under" : r.reply[0] === HIT ? "hit" : "over", path: r.path };
    return { answer: outage<Period, PeriodAnswer>(this, id, now, (l) => l.take(now), "under", "over"), path: r.path };
  }

  /** What {@link RedisPeriod.take} would answer, counting nothing. */
  async peek(id: string, now: number): Promise<PeriodAnswer> {
    const read = await this.read(id, now, "RedisPeriod.peek");
    if (read === undefined) return outage<Period, PeriodAnswer>(this, id, now, (l) => l.peek(now), "under", "over");
    const [end, count] = this.#fields(read);
    const next = read.now >= end ? 1 : count + 1;
    return QUOTAS[next < this.quota ? 0 : next === this.quota ? 1 : 2];
  }

  /** How many more events the period would admit at `now`. */
  async left(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisPeriod.left");
    if (read === undefined) return outage(this, id, now, (l) => l.left(now), this.quota, 0);
    const [end, count] = this.#fields(read);
    return read.now >= end ? this.quota : this.quota - count;
  }

  /** Milliseconds until an event would be admitted. */
  async next(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisPeriod.next");
    if (read === undefined) return outage(this, id, now, (l) => l.next(now), 0, closedWait(this));
    const [end, count] = this.#fields(read);
    return read.now >= end || count < this.quota ? 0 : until(read.now, read.now, end);
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const read = await this.read(id, now, "RedisPeriod.rateLimit");
    if (read === undefined) return outageRateLimit(this, id, now, this.quota);
    const [end, count] = this.#fields(read);
    return {
      limit: this.quota,
      remaining: read.now >= end ? this.quota : this.quota - count,
      reset: until(read.now, read.now, end),
    };
  }
}
