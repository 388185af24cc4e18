// What every package's snapshot shares: the error a refused snapshot raises, and the options of a
// restore (how long ago the snapshot was taken). The readers that check one are in ./read.

/**
 * A snapshot that `restore` refused: `field` names the first bad field as a path from the
 * snapshot's root (`"snapshot.buckets[3][1]"`), and whatever was restoring it is left as it was.
 *
 * Test for it with {@link isSnapshotError}, which works across copies of the package and
 * recognises every tideward package's snapshot errors: they carry the same brand.
 */
export class SnapshotError extends Error {
  /** A brand, so that {@link isSnapshotError} recognises an instance from another copy of the package. */
  readonly isSnapshotError = true;
  /** The path of the first bad field, such as `"snapshot.buckets[3][1]"`. */
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

/**
 * How a restore places a snapshot on the restoring clock. Left out, the snapshot is taken as just
 * made: its clock reading becomes `now`, and everything in it keeps the age it had then.
 */
export interface RestoreOptions {
  /**
   * How long before `now` the snapshot was taken, in milliseconds on the restoring clock (0 or
   * more): what it holds ages by as much, so what would have aged out since is gone.
   * @defaultValue 0
   */
  readonly age?: number;
  /**
   * Whether the snapshot's `clock` and `now` are readings of one clock (`Date.now()` on every
   * machine): then the age is `now − clock`, and 0 when that is negative (clocks a little apart).
   * @defaultValue false
   */
  readonly sameClock?: boolean;
}
