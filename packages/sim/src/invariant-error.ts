/**
 * A policy broke a bound it promised to keep (see `Envelope`), found by the simulator's checks
 * when a run is made with `invariants: true`.
 */
export class InvariantError extends Error {
  /** Brand, so the check survives two copies of the package in one bundle. */
  readonly isInvariantError = true;
  /** The policy that broke it. */
  readonly policy: string;
  /** The bound, as its envelope names it, or the check: `"held"`. */
  readonly invariant: string;
  /** When, on the run's clock (ms). */
  readonly time: number;
  /** When, in milliseconds after the run's start. */
  readonly offset: number;
  /** The run's seed. */
  readonly seed: number;

  constructor(policy: string, invariant: string, detail: string, time: number, offset: number, seed: number) {
    super(`${policy}: ${invariant}: ${detail} at ${offset} ms after the start (seed ${seed})`);
    this.name = "InvariantError";
    this.policy = policy;
    this.invariant = invariant;
    this.time = time;
    this.offset = offset;
    this.seed = seed;
  }
}

/** Whether `error` is an {@link InvariantError}, from this copy of the package or another. */
export function isInvariantError(error: unknown): error is InvariantError {
  return (
    typeof error === "object" && error !== null && (error as { isInvariantError?: unknown }).isInvariantError === true
  );
}
