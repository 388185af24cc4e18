// The paths a guarded call takes. There is one general path (`#full`: the caller's scope, waits
// for a token, retries, hedges) and one direct path for calls with no scope, no hedge and no
// wait, which runs the first attempt on a promise chain and hands a call that is to be retried
// on to `#full`. Both are the same pieces — one admission (`admit`), one accounting (`answered`,
// `cut`), one retry decision (`again`, `plan`) — called in a shorter or a longer order.
import { check } from "@tideward/time/internal";
import { answerOf, drop, raised, returned } from "./accounting";
import { admit, enter, refusalOf } from "./admission";
import { Context } from "./attempt";
import type { Attempt } from "./attempt";
import { Call } from "./call";
import { Expiry } from "./expiry";
import { Flight } from "./flight";
import type { Runner } from "./flight";
import { hedged } from "./hedge";
import type { Resolved } from "./options";
import { Pass } from "./pass";
import { again, plan } from "./retry";

/** What a caller may hand one call, through {@link Guarded.run}. */
export interface CallScope {
  /** The caller's signal: when it fires, the call rejects with its reason at once. */
  readonly signal?: AbortSignal;
  /**
   * An instant on the guard's clock (milliseconds) the call must end by, such as a deadline
   * propagated from an incoming request; the earlier of it and the guard's own `deadline` holds.
   */
  readonly deadline?: number;
}

/**
 * A guarded function: the parameters of the function given to {@link guard} after its
 * {@link Attempt}, answering a promise of what it returns.
 */
export interface Guarded<A extends unknown[], R> {
  (...args: A): Promise<R>;
  /** The same call, with the caller's signal and deadline. */
  run(scope: CallScope, ...args: A): Promise<R>;
}

// A rejection with what was thrown, passed on as it is: the function's own error, or a listener's.
function rejected<T>(reason: unknown): Promise<T> {
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- not ours to wrap
  return Promise.reject(reason);
}

// A function, not an inline test, so that a check after an await is not narrowed away.
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

// Calls `fn` with `first` and then `args`: directly for up to three arguments, where a spread
// call goes through V8's slower generic path on every call.
function apply<A extends unknown[], F, R>(fn: (first: F, ...args: A) => R, first: F, args: A): R {
  const f = fn as unknown as (first: F, ...rest: unknown[]) => R;
  switch (args.length) {
    case 0:
      return f(first);
    case 1:
      return f(first, args[0]);
    case 2:
      return f(first, args[0], args[1]);
    case 3:
      return f(first, args[0], args[1], args[2]);
    default:
      return f(first, ...args);
  }
}

/** A call's priority from its arguments, by the guard's `priority` function. */
function priorityOf(
  f: (...args: never[]) => number | string | undefined,
  args: unknown[],
): number | string | undefined {
  return Reflect.apply(f, undefined, args) as number | string | undefined;
}

const SCOPE = ["signal", "deadline"] as const;

/** A caller's scope read once and checked: a bad one rejects the call, naming the field. */
function readScope<R>(scope: CallScope, o: Resolved<R>): { signal: AbortSignal | undefined; deadline: number } {
  const owner = o.owner;
  const s = check.options(scope, SCOPE, `${owner} run`, "scope");
  const signal = s.signal as unknown;
  if (
    signal !== undefined &&
    !(
      typeof signal === "object" &&
      signal !== null &&
      typeof (signal as AbortSignal).aborted === "boolean" &&
      typeof (signal as AbortSignal).addEventListener === "function"
    )
  )
    throw new TypeError(`${o.signalName} must be an AbortSignal, got ${check.describe(signal)}`);
  const given = s.deadline as unknown;
  const deadline =
    given === undefined || given === Infinity
      ? Infinity
      : check.finite(given, `${owner} run deadline (an instant on the guard's clock, ms)`);
  return { signal: signal as AbortSignal | undefined, deadline };
}

/** One guard's state and its paths; `guardWith` hands out closures over it. */
export class Core<A extends unknown[], R> implements Runner<A, R> {
  readonly #fn: (attempt: Attempt, ...args: A) => R | PromiseLike<R>;
  readonly #o: Resolved<R>;
  // One attempt, no timer, no wait and no budget: the direct path needs no Call.
  readonly #simple: boolean;
  // No hedge and no wait for a token: the direct path.
  readonly #direct: boolean;
  /** @internal For {@link Flight}: when attempts are cut off. */
  readonly expiry: Expiry;

  constructor(fn: (attempt: Attempt, ...args: A) => R | PromiseLike<R>, o: Resolved<R>) {
    this.#fn = fn;
    this.#o = o;
    this.expiry = new Expiry(o.timers, o.clock);
    this.#direct = o.hedgeMax === 0 && o.waits === undefined;
    // A budget given to a guard that never retries still counts its first attempts: what another
    // guard sharing it may spend on retries.
    this.#simple =
      this.#direct && o.deadline === Infinity && o.timeout === Infinity && o.attempts === 1 && o.budget === undefined;
  }

  call(scope: CallScope | undefined, args: A): Promise<R> {
    if (scope === undefined && this.#direct) return this.#first(args);
    return this.#full(scope, args, undefined, undefined);
  }

  /** @internal For {@link Flight}: calls the guarded function. */
  invoke(ctx: Context, args: A): R | PromiseLike<R> {
    return apply(this.#fn, ctx, args);
  }

  /**
   * The direct path: admitted or refused at once, the first attempt on a promise chain (not an
   * async function: no frame is kept across the wait, and the answer's promise is the one the
   * caller gets), or as a flight that answers the call itself when it can be cut off. A call
   * that nothing can cut off gets its {@link Call} only if it is to be retried.
   */
  #first(args: A): Promise<R> {
    const o = this.#o;
    const pass = new Pass<R>();
    try {
      // Asked before anything is taken: what it throws rejects the call, holding nothing.
      if (o.priorityOf !== undefined) pass.priority = priorityOf(o.priorityOf, args);
      const start = o.clock();
      if (this.#simple) {
        if (!admit(o, start, pass, Infinity, 1)) return rejected(refusalOf(pass));
      } else {
        const end = start + o.deadline;
        // A fresh call's first attempt: once admitted, it earns the retry budget its retries.
        pass.first = true;
        if (!admit(o, start, pass, end, 1)) return rejected(refusalOf(pass));
        if (end < Infinity || o.timeout < Infinity) {
          const call = new Call<R>(start, end, undefined, true);
          return new Flight<A, R>(this, o, call, pass, args, false, true).promise as unknown as Promise<R>;
        }
      }
    } catch (e) {
      return rejected(e);
    }
    let answer: R | PromiseLike<R>;
    try {
      answer = apply(this.#fn, new Context(1, false), args);
    } catch (e) {
      answer = rejected(e); // settled below, as a rejection would be
    }
    return this.#simple ? this.#only(answer, pass) : this.#then(answer, pass, args);
  }

  /** The only attempt's answer, once it comes: its value, or its error thrown. */
  #only(answer: R | PromiseLike<R>, pass: Pass<R>): Promise<R> {
    const o = this.#o;
    return Promise.resolve(answer).then(
      (value) => answerOf(returned(o, pass, 1, value)),
      (error: unknown) => answerOf(raised(o, pass, 1, error)),
    );
  }

  /** The first attempt's answer, or the retries that follow it. */
  #then(answer: R | PromiseLike<R>, pass: Pass<R>, args: A): Promise<R> {
    return Promise.resolve(answer).then(
      (value) => this.#ended(returned(this.#o, pass, 1, value), args),
      (error: unknown) => this.#ended(raised(this.#o, pass, 1, error), args),
    );
  }

  #ended(pass: Pass<R>, args: A): R | Promise<R> {
    const o = this.#o;
    if (!again(o, pass, 1)) return answerOf(pass);
    const call = new Call<R>(pass.at, Infinity, undefined, false);
    call.attempts = 1;
    return this.#full(undefined, args, call, pass);
  }

  /**
   * @internal For the direct path and a {@link Flight} that decides: the call's answer after its
   * first attempt — its value, its error thrown — or the retries that follow it in `#full`.
   */
  decided(call: Call<R>, args: A, p: Pass<R>): R | Promise<R> {
    if (!again(this.#o, p, 1)) return answerOf(p);
    return this.#full(undefined, args, call, p);
  }

  /**
   * The general path: the caller's scope, waits for a token, retries and hedges; or, with `call`
   * and `first`, the retries of a call whose first attempt the direct path made.
   */
  async #full(
    scope: CallScope | undefined,
    args: A,
    resumed: Call<R> | undefined,
    first: Pass<R> | undefined,
  ): Promise<R> {
    const o = this.#o;
    let call: Call<R>;
    let signal: AbortSignal | undefined;
    let onAbort: (() => void) | undefined;
    // The call's priority, kept by its every attempt: asked before anything is taken.
    let priority = first?.priority;
    if (resumed === undefined) {
      const given = scope === undefined ? undefined : readScope(scope, o);
      signal = given?.signal;
      if (signal?.aborted === true) throw signal.reason;
      if (o.priorityOf !== undefined) priority = priorityOf(o.priorityOf, args);
      const start = o.clock();
      let end = start + o.deadline;
      if (given !== undefined && given.deadline < end) end = given.deadline;
      const made = new Call<R>(
        start,
        end,
        signal,
        end < Infinity || o.timeout < Infinity || signal !== undefined || o.hedgeMax > 0,
      );
      call = made;
      if (signal !== undefined) {
        const s = signal;
        onAbort = () => made.abort(s.reason);
        s.addEventListener("abort", onAbort, { once: true });
      }
    } else call = resumed;
    const waits = o.waits !== undefined;
    // The attempt just made; the answer the caller gets if the call ends before another attempt
    // is admitted (a refused retry ends the call with it); and the one handed to the caller.
    let p = first;
    let kept: Pass<R> | undefined;
    let given: Pass<R> | undefined;
    try {
      for (let round = 1; ; round++) {
        if (p === undefined) {
          if (aborted(signal)) throw signal?.reason;
          const pass = new Pass<R>();
          pass.priority = priority;
          // A fresh call's first attempt, once admitted, earns the retry budget its retries (a
          // call refused before it reached the backend earns nothing).
          pass.first = round === 1 && resumed === undefined;
          const admitted = waits ? await enter(o, call, pass) : admit(o, o.clock(), pass, call.end, call.attempts + 1);
          if (!admitted) {
            // A refused first attempt has nothing else to say.
            if (kept === undefined) throw refusalOf(pass);
            given = kept;
            return answerOf(kept);
          }
          // From here on this attempt answers the call, not the one before it; its credit is spent.
          call.granted = -1;
          if (kept !== undefined) drop(o, kept.threw, kept.result);
          kept = undefined;
          if (o.hedgeMax > 0) p = await hedged(this, o, call, pass, args);
          else if (call.abortable) p = await new Flight<A, R>(this, o, call, pass, args, false).promise;
          else p = await this.#plain(call, pass, args);
          if (!again(o, p, round)) {
            given = p;
            return answerOf(p);
          }
        }
        const wait = plan(o, call, p, round);
        if (wait < 0) {
          given = p;
          return answerOf(p);
        }
        kept = p;
        p = undefined;
        if (wait > 0) await call.sleep(o, wait);
      }
    } finally {
      call.close(o);
      if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
      // The caller gave up, or a callback threw: the answer kept for it is nobody's.
      if (kept !== undefined && kept !== given) drop(o, kept.threw, kept.result);
    }
  }

  /** An attempt nothing can cut off (no deadline, timeout, hedge or signal): no flight needed. */
  #plain(call: Call<R>, pass: Pass<R>, args: A): Promise<Pass<R>> {
    const o = this.#o;
    const number = ++call.attempts;
    let answer: R | PromiseLike<R>;
    try {
      answer = apply(this.#fn, new Context(number, false), args);
    } catch (e) {
      answer = rejected(e);
    }
    return Promise.resolve(answer).then(
      (value) => returned(o, pass, number, value),
      (error: unknown) => raised(o, pass, number, error),
    );
  }
}
