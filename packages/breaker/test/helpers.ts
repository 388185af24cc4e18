// Filling a breaker's window with exact counts through its public API.
import type { Breaker } from "@tideward/breaker";

/** A roll no drop fraction reaches while the window holds under a million calls. */
export const PASS = 0.999_999;

/** Lets `success` calls through at `now` and passes them, then `failure` calls and fails them. */
export function feed(b: Breaker, now: number, success: number, failure = 0): void {
  for (let i = 0; i < success + failure; i++) {
    const permit = b.allow(now, PASS);
    if (permit === undefined) throw new Error(`feed: call ${i} at ${now} was refused`);
    if (i < success) permit.pass(now);
    else permit.fail(now);
  }
}

/** Asks `n` times at `now` with a roll of 0 and returns how many were refused (each one a drop). */
export function refuse(b: Breaker, now: number, n: number): number {
  let refused = 0;
  for (let i = 0; i < n; i++) if (b.allow(now, 0) === undefined) refused++;
  return refused;
}
