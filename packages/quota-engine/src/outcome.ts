// What an algorithm step computed, written into one shared scratch array instead of a returned
// object, so that a check allocates nothing but the decision the caller gets back. Read it right
// after the step that wrote it; the next step overwrites it.

/**
 * The share of a capacity forgiven when comparing: a billionth, as `@tideward/limiters` forgives.
 * Refills are sums of floating-point products, so a bucket that mathematically holds exactly one
 * token may compute 0.9999999999999998; without the slack it would refuse a token that is there,
 * and a retry at `now + retryAfter` could fail.
 */
export const SLACK = 1e-9;

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
 * whole units remaining, `[3]` retry after (ms), `[4]` reset after (ms).
 */
export const OUT = new Float64Array(5);
