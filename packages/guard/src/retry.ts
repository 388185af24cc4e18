// Whether a call tries again after an attempt, and how long it waits first: one decision for the
// first attempt's path, the retry loop and a hedged round. A callback that throws here (retryOn,
// retryAfter, onRetry, onRefuse, the random source or the clock) ends the call with its error,
// and a retry the budget granted that onRetry's throw stops is given back to it.
import { decideRetry, readHint } from "@tideward/backoff";
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

/**
 * The server's wait hint for `p` (ms), 0 for none, read by the rule `retry` reads it by. Throws
 * what `retryAfter` throws, and a hint that is not a number of ms (naming it).
 */
export function hintOf<R>(o: Resolved<R>, p: Pass<R>): number {
  return readHint(o.retryAfter(p.error, p.result), o.hintName, p.threw ? p.error : undefined);
}

/** Whether the call goes on after attempt `p` of round `round` (the first being 1), wait aside. */
export function again<R>(o: Resolved<R>, p: Pass<R>, round: number): boolean {
  return !p.final && p.outcome !== "refused" && round < o.attempts && retryable(o, p);
}

/**
 * The wait before the call's next round (ms), or -1 when the call answers with `p` now, as
 * `decideRetry` (`@tideward/backoff`, the decision `retry` takes) weighs it: the backoff's delay,
 * or the server's hint when it is longer, within `maxRetryAfter`; no wait that would end past the
 * deadline, and only with the retry budget's grant, held in `call.granted` until the retry is
 * admitted (given back at once when `onRetry` throws: the retry it announces is not made). A
 * deadline or a budget that ends the call is told to `onRefuse`; a hint over the cap is not.
 */
export function plan<R>(o: Resolved<R>, call: Call<R>, p: Pass<R>, round: number): number {
  try {
    const draw = o.random();
    const hint = hintOf(o, p);
    const d = decideRetry(o, { made: round, previous: call.previous, draw, hint, end: call.end, now: o.now });
    if (d.giveUp !== undefined) {
      if (d.giveUp === "deadline" || d.giveUp === "budget") emitRefuse(o, d.giveUp, 0, call.attempts + 1, p.priority);
      return -1;
    }
    call.previous = d.delay;
    call.granted = d.receipt;
    if (o.onRetry !== undefined)
      o.onRetry({ attempt: call.attempts, delay: d.wait, error: p.threw ? p.error : undefined, result: p.result });
    return d.wait;
  } catch (e) {
    call.giveBack(o); // no retry follows: its credit is not spent
    fault(o, p, e);
    return -1;
  }
}
