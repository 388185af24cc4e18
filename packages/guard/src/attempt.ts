/**
 * What each attempt of a guarded call is handed, as the first argument of the guarded function.
 *
 * `signal` fires when the caller's signal fires, when the call's deadline or the attempt's
 * timeout passes, or when another attempt wins a hedge: pass it to whatever the attempt calls
 * (`fetch(url, { signal })`). Reading it is what creates it, so an attempt that never reads it
 * costs no `AbortController`.
 */
export interface Attempt {
  /** Which attempt of the call this is, the first being 1; hedges and retries count alike. */
  readonly attempt: number;
  /** Whether this attempt is a hedge, started while an earlier one was still in flight. */
  readonly hedge: boolean;
  /** One signal for the caller's signal, the deadline, the attempt's timeout and a lost hedge. */
  readonly signal: AbortSignal;
}

const UNSET: unique symbol = Symbol("unset");

/**
 * The guard's own {@link Attempt}: the signal is made on first read (one for each attempt, so
 * what is hung on it goes with the attempt), and an abort asked for before then is kept and
 * applied when it is made.
 */
export class Context implements Attempt {
  readonly attempt: number;
  readonly hedge: boolean;
  #controller: AbortController | undefined = undefined;
  #reason: unknown = UNSET;
  // The caller's signal, or undefined.
  readonly #caller: AbortSignal | undefined;

  constructor(attempt: number, hedge: boolean, caller?: AbortSignal) {
    this.attempt = attempt;
    this.hedge = hedge;
    this.#caller = caller;
  }

  get signal(): AbortSignal {
    if (this.#controller !== undefined) return this.#controller.signal;
    const controller = new AbortController();
    this.#controller = controller;
    if (this.#reason !== UNSET) controller.abort(this.#reason);
    else if (this.#caller?.aborted === true) controller.abort(this.#caller.reason);
    return controller.signal;
  }

  /** Fires the signal with `reason` (now if it exists, else when it is first read). Once only. */
  abort(reason: unknown): void {
    if (this.#controller !== undefined) this.#controller.abort(reason);
    else if (this.#reason === UNSET) this.#reason = reason;
  }
}
