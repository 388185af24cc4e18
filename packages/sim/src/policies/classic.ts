import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import type { Adapter, PolicySpec } from "../policy";
import { nameOf } from "./name";

/** Options of {@link classicBreaker}. */
export interface ClassicOptions {
  /** Consecutive failures that open the breaker, a whole number from 1. @defaultValue 5 */
  readonly threshold?: number;
  /** How long it stays open before a probe, in milliseconds, above 0. @defaultValue 10 000 */
  readonly openFor?: Span;
  /** Probes let through at once while half-open, a whole number from 1. @defaultValue 1 */
  readonly probes?: number;
  /** @defaultValue "classic breaker" */
  readonly name?: string;
}

// Tokens: a call let through while closed, or a half-open probe.
const NORMAL = 1;
const PROBE = 2;

/**
 * The consecutive-failure breaker (cockatiel's `ConsecutiveBreaker` behind its
 * `CircuitBreakerPolicy`), as a baseline: closed until `threshold` failures in a row, then open
 * (refusing everything) for `openFor` ms, then half-open, letting `probes` calls through; a
 * probe's success closes it, a probe's failure opens it again. A call let through before it
 * opened still counts when it ends (a success resets the run) but cannot reopen it, and closing
 * forgets the run. One difference: calls arriving while the probe is out are refused here,
 * where cockatiel holds them until the probe's answer.
 */
export function classicBreaker(options: ClassicOptions = {}): PolicySpec {
  const o = check.options(options, ["threshold", "openFor", "probes", "name"], "classicBreaker");
  const threshold = check.integer(check.or(o.threshold, 5), "classicBreaker threshold", 1);
  const openFor = check.positive(check.or(o.openFor, 10_000), "classicBreaker openFor (ms)");
  const probes = check.integer(check.or(o.probes, 1), "classicBreaker probes", 1);
  const name = nameOf(o.name, "classic breaker", "classicBreaker name");
  return {
    name,
    create(): Adapter {
      let failures = 0;
      const adapter = new HalfOpen(name, openFor, probes, (ok) => {
        if (ok) failures = 0;
        else if (++failures >= threshold) return true;
        return false;
      });
      adapter.onClose = () => (failures = 0);
      return adapter;
    },
  };
}

/** Options of {@link samplingBreaker}. */
export interface SamplingOptions {
  /** The failure share, in (0, 1), past which the breaker opens. @defaultValue 0.2 */
  readonly threshold?: number;
  /** How far back outcomes are sampled, in milliseconds, above 0. @defaultValue 10 000 */
  readonly duration?: Span;
  /**
   * Calls a second the window must average before the share counts (so two failures of three
   * calls open nothing), 0 or more. @defaultValue 5 / threshold: five failures a second at the threshold
   */
  readonly minimumRps?: number;
  /** How long it stays open before a probe, in milliseconds. @defaultValue 10 000 */
  readonly openFor?: Span;
  /** Probes let through at once while half-open. @defaultValue 1 */
  readonly probes?: number;
  /** @defaultValue "sampling breaker" */
  readonly name?: string;
}

/**
 * cockatiel's `SamplingBreaker` as a baseline: it opens on a failure when, over the last
 * `duration` ms, more than `threshold` of the calls failed and they averaged at least
 * `minimumRps` a second; then open, half-open and a probe as in {@link classicBreaker}, and a
 * probe's success empties the window.
 *
 * The window is kept as cockatiel keeps it: `max(5, ⌈duration / 1 s⌉)` buckets, a bucket
 * started by the first outcome after the previous one's time is up (so after a quiet stretch,
 * only one old bucket is dropped per outcome). Outcomes of calls let through before it opened
 * still count, as cockatiel counts them.
 */
export function samplingBreaker(options: SamplingOptions = {}): PolicySpec {
  const o = check.options(
    options,
    ["threshold", "duration", "minimumRps", "openFor", "probes", "name"],
    "samplingBreaker",
  );
  const threshold = check.finite(check.or(o.threshold, 0.2), "samplingBreaker threshold");
  if (!(threshold > 0 && threshold < 1))
    throw new RangeError(`samplingBreaker threshold must be between 0 and 1 (exclusive), got ${threshold}`);
  const asked = check.positive(check.or(o.duration, 10_000), "samplingBreaker duration (ms)");
  if (asked === Infinity) throw new RangeError("samplingBreaker duration (ms) must be finite, got Infinity");
  const count = Math.max(5, Math.ceil(asked / 1_000));
  if (count > 100_000)
    throw new RangeError(`samplingBreaker duration (ms) must be at most 100 000 000 (a bucket a second), got ${asked}`);
  const width = Math.round(asked / count);
  const duration = width * count;
  const rps = check.nonNegative(check.or(o.minimumRps, 5 / threshold), "samplingBreaker minimumRps");
  const minimum = (duration * rps) / 1_000;
  const openFor = check.positive(check.or(o.openFor, 10_000), "samplingBreaker openFor (ms)");
  const probes = check.integer(check.or(o.probes, 1), "samplingBreaker probes", 1);
  const name = nameOf(o.name, "sampling breaker", "samplingBreaker name");
  return {
    name,
    create(): Adapter {
      const ok = new Float64Array(count);
      const bad = new Float64Array(count);
      // Each bucket's start; -Infinity for one never started, so the first outcome starts a bucket.
      const began = new Float64Array(count).fill(-Infinity);
      let current = 0;
      let successes = 0;
      let failures = 0;
      const adapter = new HalfOpen(name, openFor, probes, (success, now) => {
        if (now - began[current] >= width) {
          current = (current + 1) % count;
          successes -= ok[current];
          failures -= bad[current];
          ok[current] = 0;
          bad[current] = 0;
          began[current] = now;
        }
        if (success) {
          ok[current]++;
          successes++;
          return false;
        }
        bad[current]++;
        failures++;
        const total = successes + failures;
        return total >= minimum && failures > threshold * total;
      });
      adapter.onClose = () => {
        ok.fill(0);
        bad.fill(0);
        began.fill(-Infinity);
        successes = 0;
        failures = 0;
      };
      return adapter;
    },
  };
}

/** The closed / open / half-open machine both baselines share; `trip` says whether a closed outcome opens it. */
class HalfOpen implements Adapter {
  readonly side = "client";
  readonly reason: string;
  readonly name: string;
  /** Called when a probe closes it: the baseline forgets what it counted. */
  onClose: () => void = () => {};
  #state: "closed" | "open" | "half-open" = "closed";
  #until = 0;
  #probing = 0;
  #opened = 0;
  #openTime = 0;
  #openedAt = 0;
  readonly #openFor: number;
  readonly #probes: number;
  readonly #trip: (ok: boolean, now: number) => boolean;

  constructor(name: string, openFor: number, probes: number, trip: (ok: boolean, now: number) => boolean) {
    this.name = name;
    this.reason = name;
    this.#openFor = openFor;
    this.#probes = probes;
    this.#trip = trip;
  }

  admit(now: number): unknown {
    if (this.#state === "closed") return NORMAL;
    if (this.#state === "open") {
      if (now < this.#until) return undefined;
      this.#state = "half-open";
    }
    if (this.#probing >= this.#probes) return undefined;
    this.#probing++;
    return PROBE;
  }

  settle(token: unknown, now: number, ok: boolean): void {
    if (token === PROBE) {
      this.#probing--;
      if (this.#state !== "half-open") return;
      if (ok) {
        this.#state = "closed";
        this.#openTime += now - this.#openedAt;
        this.onClose();
      } else this.#open(now);
      return;
    }
    // A call let through while closed is counted whenever it ends; it opens the breaker only
    // while closed (an open one stays open until its time is up).
    if (this.#trip(ok, now) && this.#state === "closed") this.#open(now);
  }

  release(token: unknown): void {
    if (token === PROBE) this.#probing--;
  }

  #open(now: number): void {
    if (this.#state === "closed") {
      this.#opened++;
      this.#openedAt = now;
    }
    this.#state = "open";
    this.#until = now + this.#openFor;
  }

  stats(): Record<string, number> {
    return { opened: this.#opened, openTime: this.#openTime, open: this.#state === "closed" ? 0 : 1 };
  }
}
