import { drop } from "./accounting";
import { admit } from "./admission";
import type { Call } from "./call";
import { Flight } from "./flight";
import type { Runner } from "./flight";
import type { Resolved } from "./options";
import { Pass } from "./pass";
import { hintOf, retryable } from "./retry";

// Why a hedge that lost was aborted: the reason its signal carries.
function superseded(): Error {
  return new DOMException("another attempt answered first", "AbortError");
}

/** A round ended by what a callback threw: final, with that error as its answer. */
function failed<R>(error: unknown): Pass<R> {
  const p = new Pass<R>();
  p.threw = true;
  p.error = error;
  p.final = true;
  return p;
}

/**
 * One round with hedging: the admitted first attempt, then another each `delay` while none has
 * answered well (or at once when one fails without a server's wait hint), up to `max` more; the
 * first answer the guard would not retry wins and the others are cancelled. When every attempt has failed, the round answers
 * with the last failure. The promise never rejects: a callback that throws (retryOn, onHedge,
 * onRefuse, the clock, the timers) ends the round with its error, every attempt in flight
 * cancelled.
 */
export function hedged<A extends unknown[], R>(
  runner: Runner<A, R>,
  o: Resolved<R>,
  call: Call<R>,
  first: Pass<R>,
  args: A,
): Promise<Pass<R>> {
  return new Promise<Pass<R>>((resolve) => {
    const live = new Set<Flight<A, R>>();
    let hedges = 0;
    let done = false;
    let timer: unknown;
    // The latest answer worth retrying: what the round answers if nothing better comes.
    let last: Pass<R> | undefined;
    let stopped = false; // a hedge was refused: start no more this round

    const finish = (p: Pass<R>): void => {
      if (done) return;
      done = true;
      if (timer !== undefined) o.timers.clear(timer);
      timer = undefined;
      // At the deadline every attempt's own timer fires at the same instant and counts it as
      // the timeout it is; otherwise the others lost and are cancelled.
      if (!(p.outcome === "timeout" && p.final)) for (const f of [...live]) f.cancel(superseded());
      live.clear();
      if (last !== undefined && last !== p) drop(o, last.threw, last.result);
      resolve(p);
    };
    const launch = (pass: Pass<R>, hedge: boolean): void => {
      const flight = new Flight<A, R>(runner, o, call, pass, args, hedge);
      live.add(flight);
      void flight.promise.then((p) => {
        live.delete(flight);
        // After the round: an answer nobody will get.
        if (done) return drop(o, p.threw, p.result);
        try {
          if (p.outcome === "cancelled" || p.final || p.outcome === "refused" || !retryable(o, p)) return finish(p);
          if (last !== undefined) drop(o, last.threw, last.result);
          last = p;
          // A server that asked for quiet gets no hedge now: the round ends, and the retry waits.
          if (hintOf(o, p) > 0) stopped = true;
          else if (more()) return;
          if (live.size === 0) finish(p);
        } catch (e) {
          finish(failed(e));
        }
      });
    };
    // Starts a hedge now if one may start; returns whether one did.
    const more = (): boolean => {
      if (done || stopped || hedges >= o.hedgeMax) return false;
      const pass = new Pass<R>();
      pass.hedge = true;
      pass.priority = first.priority;
      if (!admit(o, o.clock(), pass, call.end, call.attempts + 1)) {
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
      if (done || hedges >= o.hedgeMax || stopped) return;
      timer = o.timers.set(() => {
        timer = undefined;
        try {
          if (!more() && live.size === 0 && last !== undefined) finish(last);
        } catch (e) {
          finish(failed(e));
        }
      }, o.hedgeDelay);
    };
    launch(first, false);
    try {
      arm();
    } catch (e) {
      finish(failed(e));
    }
  });
}
