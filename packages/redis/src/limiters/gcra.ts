// @tideward/limiters' Gcra on Redis, one flow per id.
import { Gcra } from "@tideward/limiters";
import type { RateLimit } from "@tideward/limiters";
import { gcraFits, gcraLead, gcraReady, gcraRest, gcraWhole, slackOf, until } from "@tideward/limiters/math";
import { shortReply } from "../bytes";
import type { ScriptClient } from "../client";
import { gcra as gcraScript } from "../scripts";
import { RedisLimiter, closedWait, costArg, decideTake, outage, outageRateLimit, rateAndBurst } from "./limiter";
import type { RedisPolicy } from "../policy";
import type { LimiterRead, TakeAnswer } from "./limiter";

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
    const { rate: r, burst, policy } = rateAndBurst(rate, options, "RedisGcra", "rate (per second)", "burst");
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
    if (read.state.length === 0) return [-Infinity, 0];
    if (read.state.length !== 16) throw shortReply(gcraScript.name, read.state.length + 8, 24);
    return [read.state.readDoubleLE(0), read.state.readDoubleLE(8)];
  }

  /** Whether a request of cost `n` conforms at `now` (ms), recording it if it does. */
  async take(id: string, now: number, n = 1): Promise<boolean> {
    return (await this.decide(id, now, n)).answer;
  }

  /** {@link RedisGcra.take}, saying which part answered. */
  decide(id: string, now: number, n = 1): Promise<TakeAnswer> {
    return decideTake(this, id, now, n, "RedisGcra.take n", (l) => l.take(now, n), "RedisGcra.take");
  }

  /** What {@link RedisGcra.take} would answer, recording nothing. */
  async peek(id: string, now: number, n = 1): Promise<boolean> {
    costArg(n, "RedisGcra.peek n");
    const read = await this.read(id, now, "RedisGcra.peek");
    if (read === undefined) return outage(this, id, now, (l) => l.peek(now, n), true, false);
    const [at, ahead] = this.#fields(read);
    return n <= this.burst && gcraFits(gcraLead(at, ahead, read.now), n, this.interval, this.#reach);
  }

  /** Milliseconds until a request of cost `n` would conform (`Infinity` above the burst). */
  async next(id: string, now: number, n = 1): Promise<number> {
    costArg(n, "RedisGcra.next n");
    const read = await this.read(id, now, "RedisGcra.next");
    if (read === undefined) return outage(this, id, now, (l) => l.next(now, n), 0, closedWait(this));
    if (n > this.burst) return Infinity;
    const [at, ahead] = this.#fields(read);
    return until(read.now, read.now, gcraReady(at, ahead, read.now, n, this.interval, this.#tau, this.#reach));
  }

  /** Requests of cost one that would conform back to back at `now`. */
  async remaining(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisGcra.remaining");
    if (read === undefined) return outage(this, id, now, (l) => l.remaining(now), Math.floor(this.burst), 0);
    const [at, ahead] = this.#fields(read);
    return gcraWhole(gcraLead(at, ahead, read.now), this.interval, this.burst, this.#slack);
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const read = await this.read(id, now, "RedisGcra.rateLimit");
    if (read === undefined) return outageRateLimit(this, id, now, Math.floor(this.burst));
    const [at, ahead] = this.#fields(read);
    const remaining = gcraWhole(gcraLead(at, ahead, read.now), this.interval, this.burst, this.#slack);
    return {
      limit: Math.floor(this.burst),
      remaining,
      reset: until(read.now, read.now, gcraRest(at, ahead, read.now)),
    };
  }
}
