// @tideward/limiters' token Bucket on Redis, one bucket per id.
import { Bucket } from "@tideward/limiters";
import type { RateLimit } from "@tideward/limiters";
import { bucketFits, bucketFull, bucketLevel, bucketReady, bucketWhole, slackOf, until } from "@tideward/limiters/math";
import { shortReply } from "../bytes";
import type { ScriptClient } from "../client";
import { bucket as bucketScript } from "../scripts";
import { RedisLimiter, closedWait, costArg, decideTake, outage, outageRateLimit, rateAndBurst } from "./limiter";
import type { RedisPolicy } from "../policy";
import type { LimiterRead, TakeAnswer } from "./limiter";

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
    const {
      rate: r,
      burst,
      policy,
    } = rateAndBurst(rate, options, "RedisBucket", "rate (tokens per second)", "burst (tokens)");
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
    if (read.state.length === 0) return [this.burst, read.now, read.now];
    if (read.state.length !== 24) throw shortReply(bucketScript.name, read.state.length + 8, 32);
    return [read.state.readDoubleLE(0), read.state.readDoubleLE(8), read.state.readDoubleLE(16)];
  }

  /** Whether `n` tokens are available in `id`'s bucket at `now` (ms), taking them if they are. */
  async take(id: string, now: number, n = 1): Promise<boolean> {
    return (await this.decide(id, now, n)).answer;
  }

  /** {@link RedisBucket.take}, saying which part answered. */
  decide(id: string, now: number, n = 1): Promise<TakeAnswer> {
    return decideTake(this, id, now, n, "RedisBucket.take n", (l) => l.take(now, n), "RedisBucket.take");
  }

  /** What {@link RedisBucket.take} would answer, taking nothing. */
  async peek(id: string, now: number, n = 1): Promise<boolean> {
    costArg(n, "RedisBucket.peek n");
    const read = await this.read(id, now, "RedisBucket.peek");
    if (read === undefined) return outage(this, id, now, (l) => l.peek(now, n), true, false);
    const [tokens, at, latest] = this.#fields(read);
    const t = read.now > latest ? read.now : latest;
    return bucketFits(bucketLevel(tokens, at, t, this.#perMs, this.burst), n, this.burst, this.#slack);
  }

  /** Milliseconds until `n` tokens are available (0 now, `Infinity` above the burst). */
  async next(id: string, now: number, n = 1): Promise<number> {
    costArg(n, "RedisBucket.next n");
    const read = await this.read(id, now, "RedisBucket.next");
    if (read === undefined) return outage(this, id, now, (l) => l.next(now, n), 0, closedWait(this));
    const [tokens, at, latest] = this.#fields(read);
    const from = read.now > latest ? read.now : latest;
    return until(read.now, from, bucketReady(tokens, at, from, n, this.#perMs, this.burst, this.#slack));
  }

  /** The tokens `id`'s bucket holds at `now`, fractions included. */
  async tokens(id: string, now: number): Promise<number> {
    const read = await this.read(id, now, "RedisBucket.tokens");
    if (read === undefined) return outage(this, id, now, (l) => l.tokens(now), this.burst, 0);
    const [tokens, at, latest] = this.#fields(read);
    const level = bucketLevel(tokens, at, read.now > latest ? read.now : latest, this.#perMs, this.burst);
    return level > 0 ? level : 0;
  }

  /** What an HTTP `RateLimit` header needs for `id` at `now`. */
  async rateLimit(id: string, now: number): Promise<RateLimit> {
    const read = await this.read(id, now, "RedisBucket.rateLimit");
    if (read === undefined) return outageRateLimit(this, id, now, Math.floor(this.burst));
    const [tokens, at, latest] = this.#fields(read);
    const from = read.now > latest ? read.now : latest;
    const level = bucketLevel(tokens, at, from, this.#perMs, this.burst);
    const reset = until(read.now, from, bucketFull(tokens, at, from, this.#perMs, this.burst, this.#slack));
    return { limit: Math.floor(this.burst), remaining: bucketWhole(level, this.burst, this.#slack), reset };
  }
}
