import { check } from "@tideward/time/internal";
import { passThrough } from "./memory";

/** How far a scenario's run has come: calls offered so far over all its runs, against the estimate. */
export interface Progress {
  /** Calls offered so far, over every run the scenario has made. */
  readonly done: number;
  /** The calls its knobs were estimated to offer before it started (see `Scenario.work`), or `null` without an estimate; `done` may pass it. */
  readonly total: number | null;
}

/** Calls a run offers between two looks at its watch. */
export const TICK = 16_384;

/**
 * What a scenario's run reports to, and is stopped by: `onProgress` hears every {@link TICK}
 * calls offered and once each run ends; `signal` is read at the same moments, and an abort
 * stops the run there with the signal's reason.
 *
 * A run is synchronous: a signal aborted by another task cannot be seen until it returns. Abort
 * from `onProgress` (it may read a flag another thread sets through shared memory), or end the
 * worker the run is in.
 */
export class Watch {
  done = 0;
  readonly total: number | null;
  readonly #onProgress: ((p: Progress) => void) | undefined;
  readonly #signal: AbortSignal | undefined;

  constructor(total: number | null, onProgress: unknown, signal: unknown, what: string) {
    this.total = total;
    this.#onProgress =
      onProgress === undefined ? undefined : check.fn<(p: Progress) => void>(onProgress, `${what} onProgress`);
    if (
      signal !== undefined &&
      (signal === null || typeof signal !== "object" || typeof (signal as AbortSignal).throwIfAborted !== "function")
    )
      throw new TypeError(`${what} signal must be an AbortSignal, got ${check.describe(signal)}`);
    this.#signal = signal as AbortSignal | undefined;
  }

  /** `calls` more were offered: tells the listener, then stops the run if the signal is aborted. */
  add(calls: number): void {
    this.done += calls;
    try {
      this.#onProgress?.({ done: this.done, total: this.total });
      this.#signal?.throwIfAborted();
    } catch (e) {
      throw passThrough(e);
    }
  }
}

// The watch of the scenario running now. Runs are synchronous, so one is running at a time on a
// thread (a scenario run inside another's keeps the outer one's and restores it after): the
// simulate calls a scenario's body makes find it here, with no option to thread through each.
let current: Watch | undefined;

/** `body()` with `watch` as the current watch. */
export function watching<T>(watch: Watch, body: () => T): T {
  const outer = current;
  current = watch;
  try {
    return body();
  } finally {
    current = outer;
  }
}

/** The watch of the scenario running now, if any. */
export function currentWatch(): Watch | undefined {
  return current;
}
