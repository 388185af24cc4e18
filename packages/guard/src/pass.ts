import type { Permit } from "@tideward/breaker";
import type { Ticket } from "@tideward/shedder";
import type { Outcome } from "./events";
import type { RefusalKind } from "./refusal";

/**
 * One attempt of a call, from its admission to its end: what admission gave it (a breaker's
 * permit, a shedder's ticket, a gate place) or why it was refused, then how it ended and what it
 * answered. One object an attempt, filled by the one admission (`admission.ts`) and the one
 * accounting (`accounting.ts`) that every path calls.
 */
export class Pass<R> {
  permit: Permit | undefined = undefined;
  ticket: Ticket | undefined = undefined;
  gated = false;
  /** On a refusal: which policy, and when it could admit (ms). */
  kind: RefusalKind | undefined = undefined;
  retryAfter = 0;
  /** When it was admitted (ms): the attempt's start. */
  at = 0;
  /** How it ended, once it has. */
  outcome: Outcome = "cancelled";
  threw = false;
  error: unknown = undefined;
  result: R | undefined = undefined;
  /** No further attempt may follow: the deadline passed, the caller gave up, or a callback threw. */
  final = false;
}
