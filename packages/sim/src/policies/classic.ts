import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { Tally, Window } from "@tideward/window";
import type { Adapter, PolicyContext, PolicySpec } from "../policy";

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
 * The breaker most libraries ship (cockatiel's `ConsecutiveBreaker`, opossum, Hystrix), as a
 * baseline: closed until `threshold` failures in a row, then open (refusing everything) for
 * `openFor` ms, then half-open, letting `probes` calls through; a probe's success closes it, a
 * probe's failure opens it again. Outcomes of calls let through before it opened are ignored
 * while it is open or half-open, as cockatiel does.
 */
export function classicBreaker(options: ClassicOptions = {}): PolicySpec {
  const o = check.options(options, ["threshold", "openFor", "probes", "name"], "classicBreaker");
  const threshold = check.integer(o.threshold ?? 5, "classicBreaker threshold", 1);
  const openFor = check.positive(o.openFor ?? 10_000, "classicBreaker openFor (ms)");
  const probes = check.integer(o.probes ?? 1, "classicBreaker probes", 1);
  const name = o.name ?? "classic breaker";
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
  /** The failure share, in (0, 1), at or past which the breaker opens. @defaultValue 0.2 */
  readonly threshold?: number;
  /** How far back outcomes are sampled, in milliseconds, above 0. @defaultValue 10 000 */
  readonly duration?: Span;
  /** Calls a second the window must average before the share counts (so two failures of three calls open nothing). @defaultValue 5 */
  readonly minimumRps?: number;
  /** How long it stays open before a probe, in milliseconds. @defaultValue 10 000 */
  readonly openFor?: Span;
  /** Probes let through at once while half-open. @defaultValue 1 */
  readonly probes?: number;
  /** @defaultValue "sampling breaker" */
  readonly name?: string;
}

/**
 * cockatiel's `SamplingBreaker` as a baseline: it opens when, over the last `duration` ms, the
 * share of failed calls reaches `threshold` with at least `minimumRps` calls a second; then
 * open, half-open and a probe as in {@link classicBreaker}. The window is kept in ten buckets.
 */
export function samplingBreaker(options: SamplingOptions = {}): PolicySpec {
  const o = check.options(
    options,
    ["threshold", "duration", "minimumRps", "openFor", "probes", "name"],
    "samplingBreaker",
  );
  const threshold = check.finite(o.threshold ?? 0.2, "samplingBreaker threshold");
  if (!(threshold > 0 && threshold < 1))
    throw new RangeError(`samplingBreaker threshold must be between 0 and 1 (exclusive), got ${threshold}`);
  const duration = check.positive(o.duration ?? 10_000, "samplingBreaker duration (ms)");
  const minimum = (check.nonNegative(o.minimumRps ?? 5, "samplingBreaker minimumRps") * duration) / 1_000;
  const openFor = check.positive(o.openFor ?? 10_000, "samplingBreaker openFor (ms)");
  const probes = check.integer(o.probes ?? 1, "samplingBreaker probes", 1);
  const name = o.name ?? "sampling breaker";
  return {
    name,
    create(context: PolicyContext): Adapter {
      const window = new Window(() => new Tally(), { size: 10, window: duration, now: context.start });
      let total = 0;
      let failed = 0;
      const adapter = new HalfOpen(name, openFor, probes, (ok, now) => {
        window.slot(now).add(ok ? "success" : "failure");
        total = 0;
        failed = 0;
        window.each(now, (b) => {
          total += b.total;
          failed += b.failure;
        });
        return total > 0 && total >= minimum && failed / total >= threshold;
      });
      adapter.onClose = () => window.clear();
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
    if (this.#state === "closed" && this.#trip(ok, now)) this.#open(now);
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
