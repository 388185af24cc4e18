import type { Permit } from "@tideward/breaker";
import type { Ticket } from "@tideward/shedder";
import { check } from "@tideward/time/internal";
import { Context, NEVER, ONLY } from "./attempt";
import type { Attempt } from "./attempt";
import type { Outcome } from "./events";
import { resolveGuard } from "./options";
import type { GuardOptions, Resolved } from "./options";
import { Refusal, TimeoutError, isRefusal } from "./refusal";
import type { RefusalKind } from "./refusal";

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

/** How one attempt ended, with what it answered. */
interface Settled<R> {
  readonly outcome: Outcome;
  readonly threw: boolean;
  readonly error: unknown;
  readonly result: R | undefined;
  /** No further attempt may follow: the deadline passed, or the caller gave up. */
  readonly final: boolean;
}

/** What an admitted attempt holds and must give back when it ends. */
class Pass {
  permit: Permit | undefined = undefined;
  ticket: Ticket | undefined = undefined;
  gated = false;
  /** On a refusal: which policy, and when it could admit (ms). */
  kind: RefusalKind | undefined = undefined;
  retryAfter = 0;
  /** When it was admitted (ms): the attempt's start. */
  at = 0;
}

// A function, not an inline test, so that a check after an await is not narrowed away.
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

// A rejection with what was thrown, passed on as it is: the function's own error, or a listener's.
function rejected<T>(reason: unknown): Promise<T> {
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- not ours to wrap
  return Promise.reject(reason);
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

// Why a hedge that lost was aborted: the reason its signal carries.
function superseded(): Error {
  return new DOMException("another attempt answered first", "AbortError");
}

/**
 * Wraps `fn` so that every call goes through the guard's policies, in a fixed order: the
 * deadline; for each attempt the bucket (waiting up to `maxWait` for a token), the gate, the
 * shedder and the breaker; the attempt itself under one `AbortSignal` (caller, deadline,
 * per-attempt timeout); then the outcome recorded, and a retry or a hedge where the policy, the
 * retry budget and the deadline allow. Every policy is optional.
 *
 * `fn` gets an {@link Attempt} (`{ attempt, hedge, signal }`) before the caller's arguments.
 * The guard answers with the last attempt's own outcome (its value, or its error), and throws a
 * {@link Refusal} only when no attempt reached the backend: a refused retry or hedge ends the
 * call with the answer the backend last gave.
 *
 * Nothing keeps a timer while idle: a timer exists only while a call that has a deadline, a
 * timeout, a hedge or a wait is in progress.
 *
 * @example
 * // A data: URL stands in for https://api.example, so the example runs offline.
 * const api = (path: string, signal: AbortSignal) => fetch(`data:application/json,{"path":"${path}"}`, { signal });
 * const getUser = guard(
 *   ({ signal }, id: string) => api(`/users/${id}`, signal).then((r) => r.json()),
 *   { breaker: {}, bucket: { rate: 50 }, timeout: 2_000, deadline: 5_000, retry: { attempts: 3 } },
 * );
 * await getUser("42"); // { path: "/users/42" }
 * @param fn - the call: an {@link Attempt}, then the caller's arguments
 * @param options - the policies, see {@link GuardOptions}
 * @throws TypeError/RangeError at once for a bad option, naming it and the value
 */
export function guard<A extends unknown[], R>(
  fn: (attempt: Attempt, ...args: A) => R | PromiseLike<R>,
  options?: GuardOptions<R>,
): Guarded<A, R> {
  if (typeof fn !== "function")
    throw new TypeError(`guard expects a function to guard, got ${typeof fn} ${check.describe(fn)}`);
  return guardWith(fn, resolveGuard(options));
}

/** One guard's state and logic; `guard` hands out closures over it. */
class Core<A extends unknown[], R> {
  readonly #fn: (attempt: Attempt, ...args: A) => R | PromiseLike<R>;
  readonly #o: Resolved<R>;
  // One attempt, no timer, no wait: the path that allocates least (see `#once`).
  readonly #simple: boolean;
  // No hedge and no wait for a token: see `#first`.
  readonly #direct: boolean;
  /** @internal For {@link Flight}: when attempts are cut off. */
  readonly expiry: Expiry;

  constructor(fn: (attempt: Attempt, ...args: A) => R | PromiseLike<R>, o: Resolved<R>) {
    this.#fn = fn;
    this.#o = o;
    this.expiry = new Expiry(o.timers, o.clock);
    // A budget given to a guard that never retries still counts its first attempts: what another
    // guard sharing it may spend on retries.
    this.#direct = o.hedgeMax === 0 && !(o.bucket !== undefined && o.maxWait > 0);
    this.#simple =
      this.#direct && o.deadline === Infinity && o.timeout === Infinity && o.attempts === 1 && o.budget === undefined;
  }

  call(scope: CallScope | undefined, args: A): Promise<R> {
    if (scope === undefined) {
      if (this.#simple) return this.#once(args);
      if (this.#direct) return this.#first(args);
    }
    return this.#full(scope, args, undefined);
  }

  /**
   * The commonest guard: a single attempt nothing can abort, admitted or refused at once. A
   * promise chain, not an async function: no function frame is kept across the wait, and the
   * answer's promise is the one the caller gets.
   */
  #once(args: A): Promise<R> {
    const o = this.#o;
    let now: number;
    let permit: Permit | undefined;
    let ticket: Ticket | undefined;
    let answer: R | PromiseLike<R>;
    const bucket = o.bucket;
    const gate = o.gate;
    try {
      now = o.clock();
      if (bucket !== undefined && !bucket.peek(now)) return Promise.reject(this.#refuse("rate", bucket.next(now), 1));
      if (gate !== undefined && !gate.peek()) return Promise.reject(this.#refuse("gate", 0, 1));
      if (o.shedder !== undefined) {
        ticket = o.shedder.allow(now, o.load());
        if (ticket === undefined) return Promise.reject(this.#refuse("shed", 0, 1));
      }
      if (o.breaker !== undefined) {
        permit = o.breaker.allow(now, o.random);
        if (permit === undefined) {
          ticket?.fail();
          ticket = undefined;
          return Promise.reject(this.#refuse("breaker", 0, 1));
        }
      }
    } catch (e) {
      // A clock, a load or a random source that throws: nothing was taken that is not given back.
      ticket?.fail();
      return rejected(e);
    }
    if (gate !== undefined) gate.enter();
    if (bucket !== undefined) bucket.take(now);
    try {
      answer = apply(this.#fn, ONLY, args);
    } catch (e) {
      answer = rejected(e); // settled below, as a rejection would be
    }
    return Promise.resolve(answer).then(
      (value) => this.#onceEnded(false, undefined, value, permit, ticket, now) as R,
      (error: unknown) => {
        throw this.#onceEnded(true, error, undefined, permit, ticket, now);
      },
    );
  }

  /** Settles what the only attempt held and reports it; answers the value, or the error to throw. */
  #onceEnded(
    threw: boolean,
    error: unknown,
    value: R | undefined,
    permit: Permit | undefined,
    ticket: Ticket | undefined,
    start: number,
  ): unknown {
    const o = this.#o;
    const end = o.clock();
    const outcome = threw || o.isFailure !== undefined ? this.#classify(threw, error, value) : "success";
    this.#account(permit, ticket, o.gate !== undefined, outcome, end);
    if (o.onOutcome !== undefined)
      o.onOutcome({ outcome, attempt: 1, hedge: false, duration: end - start, error, result: value });
    return threw ? error : value;
  }

  /**
   * A call with no caller's scope, no hedge and no wait for a token, that may retry or be cut
   * off (a deadline, a timeout): its first attempt runs on a promise chain, as in `#once`, and
   * only a call that is to be retried goes on in `#full`'s loop.
   */
  #first(args: A): Promise<R> {
    const o = this.#o;
    let call: Call<R>;
    let pass: Pass;
    try {
      const start = o.clock();
      const end = start + o.deadline;
      if (!(start < end)) return rejected(this.#refuse("deadline", 0, 1));
      call = new Call<R>(start, end, undefined, end < Infinity || o.timeout < Infinity);
      o.budget?.recordAttempt(start);
      pass = new Pass();
      if (!this.#admit(start, pass, false, call))
        return rejected(new Refusal(pass.kind ?? "deadline", pass.retryAfter));
      // The flight answers the call itself (it `decides`): its promise is the call's.
      if (call.abortable)
        return new Flight<A, R>(this, o, call, pass, args, false, true).promise as unknown as Promise<R>;
    } catch (e) {
      return rejected(e);
    }
    call.attempts = 1;
    let answer: R | PromiseLike<R>;
    try {
      answer = apply(this.#fn, ONLY, args);
    } catch (e) {
      answer = rejected(e);
    }
    return Promise.resolve(answer).then(
      (value) => this.#firstEnded(call, pass, args, false, undefined, value),
      (error: unknown) => this.#firstEnded(call, pass, args, true, error, undefined),
    );
  }

  /** Settles `#first`'s attempt when nothing could cut it off; answers it, or goes on to retry. */
  #firstEnded(
    call: Call<R>,
    pass: Pass,
    args: A,
    threw: boolean,
    error: unknown,
    result: R | undefined,
  ): R | Promise<R> {
    const o = this.#o;
    const t = o.clock();
    const outcome = this.#classify(threw, error, result);
    this.#account(pass.permit, pass.ticket, pass.gated, outcome, t);
    if (o.onOutcome !== undefined)
      o.onOutcome({ outcome, attempt: 1, hedge: false, duration: t - pass.at, error, result });
    return this.decided(call, args, outcome, threw, error, result, false);
  }

  /**
   * @internal For `#first` and a {@link Flight} that decides: the call's answer after its first
   * attempt — its value, its error thrown — or the retries that follow it in `#full`.
   */
  decided(
    call: Call<R>,
    args: A,
    outcome: Outcome,
    threw: boolean,
    error: unknown,
    result: R | undefined,
    final: boolean,
  ): R | Promise<R> {
    if (outcome === "refused" || final || this.#o.attempts <= 1 || !this.#retryable(outcome, error, result)) {
      if (threw) throw error;
      return result as R;
    }
    return this.#full(undefined, args, { call, settled: { outcome, threw, error, result, final } });
  }

  /** Whether an answer is worth another attempt (the policy's attempts and budget aside). */
  #retryable(outcome: Outcome, error: unknown, result: R | undefined): boolean {
    const retryOn = this.#o.retryOn;
    return retryOn === undefined ? outcome === "failure" || outcome === "timeout" : retryOn(error, result);
  }

  /**
   * Every other call: deadline, waits, retries, hedges and the caller's signal; or, with
   * `resume`, the retries of a call whose first attempt `#first` made.
   */
  async #full(
    scope: CallScope | undefined,
    args: A,
    resume: { readonly call: Call<R>; readonly settled: Settled<R> } | undefined,
  ): Promise<R> {
    const o = this.#o;
    const signal = scope?.signal;
    let call: Call<R>;
    let s: Settled<R> | undefined;
    let onAbort: (() => void) | undefined;
    if (resume === undefined) {
      if (signal?.aborted === true) throw signal.reason;
      const start = o.clock();
      let end = start + o.deadline;
      const given = scope?.deadline;
      if (given !== undefined && given < end) end = given;
      if (!(start < end)) throw this.#refuse("deadline", 0, 1);
      const made = new Call<R>(
        start,
        end,
        signal,
        end < Infinity || o.timeout < Infinity || signal !== undefined || o.hedgeMax > 0,
      );
      call = made;
      onAbort = signal === undefined ? undefined : () => made.abort(signal.reason);
      if (onAbort !== undefined) signal?.addEventListener("abort", onAbort, { once: true });
    } else {
      call = resume.call;
      s = resume.settled;
    }
    const waits = o.bucket !== undefined && o.maxWait > 0;
    try {
      if (resume === undefined) o.budget?.recordAttempt(call.start);
      let previous = o.backoff?.base ?? 0;
      let last: Settled<R> | undefined;
      for (let round = 1; ; round++) {
        // A resumed call arrives with its first attempt made.
        if (s === undefined) {
          if (aborted(signal)) throw signal?.reason;
          const pass = new Pass();
          const admitted = waits ? await this.#enter(call, pass) : this.#admit(o.clock(), pass, false, call);
          if (!admitted) {
            // A refused retry ends the call with what the backend last said; a refused first
            // attempt has nothing else to say.
            if (last === undefined) throw new Refusal(pass.kind ?? "deadline", pass.retryAfter);
            return this.#answer(last);
          }
          if (o.hedgeMax > 0) s = await this.#hedged(call, pass, args);
          else if (call.abortable) s = await new Flight<A, R>(this, o, call, pass, args, false).promise;
          else {
            // Nothing can cut this attempt off: run it here, without a flight.
            const number = ++call.attempts;
            let threw = false;
            let error: unknown;
            let result: R | undefined;
            try {
              result = await apply(
                this.#fn,
                number === 1 ? ONLY : { attempt: number, hedge: false, signal: NEVER },
                args,
              );
            } catch (e) {
              threw = true;
              error = e;
            }
            const t = o.clock();
            const outcome = this.#classify(threw, error, result);
            this.#account(pass.permit, pass.ticket, pass.gated, outcome, t);
            if (o.onOutcome !== undefined)
              o.onOutcome({ outcome, attempt: number, hedge: false, duration: t - pass.at, error, result });
            s = { outcome, threw, error, result, final: false };
          }
        }
        if (s.outcome === "refused" || s.final || round >= o.attempts) return this.#answer(s);
        if (!this.#retryable(s.outcome, s.error, s.result)) return this.#answer(s);

        // Plan the wait: the backoff's delay, or the server's hint when it is longer.
        const planned = o.backoff?.delay(round, { random: o.random(), previous }) ?? 0;
        previous = planned;
        let hint = o.retryAfter(s.error, s.result) ?? 0;
        if (!(hint > 0)) hint = 0;
        if (hint > o.maxRetryAfter) {
          if (!o.capRetryAfter) return this.#answer(s);
          hint = o.maxRetryAfter;
        }
        const wait = hint > planned ? hint : planned;
        const now = o.clock();
        if (now + wait >= call.end) {
          this.#emitRefuse("deadline", 0, call.attempts + 1);
          return this.#answer(s);
        }
        if (o.budget !== undefined && !o.budget.tryRetry(now)) {
          this.#emitRefuse("budget", 0, call.attempts + 1);
          return this.#answer(s);
        }
        if (o.onRetry !== undefined)
          o.onRetry({ attempt: call.attempts, delay: wait, error: s.threw ? s.error : undefined, result: s.result });
        if (!s.threw && s.result !== undefined) o.discard?.(s.result);
        if (wait > 0) await call.sleep(o, wait);
        last = s;
        s = undefined;
      }
    } finally {
      call.close(o);
      if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
    }
  }

  /** The value or the error of an attempt, as the caller receives it. */
  #answer(s: Settled<R>): R {
    if (s.threw) throw s.error;
    return s.result as R;
  }

  /**
   * Admits a first attempt or a retry, waiting for a token while `maxWait` allows (a hedge never
   * waits). On refusal, `pass` says which policy and the answer is false; an attempt that was
   * not admitted holds nothing.
   */
  async #enter(call: Call<R>, pass: Pass): Promise<boolean> {
    const o = this.#o;
    const bucket = o.bucket as NonNullable<Resolved<R>["bucket"]>;
    let now = o.clock();
    const until = now + o.maxWait;
    for (let i = 0; !bucket.peek(now); i++) {
      const wait = bucket.next(now);
      // A wait past maxWait is the bucket's refusal; one that fits maxWait but not the deadline
      // is the deadline's. Timers may fire a hair early, so a few rounds are allowed.
      if (!(now + wait <= until) || i > 8) return this.#refused(pass, "rate", wait, call.attempts + 1);
      if (!(now + wait < call.end)) return this.#refused(pass, "deadline", 0, call.attempts + 1);
      await call.sleep(o, wait);
      now = o.clock();
    }
    return this.#admit(now, pass, false, call);
  }

  /** Admission at `now`, in the documented order: bucket, gate, shedder, breaker (then the budget, for a hedge). */
  #admit(now: number, pass: Pass, hedge: boolean, call: Call<R>): boolean {
    const o = this.#o;
    const attempt = call.attempts + 1;
    pass.at = now;
    if (!(now < call.end)) return this.#refused(pass, "deadline", 0, attempt);
    const bucket = o.bucket;
    const gate = o.gate;
    if (bucket !== undefined && !bucket.peek(now)) return this.#refused(pass, "rate", bucket.next(now), attempt);
    if (gate !== undefined && !gate.peek()) return this.#refused(pass, "gate", 0, attempt);
    if (o.shedder !== undefined) {
      pass.ticket = o.shedder.allow(now, o.load());
      if (pass.ticket === undefined) return this.#refused(pass, "shed", 0, attempt);
    }
    if (o.breaker !== undefined) {
      try {
        pass.permit = o.breaker.allow(now, o.random);
      } catch (e) {
        // A random source that throws: the shedder's ticket is given back, not left in flight.
        pass.ticket?.fail();
        pass.ticket = undefined;
        throw e;
      }
      if (pass.permit === undefined) {
        pass.ticket?.fail();
        pass.ticket = undefined;
        return this.#refused(pass, "breaker", 0, attempt);
      }
    }
    // A hedge is paid for by the retry budget once everything else has let it through, so that
    // a breaker's refusal does not waste a credit.
    if (hedge && o.budget !== undefined && !o.budget.tryRetry(now)) {
      pass.ticket?.fail();
      pass.ticket = undefined;
      pass.permit = undefined; // never settled: not counted
      return this.#refused(pass, "budget", 0, attempt);
    }
    if (gate !== undefined) pass.gated = gate.enter();
    if (bucket !== undefined) bucket.take(now);
    return true;
  }

  #refused(pass: Pass, kind: RefusalKind, retryAfter: number, attempt: number): false {
    pass.kind = kind;
    pass.retryAfter = retryAfter > 0 ? retryAfter : 0;
    this.#emitRefuse(kind, pass.retryAfter, attempt);
    return false;
  }

  #refuse(kind: RefusalKind, retryAfter: number, attempt: number): Refusal {
    this.#emitRefuse(kind, retryAfter, attempt);
    return new Refusal(kind, retryAfter);
  }

  #emitRefuse(kind: RefusalKind, retryAfter: number, attempt: number): void {
    const on = this.#o.onRefuse;
    if (on !== undefined) on({ kind, retryAfter: retryAfter > 0 ? retryAfter : 0, attempt });
  }

  /** What an answer counts as: a refusal from within, a failure, or a success. */
  #classify(threw: boolean, error: unknown, result: R | undefined): Outcome {
    const isFailure = this.#o.isFailure;
    if (threw) {
      if (isRefusal(error)) return "refused";
      return isFailure === undefined || isFailure(error, undefined) ? "failure" : "success";
    }
    return isFailure !== undefined && isFailure(undefined, result) ? "failure" : "success";
  }

  /** Gives back what an admitted attempt held, recording how it went. */
  #account(
    permit: Permit | undefined,
    ticket: Ticket | undefined,
    gated: boolean,
    outcome: Outcome,
    end: number,
  ): void {
    if (permit !== undefined) {
      if (outcome === "success") permit.pass(end);
      else if (outcome === "failure" || outcome === "timeout") permit.fail(end);
      // A cancelled or refused attempt says nothing about the backend: its permit stays unsettled.
    }
    if (ticket !== undefined) {
      if (outcome === "success") ticket.pass(end);
      else ticket.fail();
    }
    if (gated) this.#o.gate?.leave();
  }

  /** @internal For {@link Flight}: calls the guarded function. */
  invoke(ctx: Context, args: A): R | PromiseLike<R> {
    return apply(this.#fn, ctx, args);
  }

  /** @internal For {@link Flight}: settles an attempt's accounting and reports it. */
  settle(
    pass: Pass,
    ctx: Context,
    outcome: Outcome,
    start: number,
    end: number,
    error: unknown,
    result: R | undefined,
  ): void {
    this.#account(pass.permit, pass.ticket, pass.gated, outcome, end);
    const on = this.#o.onOutcome;
    if (on !== undefined) on({ outcome, attempt: ctx.attempt, hedge: ctx.hedge, duration: end - start, error, result });
  }

  /** @internal For {@link Flight}. */
  classify(threw: boolean, error: unknown, result: R | undefined): Outcome {
    return this.#classify(threw, error, result);
  }

  /**
   * One round with hedging: the admitted first attempt, then another each `delay` while none has
   * answered well (or at once when one fails), up to `max` more; the first answer the guard would
   * not retry wins and the others are aborted. When every attempt has failed, the round answers
   * with the last failure.
   */
  #hedged(call: Call<R>, first: Pass, args: A): Promise<Settled<R>> {
    const o = this.#o;
    return new Promise<Settled<R>>((resolve) => {
      const live = new Set<Flight<A, R>>();
      let hedges = 0;
      let done = false;
      let timer: unknown;
      let last: Settled<R> | undefined;
      let stopped = false; // a hedge was refused: start no more this round

      const finish = (s: Settled<R>): void => {
        done = true;
        if (timer !== undefined) o.timers.clear(timer);
        timer = undefined;
        // At the deadline every attempt's own timer fires at the same instant and counts it as
        // the timeout it is; otherwise the others lost and are aborted.
        if (!(s.outcome === "timeout" && s.final)) for (const f of live) f.cancel(superseded());
        live.clear();
        if (last !== undefined && last !== s && !last.threw && last.result !== undefined) o.discard?.(last.result);
        resolve(s);
      };
      const launch = (pass: Pass, hedge: boolean): void => {
        const flight = new Flight<A, R>(this, o, call, pass, args, hedge);
        live.add(flight);
        void flight.promise.then((s) => {
          live.delete(flight);
          if (done) return;
          if (s.outcome === "cancelled" || s.final) return finish(s);
          const again =
            s.outcome !== "refused" &&
            (o.retryOn === undefined
              ? s.outcome === "failure" || s.outcome === "timeout"
              : o.retryOn(s.error, s.result));
          if (!again) return finish(s);
          if (last !== undefined && !last.threw && last.result !== undefined) o.discard?.(last.result);
          last = s;
          if (more()) return;
          if (live.size === 0) finish(s);
        });
      };
      // Starts a hedge now if one may start; returns whether one did.
      const more = (): boolean => {
        if (done || stopped || hedges >= o.hedgeMax) return false;
        const pass = new Pass();
        if (!this.#admit(o.clock(), pass, true, call)) {
          stopped = true;
          return false;
        }
        hedges++;
        launch(pass, true);
        if (o.onHedge !== undefined)
          o.onHedge({ attempt: call.attempts, inFlight: live.size, elapsed: o.clock() - call.start });
        arm();
        return true;
      };
      const arm = (): void => {
        if (timer !== undefined) o.timers.clear(timer);
        timer = undefined;
        if (hedges < o.hedgeMax && !stopped) {
          timer = o.timers.set(() => {
            timer = undefined;
            if (!more() && live.size === 0 && last !== undefined && !done) finish(last);
          }, o.hedgeDelay);
        }
      };
      launch(first, false);
      arm();
    });
  }
}

/** The state one call shares across its attempts and waits. */
class Call<R> {
  /** Attempts started so far (hedges included). */
  attempts = 0;
  readonly start: number;
  /** The instant the call must end by (ms), `Infinity` for none. */
  readonly end: number;
  readonly signal: AbortSignal | undefined;
  /** Whether anything can cut an attempt off: its attempts then run as {@link Flight}s. */
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
    if (this.flights !== undefined) for (const f of this.flights) f.cancel(reason);
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
      this.#timer = o.timers.set(() => {
        this.#timer = undefined;
        this.#wake = undefined;
        resolve();
      }, ms);
    });
  }

  /** Clears what the call may still hold: a wait's timer. */
  close(o: Resolved<R>): void {
    if (this.#timer !== undefined) o.timers.clear(this.#timer);
    this.#timer = undefined;
    this.#wake = undefined;
  }
}

/**
 * The instants at which a guard's flights are cut off, kept in order with one timer for the
 * earliest, instead of a timer per attempt (a `setTimeout` and its `clearTimeout` cost more than
 * a whole guarded call). With a fixed timeout the instants arrive in order, so an insertion is a
 * push, and back-to-back calls share one timer that fires once per timeout, not once per call.
 *
 * When no flight is waiting, the timer is left to run out but no longer holds the process open
 * (`unref`); when it fires with nothing waiting it is not set again. So an idle guard keeps no
 * timer that holds the process, and none at all once the last instant has passed.
 */
class Expiry {
  readonly #timers: Resolved<unknown>["timers"];
  readonly #clock: () => number;
  #queue: Flight<never, unknown>[] = [];
  #head = 0;
  #live = 0;
  #timer: unknown = undefined;
  /** The instant the timer is set for, `Infinity` with no timer. */
  #armed = Infinity;

  constructor(timers: Resolved<unknown>["timers"], clock: () => number) {
    this.#timers = timers;
    this.#clock = clock;
  }

  /** Flights waiting to be cut off. */
  get size(): number {
    return this.#live;
  }

  add(f: Flight<never, unknown>): void {
    const q = this.#queue;
    let i = q.length;
    q.push(f);
    while (i > this.#head && q[i - 1].at > f.at) {
      q[i] = q[i - 1];
      i--;
    }
    q[i] = f;
    if (this.#live++ === 0 && this.#timer !== undefined) this.#timers.ref?.(this.#timer);
    if (f.at < this.#armed) this.#arm(f.at, this.#clock());
  }

  /** A flight ended before its instant. */
  remove(): void {
    if (--this.#live > 0) return;
    // Nothing waits: every entry is done, and the timer must not hold the process.
    this.#queue = [];
    this.#head = 0;
    if (this.#timer !== undefined) this.#timers.unref?.(this.#timer);
  }

  #arm(at: number, now: number): void {
    if (this.#timer !== undefined) this.#timers.clear(this.#timer);
    this.#armed = at;
    // Never early: a timer that fires before the instant (Node's may, by under a millisecond)
    // finds nothing due and sets itself again.
    this.#timer = this.#timers.set(this.#fire, at - now > 0 ? at - now : 0);
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#armed = Infinity;
    const now = this.#clock();
    const q = this.#queue;
    const due: Flight<never, unknown>[] = [];
    while (this.#head < q.length) {
      const f = q[this.#head];
      if (!f.done) {
        if (f.at > now) break;
        due.push(f);
      }
      this.#head++;
    }
    if (this.#head > 1_024 && this.#head * 2 > q.length) {
      this.#queue = q.slice(this.#head);
      this.#head = 0;
    }
    const next = this.#queue[this.#head];
    if (next !== undefined) this.#arm(next.at, now);
    for (const f of due) f.expire(now);
  };
}

/**
 * One attempt in flight when something can cut it off: it answers a promise of how it ended
 * that never rejects, and ends at the first of its answer, its instant and a cancellation. An
 * answer that comes after it ended is handed to `discard`, so nothing is left unconsumed.
 */
class Flight<A extends unknown[], R> {
  /**
   * How the attempt ended; or, for a flight that `decides` (the first attempt of `#first`), the
   * call's own answer: its value, its error, or the retries that follow it.
   */
  readonly promise: Promise<Settled<R>>;
  /** The instant it is cut off (ms), `Infinity` for never. */
  readonly at: number;
  done = false;
  readonly #core: Core<A, R>;
  readonly #o: Resolved<R>;
  readonly #call: Call<R>;
  readonly #pass: Pass;
  readonly #ctx: Context;
  readonly #start: number;
  readonly #scope: "attempt" | "deadline";
  /** The caller's arguments when the flight decides, for the retries; else undefined. */
  readonly #args: A | undefined;
  #resolve!: (s: Settled<R> | R | Promise<R>) => void;
  #reject!: (error: unknown) => void;

  constructor(core: Core<A, R>, o: Resolved<R>, call: Call<R>, pass: Pass, args: A, hedge: boolean, decides = false) {
    this.#core = core;
    this.#o = o;
    this.#call = call;
    this.#pass = pass;
    const start = pass.at;
    const cut = start + o.timeout;
    this.at = cut < call.end ? cut : call.end;
    this.#scope = this.at === cut ? "attempt" : "deadline";
    const ctx = new Context(++call.attempts, hedge, call.signal, true);
    this.#ctx = ctx;
    this.#start = start;
    this.#args = decides ? args : undefined;
    this.promise = new Promise<Settled<R>>((resolve, reject) => {
      this.#resolve = resolve as (s: Settled<R> | R | Promise<R>) => void;
      this.#reject = reject;
    });
    call.flights?.add(this);
    if (this.at < Infinity) core.expiry.add(this as unknown as Flight<never, unknown>);
    let answer: R | PromiseLike<R>;
    try {
      answer = core.invoke(ctx, args);
    } catch (e) {
      this.#answered(true, e, undefined);
      return;
    }
    if (answer !== null && typeof answer === "object" && typeof (answer as PromiseLike<R>).then === "function") {
      Promise.resolve(answer).then(
        (v) => this.#answered(false, undefined, v),
        (e: unknown) => this.#answered(true, e, undefined),
      );
    } else {
      this.#answered(false, undefined, answer as R);
    }
  }

  /** @internal For {@link Expiry}: its instant has come. */
  expire(now: number): void {
    if (this.done) return;
    const error = new TimeoutError(this.#scope, now - this.#start);
    this.#ctx.abort(error);
    this.#end("timeout", true, error, undefined, this.#scope === "deadline", now);
  }

  #answered(threw: boolean, error: unknown, result: R | undefined): void {
    if (this.done) {
      if (!threw && result !== undefined) this.#o.discard?.(result);
      return;
    }
    this.#end(this.#core.classify(threw, error, result), threw, error, result, false, this.#o.clock());
  }

  /** Ends the attempt as cancelled (the caller gave up, or another attempt won). */
  cancel(reason: unknown): void {
    if (this.done) return;
    this.#ctx.abort(reason);
    this.#end("cancelled", true, reason, undefined, true, this.#o.clock());
  }

  #end(outcome: Outcome, threw: boolean, error: unknown, result: R | undefined, final: boolean, now: number): void {
    this.done = true;
    if (this.at < Infinity) this.#core.expiry.remove();
    this.#call.flights?.delete(this);
    const args = this.#args;
    try {
      this.#core.settle(this.#pass, this.#ctx, outcome, this.#start, now, error, result);
    } catch (e) {
      // A listener that throws ends the call with its error (a timer's callback must not throw).
      if (args === undefined) this.#resolve({ outcome, threw: true, error: e, result: undefined, final: true });
      else this.#reject(e);
      return;
    }
    if (args === undefined) {
      this.#resolve({ outcome, threw, error, result, final });
      return;
    }
    // A flight that decides answers the call itself: one promise less between it and the caller.
    let answer: R | Promise<R>;
    try {
      answer = this.#core.decided(this.#call, args, outcome, threw, error, result, final);
    } catch (e) {
      this.#reject(e);
      return;
    }
    this.#resolve(answer);
  }
}

/**
 * @internal A guard over options already resolved: `guardFetch` builds two (retrying and not)
 * that share one breaker, bucket, gate, shedder and budget.
 */
export function guardWith<A extends unknown[], R>(
  fn: (attempt: Attempt, ...args: A) => R | PromiseLike<R>,
  o: Resolved<R>,
): Guarded<A, R> {
  const core = new Core<A, R>(fn, o);
  const guarded = ((...args: A) => core.call(undefined, args)) as Guarded<A, R>;
  guarded.run = (scope: CallScope, ...args: A) => core.call(scope, args);
  return guarded;
}
