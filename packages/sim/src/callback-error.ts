import { check } from "@tideward/time/internal";

/**
 * A function handed to the simulator threw, or answered outside its contract (a latency of NaN,
 * a key past the traffic's keys, a failure share above 1), and the run stopped there.
 *
 * The run holds no timers, promises or shared state, so stopping leaks nothing: the next run
 * starts clean. The thrown value, if one was thrown, is the error's `cause`.
 */
export class CallbackError extends Error {
  /** Brand, so the check survives two copies of the package in one bundle. */
  readonly isCallbackError = true;
  /** Which function: `"policy breaker admit"`, `"traffic"`, `"backend latency sample"`. */
  readonly callback: string;
  /** When, on the run's clock (ms); `NaN` when the run had not started (a policy's `create`). */
  readonly time: number;
  /** When, in milliseconds after the run's start; `NaN` when the run had not started. */
  readonly offset: number;
  /** The run's seed. */
  readonly seed: number;

  /**
   * @param callback - which function, in words
   * @param detail - what went wrong: the thrown error's message, or what it answered
   */
  constructor(callback: string, detail: string, time: number, offset: number, seed: number, cause?: unknown) {
    const when = Number.isNaN(offset) ? "before the run started" : `at ${offset} ms after the start`;
    super(
      `simulate: ${callback} failed ${when} (seed ${seed}): ${detail}`,
      cause === undefined ? undefined : { cause },
    );
    this.name = "CallbackError";
    this.callback = callback;
    this.time = time;
    this.offset = offset;
    this.seed = seed;
  }
}

/** Whether `error` is a {@link CallbackError}, from this copy of the package or another. */
export function isCallbackError(error: unknown): error is CallbackError {
  return (
    typeof error === "object" && error !== null && (error as { isCallbackError?: unknown }).isCallbackError === true
  );
}

/**
 * Thrown by the simulator's own wrappers of functions handed in (a merged traffic's parts) to
 * name the one that threw or answered garbage: the run turns it into a {@link CallbackError}
 * whose `callback` is this one's, where it would otherwise name only what the run was doing.
 * @internal
 */
export class Blame extends Error {
  readonly callback: string;

  constructor(callback: string, detail: string, cause?: unknown) {
    super(detail, cause === undefined ? undefined : { cause });
    this.name = "Blame";
    this.callback = callback;
  }

  /** What a callback named `callback` threw, as a Blame (one already made passes on as it is). */
  static of(callback: string, thrown: unknown): Blame {
    if (thrown instanceof Blame) return thrown;
    return new Blame(callback, thrown instanceof Error ? thrown.message : `threw ${check.describe(thrown)}`, thrown);
  }
}
