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

function report<R>(o: Resolved<R>, p: Pass<R>, attempt: number, hedge: boolean, end: number): void {
  const on = o.onOutcome;
  if (on === undefined) return;
  try {
    on({
      outcome: p.outcome,
      attempt,
      hedge,
      duration: end - p.at,
      error: p.threw ? p.error : undefined,
      result: p.result,
    });
  } catch (e) {
    fault(o, p, e);
  }
}

/**
 * An attempt answered (`threw` with `error`, or `result`): judged, accounted at the clock's
 * reading (one that throws, or reads before the start, is the start), reported. Never throws.
 */
export function answered<R>(
  o: Resolved<R>,
  p: Pass<R>,
  attempt: number,
  hedge: boolean,
  threw: boolean,
  error: unknown,
  result: R | undefined,
): Pass<R> {
  p.threw = threw;
  p.error = error;
  p.result = result;
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
  report(o, p, attempt, hedge, end);
  return p;
}

/**
 * An attempt cut off (`"timeout"`) or given up on (`"cancelled"`) at `end`, or at the clock's
 * reading when `end` is not given: accounted and reported. Never throws.
 */
export function cut<R>(
  o: Resolved<R>,
  p: Pass<R>,
  attempt: number,
  hedge: boolean,
  outcome: "timeout" | "cancelled",
  error: unknown,
  final: boolean,
  end?: number,
): Pass<R> {
  p.outcome = outcome;
  p.threw = true;
  p.error = error;
  p.result = undefined;
  p.final = final;
  let at = p.at;
  if (end !== undefined) at = end;
  else {
    try {
      at = o.clock();
    } catch {
      // The attempt ends all the same: at its start, as a clock standing still.
    }
  }
  if (!(at >= p.at)) at = p.at;
  account(o, p, outcome, at);
  report(o, p, attempt, hedge, at);
  return p;
}

/** The value or the error of an attempt, as the caller receives it. */
export function answerOf<R>(p: Pass<R>): R {
  if (p.threw) throw p.error;
  return p.result as R;
}
