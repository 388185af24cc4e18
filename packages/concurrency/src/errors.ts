/**
 * A snapshot that `restore` refused: `field` names the first bad field as a path from the
 * snapshot's root (`"snapshot.state.estimate"`), and the limiter is left as it was.
 *
 * Test for it with {@link isSnapshotError}, which works across copies of this package (and
 * recognises the quota engine's snapshot errors too: they carry the same brand).
 */
export class SnapshotError extends Error {
  /** A brand, so that {@link isSnapshotError} recognises an instance from another copy of the package. */
  readonly isSnapshotError = true;
  /** The path of the first bad field, such as `"snapshot.state.estimate"`. */
  readonly field: string;

  /**
   * @param field - the path of the first bad field, from the snapshot's root
   * @param problem - what is wrong with it, read after the path
   */
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
