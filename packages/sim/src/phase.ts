import { check } from "@tideward/time/internal";
import { Blame, CallbackError, isCallbackError } from "./callback-error";
import { isInvariantError } from "./invariant-error";
import { isOwn } from "./memory";

// What a run was doing when a function handed to it threw, for the error's report: the run sets
// its phase before each call out, and the error names the phase's function.
export const RUN = 0;
export const TRAFFIC = 1;
export const BACKEND = 2;
export const NETWORK = 3;
/** A policy's method: named by the chain (or, before it exists, the policy being made). */
export const POLICY = 4;
export const KEYS = 5;
export const BACKOFF = 6;
const PHASES = [
  "the run",
  "the traffic",
  "the backend",
  "the network",
  "",
  "the traffic's keys name",
  "client retry backoff delay",
];

/** Where the run was when it stopped, and how to name the policy method it was in. */
export interface Place {
  readonly phase: number;
  /** The policy method being called, in words: asked only in {@link POLICY}. */
  readonly policy: () => string;
  readonly time: number;
  readonly start: number;
  readonly seed: number;
}

/**
 * `e` as a run passes it on: its own errors (invariants, sizes, callback errors already made) as
 * they are, one a wrapper blamed on a function by name under that name, anything else thrown
 * by a function handed in as a CallbackError naming the function of the phase it came from.
 */
export function passOn(e: unknown, at: Place): unknown {
  if (isInvariantError(e) || isCallbackError(e) || isOwn(e)) return e;
  const offset = at.time - at.start;
  if (e instanceof Blame) return new CallbackError(e.callback, e.message, at.time, offset, at.seed, e.cause);
  const what = at.phase === POLICY ? at.policy() : PHASES[at.phase];
  const detail = e instanceof Error ? e.message : `threw ${check.describe(e)}`;
  return new CallbackError(what, detail, at.time, offset, at.seed, e);
}
