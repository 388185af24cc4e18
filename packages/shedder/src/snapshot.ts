// The shedder's snapshot format, and the reader that turns an untrusted value into state for a
// shedder of a given policy or throws a SnapshotError naming the first bad field.
import { check, read } from "@tideward/time/internal";
import { Total, layWindow, readWindow } from "@tideward/window";
import type { SavedWindow, Window } from "@tideward/window";
import type { Shed } from "./shed";

/** The shedder's snapshot format's version. */
export const VERSION = 1;

/** One bucket of a shedder's window, as a snapshot holds it: its passes and their response times. */
export type SavedTotal = readonly [passes: number, time: number];

/**
 * What a shedder knows, as plain JSON-safe data: what `Shedder.snapshot()` returns and
 * `Shedder.restore()` takes. Every instant is relative to `clock`, so it restores onto a clock of
 * any origin; `JSON.parse(JSON.stringify(s))` restores to the same state. Calls in flight are
 * not in it: they belong to the process that let them through.
 */
export interface ShedderSnapshot {
  /** The format's version: a restore refuses any other. */
  readonly version: 1;
  /** What took the snapshot: a restore refuses another kind's. */
  readonly kind: "shedder";
  /** The latest clock reading the shedder had been given, in milliseconds on its own clock. */
  readonly clock: number;
  /** How many buckets the window has: a shedder restores only a snapshot of its own `size`. */
  readonly size: number;
  /** How far back the window reaches, in milliseconds: a shedder restores only its own. */
  readonly window: number;
  /** How far `clock` was into the newest bucket, in milliseconds: 0 or more, under one bucket. */
  readonly into: number;
  /**
   * The live buckets, oldest first, the last the one `clock` fell in, each as `[passes, time]`:
   * how many calls passed in it (a whole number) and the sum of their response times (ms).
   * Empty ones older than every other are left out.
   */
  readonly buckets: readonly SavedTotal[];
  /** The moving average of calls in flight, as last updated (0 or more). */
  readonly average: number;
  /** How long before `clock` the CPU last read hot, in milliseconds (0 or more); `null` if never. */
  readonly hot: number | null;
  /** Whether the shedder had refused a call since it last cooled. */
  readonly refused: boolean;
}

/** What {@link readSnapshot} checked: the state to lay onto a shedder. */
export interface Restored {
  readonly clock: number;
  readonly window: SavedWindow<SavedTotal>;
  readonly average: number;
  readonly hot: number | null;
  readonly refused: boolean;
}

const FIELDS = ["size", "window", "into", "buckets", "average", "hot", "refused"] as const;
const MAX = Number.MAX_SAFE_INTEGER;

/**
 * Reads an untrusted snapshot for a shedder of `policy`, checking every field: the version and
 * kind, the window's shape (its own), whole pass counts whose sum a number holds exactly,
 * response times that are finite and 0 or more (none where no call passed), and a refusal only
 * after a hot reading.
 *
 * @throws SnapshotError naming the first bad field
 */
export function readSnapshot(value: unknown, policy: Shed): Restored {
  return read.guarded(() => {
    const root = read.root(value, "shedder", VERSION, FIELDS);
    let passes = 0;
    const window = readWindow(root, policy.size, policy.window, "shedder", (raw, path): SavedTotal => {
      const b = read.list(raw, path, 2, 2);
      const count = read.whole(b[0], `${path}[0]`, 0, MAX);
      const time = read.within(b[1], `${path}[1]`, 0, Number.MAX_VALUE);
      if (count === 0 && time !== 0) read.fail(`${path}[1]`, `must be 0 when no call passed, got ${time}`);
      passes += count;
      if (!(passes <= MAX)) read.fail(path, `takes the passes past ${MAX}, more than a number counts exactly`);
      return [count, time];
    });
    const average = read.within(root.average, "snapshot.average", 0, MAX);
    const hot = root.hot;
    if (hot !== null && !(typeof hot === "number" && hot >= 0 && hot < Infinity))
      read.fail("snapshot.hot", `must be null or a finite number, 0 or more (ms), got ${check.describe(hot)}`);
    if (typeof root.refused !== "boolean")
      read.fail("snapshot.refused", `must be true or false, got ${check.describe(root.refused)}`);
    if (root.refused && hot === null)
      read.fail("snapshot.refused", "must be false when snapshot.hot is null: a shedder refuses only once hot");
    return { clock: root.clock, window, average, hot, refused: root.refused };
  });
}

/**
 * Lays a snapshot's window of `size` buckets over `window` ms at `now`: its reading becomes `now`.
 */
export function laySnapshot(saved: SavedWindow<SavedTotal>, size: number, window: number, now: number): Window<Total> {
  const buckets = saved.buckets;
  return layWindow(
    () => new Total(),
    { size, window, now },
    saved.into,
    buckets.length,
    (b, i) => {
      const [count, time] = buckets[i];
      b.count = count;
      b.sum = time;
    },
  );
}
