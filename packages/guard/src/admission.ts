// The one admission every path calls, for a first attempt, a retry and a hedge alike: the
// deadline, then the guard's pipeline of stages in the documented order (the bucket, the gate,
// the shedder, the breaker, then the retry budget; see pipeline.ts). The bucket and the gate are
// asked first and spent last, so a refusal further on wastes no token. An attempt that is not
// admitted holds nothing, whatever throws.
import { check } from "@tideward/time/internal";
import type { Call } from "./call";
import type { Resolved } from "./options";
import type { Pass } from "./pass";
import { Refusal } from "./refusal";
import type { RefusalKind } from "./refusal";

/**
 * Tells `onRefuse` of a call of `priority` (its function's answer); what it throws ends the call
 * (the caller's code, nothing is held here).
 */
export function emitRefuse<R>(
  o: Resolved<R>,
  kind: RefusalKind,
  retryAfter: number,
  attempt: number,
  priority: number | string | undefined,
): void {
  const on = o.onRefuse;
  if (on !== undefined) on({ kind, retryAfter: retryAfter > 0 ? retryAfter : 0, attempt, priority });
}

function refused<R>(o: Resolved<R>, p: Pass<R>, kind: RefusalKind, retryAfter: number, attempt: number): false {
  p.kind = kind;
  p.retryAfter = retryAfter > 0 ? retryAfter : 0;
  emitRefuse(o, kind, p.retryAfter, attempt, p.priority);
  return false;
}

/** The error a refused first attempt rejects with. */
export function refusalOf<R>(p: Pass<R>): Refusal {
  return new Refusal(p.kind ?? "deadline", p.retryAfter);
}

/**
 * Admits attempt number `attempt` (a first attempt, a retry, or a hedge as `p.hedge` says) at
 * `now`, for a call that must end by `end` (ms), through the guard's pipeline: true with what it
 * holds in `p`, or false with why in `p` (after telling `onRefuse`). Throws only what the caller's
 * own callbacks throw (the clock's reading checked, the load, the random source, `onRefuse`), and
 * then holds nothing.
 */
export function admit<R>(o: Resolved<R>, now: number, p: Pass<R>, end: number, attempt: number): boolean {
  // A clock that answers NaN would read as a passed deadline: say what it is instead.
  if (typeof now !== "number" || now - now !== 0) check.finite(now, `${o.owner} clock()`);
  p.at = now;
  if (!(now < end)) return refused(o, p, "deadline", 0, attempt);
  const pipeline = o.pipeline;
  if (!pipeline.admit(now, p, p))
    return refused(o, p, pipeline.stages[pipeline.refusedBy].kind as RefusalKind, p.retryAfter, attempt);
  p.admitted = true;
  return true;
}

// The callers waiting for a bucket's token, in arrival order (guards may share a bucket).
const lines = new WeakMap<object, object[]>();

/**
 * Admits a first attempt or a retry of `call`, waiting for a token while `maxWait` allows (a
 * hedge never waits). Waiters are served in arrival order, each refused at once when its token
 * (after those of the waiters ahead of it) would land past `maxWait` or the deadline. Rejects
 * when the caller gives up during the wait; holds nothing then.
 */
export async function enter<R>(o: Resolved<R>, call: Call<R>, p: Pass<R>): Promise<boolean> {
  const bucket = (o.waits as NonNullable<Resolved<R>["waits"]>).bucket;
  const maxWait = (o.waits as NonNullable<Resolved<R>["waits"]>).maxWait;
  let now = o.clock();
  let line = lines.get(bucket);
  if (line === undefined) lines.set(bucket, (line = []));
  if (line.length === 0 && bucket.peek(now)) return admit(o, now, p, call.end, call.attempts + 1);
  line.push(p);
  const until = now + maxWait;
  try {
    // Timers may fire a hair early, and tokens may go to callers that do not wait: a few rounds.
    for (let i = 0; ; i++) {
      const n = line.indexOf(p) + 1;
      if (n === 1 && bucket.peek(now)) break;
      // Its token is the n-th from now: within the burst as the bucket says, then at its rate.
      const b = bucket.burst;
      const wait = n <= b ? bucket.next(now, n) : bucket.next(now, b) + ((n - b) * 1_000) / bucket.rate;
      if (!(now + wait <= until) || i > 64) return refused(o, p, "rate", wait, call.attempts + 1);
      if (!(now + wait < call.end)) return refused(o, p, "deadline", 0, call.attempts + 1);
      await call.sleep(o, wait);
      now = o.clock();
    }
  } finally {
    line.splice(line.indexOf(p), 1);
  }
  return admit(o, now, p, call.end, call.attempts + 1);
}
