/**
 * A snapshot that `restore` refused: `field` names the first bad field as a path from the
 * snapshot's root (`"snapshot.buckets[3].tokens"`), and the engine is left as it was.
 *
 * Test for it with {@link isSnapshotError}, which works across copies of this package.
 */
export class SnapshotError extends Error {
  /** A brand, so that {@link isSnapshotError} recognises an instance from another copy of the package. */
  readonly isSnapshotError = true;
  /** The path of the first bad field, such as `"snapshot.buckets[3].tokens"`. */
  readonly field: string;

  constructor(field: string, problem: string) {
    super(`${field} ${problem}`);
    this.name = "SnapshotError";
    this.field = field;
  }
}

/** Whether `e` is a {@link SnapshotError}, from this copy of the package or another. */
export function isSnapshotError(e: unknown): e is SnapshotError {
  return typeof e === "object" && e !== null && (e as { isSnapshotError?: unknown }).isSnapshotError === true;
}
