// The guard's two floors, written by hand: what a breaker and a bucket around a call cost with no
// library in between. Shared by guard.bench.ts (time) and allocation.ts (bytes), so that both
// measure the same code. The breaker is handed Math.random itself, as the guard hands it its
// random source: it draws only while it throttles.
import { Breaker } from "@tideward/breaker";
import { Bucket } from "@tideward/limiters";
import { systemClock } from "@tideward/time";

/** A bucket that never runs dry at these rates: the cost measured is the decision, not a refusal. */
export const RATE = 1e12;

/** The floor: an async function that awaits the call, with two clock reads, the breaker and the bucket. */
export function floorOf(call: () => Promise<number>): () => Promise<number> {
  const breaker = new Breaker({}, systemClock());
  const bucket = new Bucket(RATE, { now: systemClock() });
  return async () => {
    const now = systemClock();
    if (!bucket.take(now)) throw new Error("rate");
    const permit = breaker.allow(now, Math.random);
    if (permit === undefined) throw new Error("breaker");
    const v = await call();
    permit.pass(systemClock());
    return v;
  };
}

/** The same work as a bare promise chain: the cheapest shape it has. */
export function chainOf(call: () => Promise<number>): () => Promise<number> {
  const breaker = new Breaker({}, systemClock());
  const bucket = new Bucket(RATE, { now: systemClock() });
  return () => {
    const now = systemClock();
    if (!bucket.take(now)) return Promise.reject(new Error("rate"));
    const permit = breaker.allow(now, Math.random);
    if (permit === undefined) return Promise.reject(new Error("breaker"));
    return call().then(
      (v) => {
        permit.pass(systemClock());
        return v;
      },
      (e: unknown) => {
        permit.fail(systemClock());
        throw e;
      },
    );
  };
}

/** Where the timed floor leaves each call's duration (ms), so that its readings are not optimised away. */
export const timed = { last: 0 };

/**
 * The floor of any wrapper that times its call, as a breaker must (the answer is recorded at the
 * clock's reading when it comes): an async function awaiting the call between two clock
 * readings, and nothing else — no breaker, no bucket.
 */
export function timedOf(call: () => Promise<number>): () => Promise<number> {
  return async () => {
    const start = systemClock();
    const v = await call();
    timed.last = systemClock() - start;
    return v;
  };
}
