/**
 * What an HTTP `RateLimit` header needs from a limiter, read at one instant without consuming
 * anything. Every limiter in this package answers one through its `rateLimit(now)` method.
 *
 * All three counts are in requests of cost one; `reset` is in **milliseconds**, the unit of
 * every instant and span in tideward. The IETF `RateLimit` header field carries seconds, so a
 * server sends `Math.ceil(reset / 1000)` (rounding up, so a client that waits that long finds
 * the quota restored).
 *
 * @example
 * const bucket = new Bucket(10); // 10 a second
 * bucket.take(0);
 * const r = bucket.rateLimit(0);
 * const headers = new Headers();
 * headers.set("RateLimit", `"default";r=${r.remaining};t=${Math.ceil(r.reset / 1000)}`);
 * headers.get("RateLimit"); // "\"default\";r=9;t=1"
 */
export interface RateLimit {
  /**
   * The most requests of cost one the limiter admits at once: a bucket's or a GCRA flow's burst
   * (rounded down), a window's or a period's quota, a gate's limit. `Infinity` for a gate
   * without a ceiling, which has no header to send.
   */
  readonly limit: number;
  /** How many requests of cost one it would admit now, a whole number from 0 to `limit`. */
  readonly remaining: number;
  /**
   * Milliseconds until `remaining` is back at `limit` (the quota fully restored); 0 when it
   * already is. A gate, which never reads a clock, always reports 0.
   */
  readonly reset: number;
}
