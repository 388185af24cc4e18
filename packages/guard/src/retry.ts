// Whether a call tries again after an attempt, and how long it waits first: one decision for the
// first attempt's path, the retry loop and a hedged round. A callback that throws here (retryOn,
// retryAfter, onRetry, onRefuse, the random source or the clock) ends the call with its error,
// and a retry the budget granted that onRetry's throw stops is given back to it.
import { fault } from "./accounting";
import { emitRefuse } from "./admission";
import type { Call } from "./call";
import type { Resolved } from "./options";
import type { Pass } from "./pass";

/** Whether an answer is worth another attempt (the policy's attempts and budget aside). */
export function retryable<R>(o: Resolved<R>, p: Pass<R>): boolean {
  const retryOn = o.retryOn;
  if (retryOn === undefined) return p.outcome === "failure" || p.outcome === "timeout";
  try {
    if (retryOn(p.error, p.result)) return true;
    return false;
  } catch (e) {
    fault(o, p, e);
    return false;
  }
}

/** The server's wait hint for `p` (ms), 0 for none. Throws what `retryAfter` throws. */
export function hintOf<R>(o: Resolved<R>, p: Pass<R>): number {
  const hint = o.retryAfter(p.error, p.result);
  return typeof hint === "number" && hint > 0 ? hint : 0;
}

/** Whether the call goes on after attempt `p` of round `round` (the first being 1), wait aside. */
export function again<R>(o: Resolved<R>, p: Pass<R>, round: number): boolean {
  return !p.final && p.outcome !== "refused" && round < o.attempts && retryable(o, p);
}

/**
 * The wait before the call's next round (ms), or -1 when the call answers with `p` now: the
 * backoff's delay, or the server's hint when it is longer; no wait that would end past the
 * deadline, and only with the retry budget's grant, held in `call.granted` until the retry is
 * admitted (given back at once when `onRetry` throws: the retry it announces is not made).
 */
export function plan<R>(o: Resolved<R>, call: Call<R>, p: Pass<R>, round: number): number {
  try {
    const backoff = o.backoff;
    let planned = 0;
    if (backoff !== undefined) {
      const previous = call.previous >= 0 ? call.previous : backoff.base;
      planned = backoff.delay(round, { random: o.random(), previous }) ?? 0;
    }
    call.previous = planned;
    let hint = hintOf(o, p);
    if (hint > o.maxRetryAfter) {
      if (!o.capRetryAfter) return -1;
      hint = o.maxRetryAfter;
    }
    const wait = hint > planned ? hint : planned;
    const now = o.clock();
    if (now + wait >= call.end) {
      emitRefuse(o, "deadline", 0, call.attempts + 1);
      return -1;
    }
    if (o.budget !== undefined) {
      call.granted = o.budget.grant(now);
      if (call.granted < 0) {
        emitRefuse(o, "budget", 0, call.attempts + 1);
        return -1;
      }
    }
    if (o.onRetry !== undefined)
      o.onRetry({ attempt: call.attempts, delay: wait, error: p.threw ? p.error : undefined, result: p.result });
    return wait;
  } catch (e) {
    call.giveBack(o); // no retry follows: its credit is not spent
    fault(o, p, e);
    return -1;
  }
}
