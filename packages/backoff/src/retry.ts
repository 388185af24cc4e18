// The retry loop: the one place in this package that sleeps, reads a clock and draws random
// numbers. All three are injected, defaulting to the real ones, so a test runs a whole schedule
// on a ManualClock without waiting.
import { systemClock, systemRandom } from "@tideward/time";
import { check } from "@tideward/time/internal";
import type { Clock, Deadline, Random, Span } from "@tideward/time";
import { Backoff, backoff, countHint } from "./backoff";
import type { BackoffPolicy } from "./backoff";
import type { RetryBudget } from "./budget";
import { decideRetry, readHint, retryAfterProperty } from "./decision";
import type { OverMaxRetryAfter, RetryRule } from "./decision";
import { RetryError } from "./retry-error";
import { isSignal, sleep as realSleep } from "./sleep";
import type { Sleep } from "./sleep";

/** What each attempt is called with. */
export interface RetryContext {
  /** Which attempt this is, the first being 1. */
  readonly attempt: number;
  /**
   * The caller's signal, or when none was given one of this attempt's own that never fires (so
   * that what an attempt hangs on it goes with the attempt): pass it on to what you call.
   */
  readonly signal: AbortSignal;
}

/** What {@link RetryOptions.onRetry} is told before each wait. */
export interface RetryEvent {
  /** The attempt that just failed, the first being 1; the next one is `attempt + 1`. */
  readonly attempt: number;
  /** What it failed with. */
  readonly error: unknown;
  /** How long the loop is about to wait, in milliseconds: the backoff's delay, or the error's `retryAfter` if longer. */
  readonly delay: Span;
}

/** Options of {@link retry}; all optional. */
export interface RetryOptions {
  /** The schedule: a {@link Backoff}, or fields laid over the preset. @defaultValue the preset `backoff` */
  readonly backoff?: Backoff | Partial<BackoffPolicy>;
  /**
   * Whether an error is worth retrying; `false` rethrows it at once, unwrapped.
   * @defaultValue every error is retried
   */
  readonly retryOn?: (error: unknown) => boolean;
  /**
   * Called before each wait, for logging or metrics. One that throws ends the call with its error,
   * the retry not made: its budget credit is given back (as when `sleep` throws or the caller
   * gives up during the wait).
   */
  readonly onRetry?: (event: RetryEvent) => void;
  /**
   * Stops the loop: before an attempt, after a failed one, or in the middle of a wait (at once).
   * `retry` then rejects with the signal's reason. It is also handed to every attempt.
   */
  readonly signal?: AbortSignal;
  /**
   * A time budget on the caller's clock: when the next wait would reach or pass its end, `retry`
   * gives up at once with a {@link RetryError} (reason `"deadline"`) instead of sleeping for
   * nothing. The first attempt always runs; bound the attempts themselves through `signal`.
   */
  readonly deadline?: Deadline;
  /**
   * A budget shared with other calls: this call counts as one first attempt, and each retry must
   * be granted by it, or `retry` gives up with a {@link RetryError} (reason `"budget"`).
   */
  readonly budget?: RetryBudget;
  /**
   * The longest wait an error's `retryAfter` may ask for, in milliseconds (0 or more; `Infinity`
   * obeys any finite one): a server that says "come back in an hour" is not waited for by a call
   * that meant to retry in seconds. @defaultValue 60 000 (a minute)
   */
  readonly maxRetryAfter?: Span;
  /**
   * What a hint over `maxRetryAfter` (or of `Infinity`) does: `"give-up"` rejects at once with a
   * {@link RetryError} (reason `"retryAfter"`), `"cap"` waits `maxRetryAfter`. @defaultValue "give-up"
   */
  readonly overMaxRetryAfter?: OverMaxRetryAfter;
  /**
   * Reads the time for the deadline and the budget, in milliseconds; read only when there is one.
   * A reading that is not a finite number rejects with an error naming it, rather than quietly
   * turning the deadline off. @defaultValue `systemClock`
   */
  readonly clock?: Clock;
  /** Waits between attempts. @defaultValue the real, abortable {@link sleep} */
  readonly sleep?: Sleep;
  /** Draws in `[0, 1)` for the jitter. @defaultValue `Math.random` */
  readonly random?: Random;
}

/** `wait`, but rejecting with the signal's reason the moment it fires, even if `wait` ignores it. */
function abortable(wait: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return wait;
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    wait.then(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes the sleep's own rejection on
        reject(e);
      },
    );
  });
}

// Handed to an attempt when the caller gave no signal, so `signal` is always there to pass on.
// Its own, made on first read: one signal shared by every call would keep each listener an
// attempt added to it (and never removed) for the life of the process.
class Unsignalled implements RetryContext {
  readonly attempt: number;
  #signal: AbortSignal | undefined = undefined;
  constructor(attempt: number) {
    this.attempt = attempt;
  }
  get signal(): AbortSignal {
    return (this.#signal ??= new AbortController().signal);
  }
}

const KNOWN = [
  "backoff",
  "retryOn",
  "onRetry",
  "signal",
  "deadline",
  "budget",
  "maxRetryAfter",
  "overMaxRetryAfter",
  "clock",
  "sleep",
  "random",
] as const;

/** The default {@link RetryOptions.maxRetryAfter}: a minute, in milliseconds. */
const MINUTE = 60_000;

/** How a bad hint is named: the error's own, the only source `retry` reads. */
const HINT = "retry: the error's retryAfter";

/** What `retry` runs with, read once from its options and checked: its {@link RetryRule} among it. */
interface Plan extends RetryRule {
  readonly backoff: Backoff;
  readonly retryOn: ((error: unknown) => boolean) | undefined;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
  readonly signal: AbortSignal | undefined;
  readonly deadline: Deadline | undefined;
  readonly budget: RetryBudget | undefined;
  readonly clock: Clock;
  readonly sleep: Sleep;
  readonly random: Random;
}

function kind(value: unknown): string {
  return value == null ? String(value) : `${typeof value} ${check.describe(value)}`;
}

/** Reads `retry`'s options once and checks every one, so that nothing odd surfaces mid-loop. */
function plan(options: RetryOptions | undefined): Plan {
  // retry(fn, { retries: 3 }): the count is the backoff's, not retry's own option.
  const count = countHint(options, "retry", "the backoff's attempts", (f) => `retry(fn, { backoff: { ${f} } })`, KNOWN);
  if (count !== undefined) throw count;
  const o = check.options(options, KNOWN, "retry");
  const given = check.or(o.backoff, backoff);
  // Fields are checked by Backoff, its errors named by the path they were given at: `retry backoff.cap …`.
  const policy =
    given instanceof Backoff ? given : check.within("retry backoff", ["Backoff"], () => new Backoff(given));
  const fn = <F extends (...args: never[]) => unknown>(value: unknown, what: string): F | undefined =>
    value === undefined ? undefined : check.fn<F>(value, `retry ${what}`);
  const signal = o.signal;
  if (signal !== undefined && !isSignal(signal)) {
    throw new TypeError(`retry signal must be an AbortSignal, got ${kind(signal)}`);
  }
  const deadline = o.deadline;
  if (
    deadline !== undefined &&
    !(typeof deadline === "object" && deadline !== null && typeof deadline.end === "number")
  ) {
    throw new TypeError(`retry deadline must be a Deadline (Deadline.start(budget, now)), got ${kind(deadline)}`);
  }
  const budget = o.budget;
  if (
    budget !== undefined &&
    !(
      typeof budget === "object" &&
      budget !== null &&
      typeof budget.recordAttempt === "function" &&
      typeof budget.grant === "function" &&
      typeof budget.giveBack === "function"
    )
  ) {
    throw new TypeError(`retry budget must be a RetryBudget, got ${kind(budget)}`);
  }
  const maxRetryAfter = check.or(o.maxRetryAfter, MINUTE);
  if (maxRetryAfter !== Infinity) check.nonNegative(maxRetryAfter, "retry maxRetryAfter (ms)");
  const over = check.or(o.overMaxRetryAfter, "give-up");
  if (over !== "cap" && over !== "give-up")
    throw new TypeError(`retry overMaxRetryAfter must be "cap" or "give-up", got ${kind(over)}`);
  return {
    backoff: policy,
    retryOn: fn(o.retryOn, "retryOn"),
    onRetry: fn(o.onRetry, "onRetry"),
    signal,
    deadline,
    budget,
    maxRetryAfter,
    overMaxRetryAfter: over,
    clock: fn<Clock>(o.clock, "clock") ?? systemClock,
    sleep: fn<Sleep>(o.sleep, "sleep") ?? realSleep,
    random: fn<Random>(o.random, "random") ?? systemRandom,
  };
}

/** Reads the clock, refusing a reading that would quietly switch the deadline or the budget off. */
function read(clock: Clock, cause: unknown): number {
  const now = clock();
  if (typeof now === "number" && now - now === 0) return now;
  const message = `retry clock must return a finite number of milliseconds, got ${kind(now)}`;
  throw typeof now === "number" ? new RangeError(message, { cause }) : new TypeError(message, { cause });
}

/**
 * Calls `fn` until it succeeds, waiting between attempts as the backoff says.
 *
 * It stops, in this order of checks after a failure:
 * 1. the signal fired — rejects with the signal's reason;
 * 2. `retryOn(error)` is false — rejects with that error, unwrapped;
 * 3. the policy's attempts are spent — rejects with a {@link RetryError} (`"exhausted"`);
 * 4. the error's `retryAfter` is over `maxRetryAfter` — {@link RetryError} (`"retryAfter"`), without
 *    sleeping (or, with `overMaxRetryAfter: "cap"`, the wait is held to `maxRetryAfter`);
 * 5. the next wait would reach the deadline — {@link RetryError} (`"deadline"`), without sleeping;
 * 6. the budget refuses the retry — {@link RetryError} (`"budget"`).
 *
 * Steps 3 to 6 are {@link decideRetry}'s, as the guard's are. The wait is the backoff's delay,
 * or the error's `retryAfter` (ms) when longer; one that is not a number of ms rejects, naming
 * it ({@link readHint}). A `decorrelated` jitter grows from the backoff's own previous delay.
 *
 * `fn` and the options are checked before the first attempt (read once, unknown names refused),
 * so a mistake rejects at once with a `TypeError`/`RangeError` naming it instead of being retried.
 *
 * @example
 * const url = "data:text/plain,hello"; // a data: URL, so the example needs no network
 * const body = await retry(({ signal }) => fetch(url, { signal }).then((r) => r.text()), {
 *   backoff: { attempts: 5, jitter: Jitter.full },
 *   retryOn: (e) => !(e instanceof TypeError),
 *   signal: AbortSignal.timeout(10_000),
 * });
 * body; // "hello"
 * @param fn - the call; it gets the attempt number (from 1) and the signal to pass on
 * @returns what `fn` returned on the attempt that succeeded
 */
export async function retry<T>(fn: (context: RetryContext) => T | PromiseLike<T>, options?: RetryOptions): Promise<T> {
  check.fn(fn, "retry fn");
  const rule = plan(options);
  const { backoff: policy, signal, deadline, budget, retryOn, onRetry, clock, sleep, random } = rule;
  const end = deadline === undefined ? Infinity : deadline.end;

  // A call that never makes an attempt earns its budget nothing.
  if (signal?.aborted) throw signal.reason as Error;
  if (budget !== undefined) budget.recordAttempt(read(clock, undefined));
  let previous = policy.base;
  // The budget's grant for the retry about to be made: given back if it is not made after all.
  let receipt = -1;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) {
      budget?.giveBack(receipt);
      throw signal.reason as Error;
    }
    // From here the retry is made: its receipt is spent (the next decision replaces it).
    let error: unknown;
    try {
      return await fn(signal === undefined ? new Unsignalled(attempt) : { attempt, signal });
    } catch (e) {
      error = e;
    }
    if (signal?.aborted) throw signal.reason as Error;
    if (retryOn !== undefined && !retryOn(error)) throw error as Error;
    if (!policy.more(attempt)) throw new RetryError(attempt, "exhausted", error);

    const draw = random();
    const hint = readHint(retryAfterProperty(error), HINT, error);
    const decided = decideRetry(rule, { made: attempt, previous, draw, hint, end, now: () => read(clock, error) });
    if (decided.giveUp !== undefined) throw new RetryError(attempt, decided.giveUp, error);
    previous = decided.delay;
    receipt = decided.receipt;
    const wait = decided.wait;
    try {
      onRetry?.({ attempt, error, delay: wait });
      const slept: unknown = sleep(wait, signal);
      if (typeof (slept as PromiseLike<void> | null | undefined)?.then !== "function")
        throw new TypeError(`retry sleep must return a promise, got ${kind(slept)}`, { cause: error });
      await abortable(slept as Promise<void>, signal);
    } catch (e) {
      budget?.giveBack(receipt); // the retry is not made: its credit is not spent
      throw e;
    }
  }
}
