import type { Resolved } from "./options";

/** The state one call shares across its attempts and waits. */
export class Call<R> {
  /** Attempts started so far (hedges included). */
  attempts = 0;
  /** The backoff's last delay (ms), for a decorrelated jitter; NaN before the first. */
  previous = Number.NaN;
  /** The budget's receipt for the retry planned and not yet admitted; -1 for none. */
  granted = -1;
  readonly start: number;
  /** The instant the call must end by (ms), `Infinity` for none. */
  readonly end: number;
  readonly signal: AbortSignal | undefined;
  /** Whether anything can cut an attempt off: its attempts then run as flights. */
  readonly abortable: boolean;
  /** Flights in progress, cancelled when the caller's signal fires (kept only with a signal). */
  readonly flights: Set<{ cancel(reason: unknown): void }> | undefined;
  #wake: ((reason: unknown) => void) | undefined = undefined;
  #timer: unknown = undefined;

  constructor(start: number, end: number, signal: AbortSignal | undefined, abortable: boolean) {
    this.start = start;
    this.end = end;
    this.signal = signal;
    this.abortable = abortable;
    this.flights = signal === undefined ? undefined : new Set();
  }

  /** The caller gave up: every attempt in flight and the wait in progress end at once. */
  abort(reason: unknown): void {
    if (this.flights !== undefined) for (const f of [...this.flights]) f.cancel(reason);
    this.#wake?.(reason);
  }

  /** Waits `ms` milliseconds on the guard's timers, or rejects when the caller gives up. */
  sleep(o: Resolved<R>, ms: number): Promise<void> {
    if (this.signal?.aborted === true) return Promise.reject(this.signal.reason as Error);
    return new Promise<void>((resolve, reject) => {
      this.#wake = (reason) => {
        o.timers.clear(this.#timer);
        this.#timer = undefined;
        this.#wake = undefined;
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the caller's own abort reason, passed on as it is
        reject(reason);
      };
      // Set last: a `set` that throws rejects the wait, and leaves no timer to clear.
      this.#timer = o.timers.set(() => {
        this.#timer = undefined;
        this.#wake = undefined;
        resolve();
      }, ms);
    });
  }

  /** Gives the budget back the credit of a retry that will not be made. */
  giveBack(o: Resolved<R>): void {
    if (this.granted >= 0) o.budget?.giveBack(this.granted);
    this.granted = -1;
  }

  /** Clears what the call may still hold: a wait's timer, a retry's credit. */
  close(o: Resolved<R>): void {
    this.giveBack(o);
    if (this.#timer !== undefined) o.timers.clear(this.#timer);
    this.#timer = undefined;
    this.#wake = undefined;
  }
}
