import { cut, drop, raised, returned } from "./accounting";
import { Context } from "./attempt";
import type { Call } from "./call";
import type { Expiry } from "./expiry";
import type { Resolved } from "./options";
import type { Pass } from "./pass";
import { TimeoutError } from "./refusal";

/** What a flight needs of the guard that runs it. */
export interface Runner<A extends unknown[], R> {
  /** Where flights wait to be cut off. */
  readonly expiry: Expiry;
  /** Calls the guarded function. */
  invoke(ctx: Context, args: A): R | PromiseLike<R>;
  /** The call's answer after its first attempt, or the retries that follow it. */
  decided(call: Call<R>, args: A, p: Pass<R>): R | Promise<R>;
}

/**
 * One attempt in flight when something can cut it off: it ends at the first of its answer, its
 * instant (the attempt's timeout or the call's deadline) and a cancellation, and answers a
 * promise of its {@link Pass} that never rejects. An answer that comes after it ended is handed
 * to `discard`, so nothing is left unconsumed.
 */
export class Flight<A extends unknown[], R> {
  /**
   * How the attempt ended; or, for a flight that `decides` (the first attempt of a call with no
   * caller's scope), the call's own answer: its value, its error, or the retries that follow.
   */
  readonly promise: Promise<Pass<R>>;
  /** The instant it is cut off (ms), `Infinity` for never. */
  readonly at: number;
  done = false;
  /** @internal For {@link Expiry}. */
  slot = -1;
  readonly #runner: Runner<A, R>;
  readonly #o: Resolved<R>;
  readonly #call: Call<R>;
  readonly #pass: Pass<R>;
  readonly #ctx: Context;
  readonly #scope: "attempt" | "deadline";
  /** The caller's arguments when the flight decides, for the retries; else undefined. */
  readonly #args: A | undefined;
  #resolve!: (p: Pass<R> | R | Promise<R>) => void;
  #reject!: (error: unknown) => void;

  constructor(
    runner: Runner<A, R>,
    o: Resolved<R>,
    call: Call<R>,
    pass: Pass<R>,
    args: A,
    hedge: boolean,
    decides = false,
  ) {
    this.#runner = runner;
    this.#o = o;
    this.#call = call;
    this.#pass = pass;
    const cutAt = pass.at + o.timeout;
    this.at = cutAt < call.end ? cutAt : call.end;
    this.#scope = this.at === cutAt ? "attempt" : "deadline";
    const ctx = new Context(++call.attempts, hedge, call.signal);
    this.#ctx = ctx;
    this.#args = decides ? args : undefined;
    this.promise = new Promise<Pass<R>>((resolve, reject) => {
      this.#resolve = resolve as (p: Pass<R> | R | Promise<R>) => void;
      this.#reject = reject;
    });
    call.flights?.add(this);
    if (this.at < Infinity) {
      try {
        runner.expiry.add(this);
      } catch (e) {
        // Timers that cannot set one: the attempt never starts, and the call ends with why.
        this.#close();
        this.#finish(cut(o, pass, ctx.attempt, { outcome: "cancelled", error: e, final: true, end: pass.at }));
        return;
      }
    }
    let answer: R | PromiseLike<R>;
    try {
      answer = runner.invoke(ctx, args);
    } catch (e) {
      this.#raised(e);
      return;
    }
    Promise.resolve(answer).then(
      (v) => this.#returned(v),
      (e: unknown) => this.#raised(e),
    );
  }

  /** @internal For {@link Expiry}: its instant has come. */
  expire(now: number): void {
    if (this.done) return;
    const error = new TimeoutError(this.#scope, now - this.#pass.at);
    this.#ctx.abort(error);
    this.#close();
    this.#finish(
      cut(this.#o, this.#pass, this.#ctx.attempt, {
        outcome: "timeout",
        error,
        final: this.#scope === "deadline",
        end: now,
      }),
    );
  }

  /** Ends the attempt as cancelled (the caller gave up, or another attempt won). */
  cancel(reason: unknown): void {
    if (this.done) return;
    this.#ctx.abort(reason);
    this.#close();
    this.#finish(cut(this.#o, this.#pass, this.#ctx.attempt, { outcome: "cancelled", error: reason, final: true }));
  }

  #returned(value: R): void {
    // An answer after the attempt ended (cut off, or a hedge that lost): nobody gets it.
    if (this.done) return drop(this.#o, false, value);
    this.#close();
    this.#finish(returned(this.#o, this.#pass, this.#ctx.attempt, value));
  }

  #raised(error: unknown): void {
    if (this.done) return;
    this.#close();
    this.#finish(raised(this.#o, this.#pass, this.#ctx.attempt, error));
  }

  // Done before it is accounted, so that a listener that cancels it meanwhile finds it ended.
  #close(): void {
    this.done = true;
    if (this.at < Infinity) this.#runner.expiry.remove(this);
    this.#call.flights?.delete(this);
  }

  #finish(p: Pass<R>): void {
    const args = this.#args;
    if (args === undefined) {
      this.#resolve(p);
      return;
    }
    // A flight that decides answers the call itself: one promise less between it and the caller.
    try {
      this.#resolve(this.#runner.decided(this.#call, args, p));
    } catch (e) {
      this.#reject(e);
    }
  }
}
