// What an algorithm step computed, written into one shared object instead of a returned one, so
// that a check allocates nothing but the decision the caller gets back. Read it right after the
// step that wrote it; the next step overwrites it. Why not a returned object: where the step is
// not inlined into its caller (the general path dispatches over three algorithms, and the Redis
// engine calls it from its own code), each step would allocate one, and `pnpm bench quota` times
// the same step both ways on a million keys (the README's Speed has the figures).

/** Codes an algorithm step returns (the engine adds the rest of {@link Reason}'s codes). */
export const OK = 0;
export const EXHAUSTED = 1;
export const TOO_LARGE = 2;
export const UNKNOWN_LIMIT = 3;
export const NOT_COMMITTED = 4;
export const KEY_LIMIT = 5;

/** Index into {@link reasons} of every code above. */
export type Code = 0 | 1 | 2 | 3 | 4 | 5;

/**
 * One step's results. Instants, not waits: the engine turns them into waits from the caller's own
 * `now` with `until`, so a caller that adds the wait to its clock lands where the charge passes.
 */
class StepResult {
  // Every field starts as a fraction, so V8 lays them out as doubles from the start and a write
  // never changes the object's shape (see the README's "Measuring").
  /** The key's new state, its amount: tokens held, units used, or ms ahead (written back only when allowed). */
  amount = 0.5;
  /** The key's new state, its instant (ms): when the tokens were counted, when the window ends, the latest admission. */
  instant = 0.5;
  /** Whole units remaining after the step. */
  remaining = 0.5;
  /** The instant (ms) at which the same charge would pass; `Infinity`: never. */
  passAt = 0.5;
  /** The instant (ms) at which the key is back to a fresh key's state. */
  resetAt = 0.5;
}

/** The one {@link StepResult} every algorithm step writes. */
export const step = new StepResult();

/** Whole units of a top-up of `delta` taken where there is room for `room` (which may be below 0). */
export function take(delta: number, room: number): number {
  return delta < room ? delta : room > 0 ? room : 0;
}
