import type { Outcome } from "./events";
import type { Held } from "./pipeline";
import type { RefusalKind } from "./refusal";
import type { Ask } from "./stage";

/**
 * One attempt of a call, from its admission to its end: what it asks of the stages, what they
 * gave it (the tokens it {@link Held holds}) or why it was refused, then how it ended and what it
 * answered. One object an attempt, filled by the one admission (`admission.ts`, through the
 * pipeline) and the one accounting (`accounting.ts`) that every path calls.
 */
export class Pass<R> implements Held, Ask {
  // What the stages gave it, by their place (one class with its own fields: a subclass costs a
  // constructor call an attempt).
  t0: unknown = undefined;
  t1: unknown = undefined;
  t2: unknown = undefined;
  t3: unknown = undefined;
  /** What it weighs: one unit (on the prototype, so an attempt carries no field for it). */
  get cost(): number {
    return 1;
  }
  hedge = false;
  first = false;
  /** The call's priority from its arguments (the guard's `priority` function); `undefined`: the guard's own. */
  priority: number | string | undefined = undefined;
  /** On a refusal: which policy, and when it could admit (ms). */
  kind: RefusalKind | undefined = undefined;
  retryAfter = 0;
  /** When it was admitted (ms): the attempt's start. */
  at = 0;
  /** Whether it was admitted and holds what the stages gave it, until it is accounted. */
  admitted = false;
  /** How it ended, once it has. */
  outcome: Outcome = "cancelled";
  threw = false;
  error: unknown = undefined;
  result: R | undefined = undefined;
  /** No further attempt may follow: the deadline passed, the caller gave up, or a callback threw. */
  final = false;
}
