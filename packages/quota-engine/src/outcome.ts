// What an algorithm step computed, written into one shared scratch array instead of a returned
// object, so that a check allocates nothing but the decision the caller gets back. Read it right
// after the step that wrote it; the next step overwrites it.

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
 * The step's results: `[0]`, `[1]` the key's new state (written back only when allowed), `[2]`
 * whole units remaining, `[3]` the instant (ms) at which the same charge would pass (`Infinity`:
 * never), `[4]` the instant at which the key is back to a fresh key's state. Instants, not waits:
 * the engine turns them into waits from the caller's own `now` with `until`, so a caller that adds
 * the wait to its clock lands where the charge passes.
 */
export const OUT = new Float64Array(5);
