// The one accounting every path calls when an attempt ends: judge the answer (isFailure), settle
// what the attempt holds of each stage (the breaker's permit, the shedder's ticket, the gate's
// place), report it (onOutcome). A callback that throws here never stops the giving back: its error
// becomes the attempt's answer, final, and the value it replaces goes to `discard`.
import { isRefusal } from "./refusal";
import type { Outcome } from "./events";
import type { Resolved } from "./options";
import type { Pass } from "./pass";

/**
 * Hands a value nobody will get to `discard`. What `discard` throws is dropped with it: it is
 * called for answers no caller sees, often after the call has ended, and changes nothing.
 */
export function drop<R>(o: Resolved<R>, threw: boolean, result: R | undefined): void {
  const discard = o.discard;
  if (discard === undefined || threw || result === undefined) return;
  try {
    discard(result);
  } catch {
    // Documented: a throwing discard changes nothing.
  }
}

/** Ends the attempt with a callback's error in place of its answer: final, its value discarded. */
export function fault<R>(o: Resolved<R>, p: Pass<R>, error: unknown): void {
  drop(o, p.threw, p.result);
  p.threw = true;
  p.error = error;
  p.result = undefined;
  p.final = true;
}

/** What an answered attempt counts as: a refusal from within, a failure, or a success. */
function judge<R>(o: Resolved<R>, p: Pass<R>): Outcome {
  if (p.threw && isRefusal(p.error)) return "refused";
  const isFailure = o.isFailure;
  if (isFailure === undefined) return p.threw ? "failure" : "success";
  try {
    return (p.threw ? isFailure(p.error, undefined) : isFailure(undefined, p.result)) ? "failure" : "success";
  } catch (e) {
    // A judge that cannot judge: the attempt counts as failed, and the call ends with its error.
    fault(o, p, e);
    return "failure";
  }
}

/** Gives back what an admitted attempt held, each stage told how it went; once only. */
function account<R>(o: Resolved<R>, p: Pass<R>, outcome: Outcome, end: number): void {
  if (!p.admitted) return;
  p.admitted = false;
  o.pipeline.settle(end, outcome, p);
}

function report<R>(o: Resolved<R>, p: Pass<R>, attempt: number, end: number): void {
  const on = o.onOutcome;
  if (on === undefined) return;
  try {
    on({
      outcome: p.outcome,
      attempt,
      hedge: p.hedge,
      duration: end - p.at,
      error: p.threw ? p.error : undefined,
      result: p.result,
    });
  } catch (e) {
    fault(o, p, e);
  }
}

/** Attempt number `attempt` returned `value`: see {@link answered}. Never throws. */
export function returned<R>(o: Resolved<R>, p: Pass<R>, attempt: number, value: R | undefined): Pass<R> {
  p.threw = false;
  p.error = undefined;
  p.result = value;
  return answered(o, p, attempt);
}

/** Attempt number `attempt` threw `error` (or its promise rejected): see {@link answered}. Never throws. */
export function raised<R>(o: Resolved<R>, p: Pass<R>, attempt: number, error: unknown): Pass<R> {
  p.threw = true;
  p.error = error;
  p.result = undefined;
  return answered(o, p, attempt);
}

/**
 * An attempt answered (what `p` holds: `threw` with `error`, or `result`): judged, accounted at
 * the clock's reading (one that throws, or reads before the start, is the start), reported.
 */
function answered<R>(o: Resolved<R>, p: Pass<R>, attempt: number): Pass<R> {
  let end: number;
  let broken = false;
  let why: unknown;
  try {
    end = o.clock();
    if (!(end >= p.at)) end = p.at;
  } catch (e) {
    end = p.at;
    broken = true;
    why = e;
  }
  const outcome = judge(o, p);
  p.outcome = outcome;
  account(o, p, outcome, end);
  if (broken) fault(o, p, why);
  report(o, p, attempt, end);
  return p;
}

/** How an attempt was cut short: see {@link cut}. */
export interface Cut {
  /** Its deadline or timeout passed (`"timeout"`), or it was given up on (`"cancelled"`). */
  readonly outcome: "timeout" | "cancelled";
  /** What it answers: the `TimeoutError`, or the reason it was given up. */
  readonly error: unknown;
  /** Whether no attempt may follow it (the deadline passed, the caller gave up). */
  readonly final: boolean;
  /** When it ended (ms); the clock's reading when left out. */
  readonly end?: number;
}

/** Attempt number `attempt` was cut short as `how` says: accounted and reported. Never throws. */
export function cut<R>(o: Resolved<R>, p: Pass<R>, attempt: number, how: Cut): Pass<R> {
  p.outcome = how.outcome;
  p.threw = true;
  p.error = how.error;
  p.result = undefined;
  p.final = how.final;
  let at = p.at;
  if (how.end !== undefined) at = how.end;
  else {
    try {
      at = o.clock();
    } catch {
      // The attempt ends all the same: at its start, as a clock standing still.
    }
  }
  if (!(at >= p.at)) at = p.at;
  account(o, p, how.outcome, at);
  report(o, p, attempt, at);
  return p;
}

/** The value or the error of an attempt, as the caller receives it. */
export function answerOf<R>(p: Pass<R>): R {
  if (p.threw) throw p.error;
  return p.result as R;
}
