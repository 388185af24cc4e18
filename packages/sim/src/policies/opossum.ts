import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import type { Adapter, PolicyContext, PolicySpec } from "../policy";
import { nameOf } from "./name";

/** Options of {@link opossumBreaker}, named as opossum names them. */
export interface OpossumOptions {
  /** The failure percentage of the rolling window past which it opens, in (0, 100]. @defaultValue 50 */
  readonly errorThresholdPercentage?: number;
  /** How far back the rolling window reaches, ms, above 0. @defaultValue 10 000 */
  readonly rollingCountTimeout?: Span;
  /** Buckets of the rolling window, a whole number from 1 to 10 000. @defaultValue 10 */
  readonly rollingCountBuckets?: number;
  /** Calls the window must hold before a failure can open it, a whole number from 0. @defaultValue 0 */
  readonly volumeThreshold?: number;
  /** How long it stays open before it lets one call through, ms, above 0. @defaultValue 30 000 */
  readonly resetTimeout?: Span;
  /** @defaultValue "opossum breaker" */
  readonly name?: string;
}

const CLOSED = 0;
const OPEN = 1;
const HALF_OPEN = 2;
// Tokens: a call let through while closed, or the one let through half-open.
const NORMAL = 1;
const PROBE = 2;

/**
 * opossum's rolling error-percentage breaker, as a baseline. It is not a consecutive breaker:
 *
 * - Every call it is asked about counts as fired, refused ones included, in a rolling window of
 *   `rollingCountBuckets` buckets that turn over on the clock (every `rollingCountTimeout /
 *   rollingCountBuckets` ms from the start), as opossum's interval timer turns them.
 * - On a failure, when the window holds at least `volumeThreshold` calls and more than
 *   `errorThresholdPercentage` % of them failed, it opens.
 * - `resetTimeout` ms after opening it is half-open: the next call goes through, the rest are
 *   refused; any success while half-open closes it, any failure opens it again. Closing keeps
 *   the window, as opossum does: the refused calls of the open stretch dilute its failures.
 */
export function opossumBreaker(options: OpossumOptions = {}): PolicySpec {
  const o = check.options(
    options,
    [
      "errorThresholdPercentage",
      "rollingCountTimeout",
      "rollingCountBuckets",
      "volumeThreshold",
      "resetTimeout",
      "name",
    ],
    "opossumBreaker",
  );
  const percentage = check.finite(check.or(o.errorThresholdPercentage, 50), "opossumBreaker errorThresholdPercentage");
  if (!(percentage > 0 && percentage <= 100))
    throw new RangeError(`opossumBreaker errorThresholdPercentage must be in (0, 100], got ${percentage}`);
  const timeout = check.positive(check.or(o.rollingCountTimeout, 10_000), "opossumBreaker rollingCountTimeout (ms)");
  if (timeout === Infinity)
    throw new RangeError("opossumBreaker rollingCountTimeout (ms) must be finite, got Infinity");
  const buckets = check.integer(check.or(o.rollingCountBuckets, 10), "opossumBreaker rollingCountBuckets", 1);
  if (buckets > 10_000)
    throw new RangeError(`opossumBreaker rollingCountBuckets must be at most 10 000, got ${buckets}`);
  const interval = Math.floor(timeout / buckets);
  if (!(interval >= 1))
    throw new RangeError(
      `opossumBreaker rollingCountTimeout (ms) must give each of its ${buckets} buckets at least 1 ms, got ${timeout}`,
    );
  const volume = check.integer(check.or(o.volumeThreshold, 0), "opossumBreaker volumeThreshold", 0);
  const reset = check.positive(check.or(o.resetTimeout, 30_000), "opossumBreaker resetTimeout (ms)");
  const name = nameOf(o.name, "opossum breaker", "opossumBreaker name");
  return {
    name,
    create: (context: PolicyContext): Adapter =>
      new Opossum(name, context.start, interval, buckets, volume, percentage, reset),
  };
}

class Opossum implements Adapter {
  readonly side = "client";
  readonly name: string;
  readonly reason: string;
  readonly #start: number;
  readonly #interval: number;
  readonly #fires: Float64Array;
  readonly #failures: Float64Array;
  readonly #volume: number;
  readonly #percentage: number;
  readonly #reset: number;
  /** The bucket number (since the start) the ring's head holds. */
  #head = 0;
  #state = CLOSED;
  /** Half-open and its one call not yet let through. */
  #pending = false;
  #until = 0;
  #opened = 0;
  #openedAt = 0;
  #openTime = 0;

  constructor(
    name: string,
    start: number,
    interval: number,
    buckets: number,
    volume: number,
    percentage: number,
    reset: number,
  ) {
    this.name = name;
    this.reason = name;
    this.#start = start;
    this.#interval = interval;
    this.#fires = new Float64Array(buckets);
    this.#failures = new Float64Array(buckets);
    this.#volume = volume;
    this.#percentage = percentage;
    this.#reset = reset;
  }

  /** Turns the ring to `now` and the open state into half-open once its time is up; the head's index. */
  #at(now: number): number {
    const n = this.#fires.length;
    const bucket = Math.floor((now - this.#start) / this.#interval);
    if (bucket > this.#head) {
      const turns = Math.min(bucket - this.#head, n);
      for (let i = 1; i <= turns; i++) {
        const j = (this.#head + i) % n;
        this.#fires[j] = 0;
        this.#failures[j] = 0;
      }
      this.#head = bucket;
    }
    if (this.#state === OPEN && now >= this.#until) {
      this.#state = HALF_OPEN;
      this.#pending = true;
    }
    return this.#head % n;
  }

  admit(now: number): unknown {
    this.#fires[this.#at(now)]++;
    if (this.#state === CLOSED) return NORMAL;
    if (this.#state === HALF_OPEN && this.#pending) {
      this.#pending = false;
      return PROBE;
    }
    return undefined;
  }

  settle(_token: unknown, now: number, ok: boolean): void {
    const head = this.#at(now);
    if (ok) {
      if (this.#state === HALF_OPEN) {
        this.#state = CLOSED;
        this.#pending = false;
        this.#openTime += now - this.#openedAt;
      }
      return;
    }
    this.#failures[head]++;
    if (this.#state === HALF_OPEN) return this.#open(now);
    let fires = 0;
    let failures = 0;
    for (let i = 0; i < this.#fires.length; i++) {
      fires += this.#fires[i];
      failures += this.#failures[i];
    }
    if (fires < this.#volume) return;
    if ((failures / fires) * 100 > this.#percentage) this.#open(now);
  }

  release(token: unknown): void {
    // The call let through half-open never ran: the next one may go instead.
    if (token === PROBE && this.#state === HALF_OPEN) this.#pending = true;
  }

  /** Opens it, unless it is open already (opossum's timer is not restarted then). */
  #open(now: number): void {
    if (this.#state === OPEN) return;
    if (this.#state === CLOSED) {
      this.#opened++;
      this.#openedAt = now;
    }
    this.#state = OPEN;
    this.#pending = false;
    this.#until = now + this.#reset;
  }

  stats(): Record<string, number> {
    return { opened: this.#opened, openTime: this.#openTime, open: this.#state === CLOSED ? 0 : 1 };
  }
}
