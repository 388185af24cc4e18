/**
 * Why {@link RetryError} gave up:
 * - `"exhausted"` — the policy's attempts were all made;
 * - `"retryAfter"` — the error asked for a longer wait (its `retryAfter`) than `maxRetryAfter`;
 * - `"deadline"` — the next wait would have run past the deadline, so it did not sleep;
 * - `"budget"` — the shared {@link RetryBudget} refused the retry.
 */
export type GiveUp = "exhausted" | "retryAfter" | "deadline" | "budget";

const WHY: Readonly<Record<GiveUp, string>> = {
  exhausted: "the policy allows no more attempts",
  retryAfter: "the error asked to wait longer than maxRetryAfter",
  deadline: "the next wait would pass the deadline",
  budget: "the retry budget is spent",
};

function summary(error: unknown): string {
  // Whatever the error is made of (a Symbol message, a getter that throws), the RetryError is
  // still made, its cause kept.
  try {
    if (error instanceof Error) return error.message === "" ? error.name : `${error.name}: ${error.message}`;
    return String(error);
  } catch {
    return error instanceof Error ? "an Error that cannot be shown" : typeof error;
  }
}

/**
 * The error `retry` rejects with when it gives up on a call that kept failing: the last error
 * is its `cause`, and it says how many attempts were made and why no more were.
 *
 * Test for it with {@link isRetryError} rather than `instanceof`, which fails when two copies of
 * this package end up in one bundle.
 */
export class RetryError extends Error {
  /** Brand read by {@link isRetryError}. */
  readonly isRetryError = true;
  override readonly name = "RetryError";
  /** How many attempts were made, the first one included. */
  readonly attempts: number;
  /** Why no more were made. */
  readonly reason: GiveUp;
  /** The error of the last attempt. */
  declare readonly cause: unknown;

  /**
   * @param attempts - how many attempts were made, the first included
   * @param reason - why no more were made
   * @param cause - the last attempt's error
   */
  constructor(attempts: number, reason: GiveUp, cause: unknown) {
    super(
      `Gave up after ${attempts} ${attempts === 1 ? "attempt" : "attempts"}: ${WHY[reason]}; last error: ${summary(cause)}`,
      { cause },
    );
    this.attempts = attempts;
    this.reason = reason;
  }
}

/** Whether `e` is a {@link RetryError}, from this or any other copy of the package. */
export function isRetryError(e: unknown): e is RetryError {
  return typeof e === "object" && e !== null && (e as { isRetryError?: unknown }).isRetryError === true;
}
