// The breaker's snapshot format, and the reader that turns an untrusted value into state for a
// breaker of a given policy or throws a SnapshotError naming the first bad field.
import { read } from "@tideward/time/internal";
import { Tally, layWindow, readWindow } from "@tideward/window";
import type { SavedWindow, Window } from "@tideward/window";
import type { Sre } from "./sre";

/** The breaker's snapshot format's version. */
export const VERSION = 1;

/** One bucket of a breaker's window, as a snapshot holds it: its successes, failures and refusals. */
export type SavedTally = readonly [success: number, failure: number, drop: number];

/**
 * What a breaker knows, as plain JSON-safe data: what `Breaker.snapshot()` returns and
 * `Breaker.restore()` takes. Every instant is relative to `clock`, so it restores onto a clock of
 * any origin; `JSON.parse(JSON.stringify(s))` restores to the same state. Probes in flight are
 * not in it: they belong to the process that let them through.
 */
export interface BreakerSnapshot {
  /** The format's version: a restore refuses any other. */
  readonly version: 1;
  /** What took the snapshot: a restore refuses another kind's. */
  readonly kind: "breaker";
  /** The latest clock reading the breaker had acted at, in milliseconds on its own clock. */
  readonly clock: number;
  /** How many buckets the window has: a breaker restores only a snapshot of its own `size`. */
  readonly size: number;
  /** How far back the window reaches, in milliseconds: a breaker restores only its own. */
  readonly window: number;
  /** How far `clock` was into the newest bucket, in milliseconds: 0 or more, under one bucket. */
  readonly into: number;
  /**
   * The live buckets, oldest first, the last the one `clock` fell in, each as
   * `[successes, failures, refusals]`: whole numbers. Empty ones older than every other are left out.
   */
  readonly buckets: readonly SavedTally[];
  /** How long before `clock` a call was last let through, in milliseconds: 0 or more. */
  readonly idle: number;
  /** A half-open trial under way: the passes and failures it has seen (both 0 when none is). */
  readonly trial: { readonly passes: number; readonly failures: number };
}

/** What {@link readSnapshot} checked: the state to lay onto a breaker. */
export interface Restored {
  readonly clock: number;
  readonly window: SavedWindow<SavedTally>;
  readonly idle: number;
  readonly passes: number;
  readonly failures: number;
}

const FIELDS = ["size", "window", "into", "buckets", "idle", "trial"] as const;

/**
 * Reads an untrusted snapshot for a breaker of `policy` whose trials close at `need` passes and
 * fail past `spare` failures, checking every field: the version and kind, the window's shape (its
 * own), whole counts whose sum a number holds exactly, a trial that this policy could be in.
 *
 * @throws SnapshotError naming the first bad field
 */
export function readSnapshot(value: unknown, policy: Sre, need: number, spare: number): Restored {
  return read.guarded(() => {
    const root = read.root(value, "breaker", VERSION, FIELDS);
    let calls = 0;
    let successes = 0;
    const window = readWindow(root, policy.size, policy.window, "breaker", (raw, path): SavedTally => {
      const b = read.list(raw, path, 3, 3);
      const success = read.whole(b[0], `${path}[0]`, 0, Number.MAX_SAFE_INTEGER);
      const failure = read.whole(b[1], `${path}[1]`, 0, Number.MAX_SAFE_INTEGER);
      const drop = read.whole(b[2], `${path}[2]`, 0, Number.MAX_SAFE_INTEGER);
      calls += success + failure + drop;
      if (!(calls <= Number.MAX_SAFE_INTEGER))
        read.fail(path, `takes the calls past ${Number.MAX_SAFE_INTEGER}, more than a number counts exactly`);
      successes += success;
      return [success, failure, drop];
    });
    const idle = read.finite(root.idle, "snapshot.idle");
    if (idle < 0) read.fail("snapshot.idle", `must be 0 or more (ms), got ${idle}`);
    const trial = read.record(root.trial, "snapshot.trial", ["passes", "failures"]);
    // A trial is under way only half-open, in a window holding no success (its passes are kept
    // out of the window until it closes), short of the passes that close it.
    const passes = read.whole(trial.passes, "snapshot.trial.passes", 0, need - 1);
    if (passes > 0 && successes > 0)
      read.fail(
        "snapshot.trial.passes",
        `must be 0 when the window holds a success: a trial runs only half-open, got ${passes}`,
      );
    const failures = read.whole(trial.failures, "snapshot.trial.failures", 0, passes === 0 ? 0 : spare);
    return { clock: root.clock, window, idle, passes, failures };
  });
}

/** A window laid from a snapshot, with the sums and runs a breaker keeps over it. */
export interface Laid {
  readonly win: Window<Tally>;
  /** The newest bucket: the one the reading it was laid at falls in. */
  readonly head: Tally;
  readonly total: number;
  readonly accepts: number;
  /** Buckets holding any success / any failure, the newest included. */
  readonly withSuccess: number;
  readonly withFailure: number;
  /** The runs over the buckets before the newest, as a breaker's eviction keeps them. */
  readonly failing: number;
  readonly working: number;
}

/**
 * Lays a snapshot's window of `size` buckets over `window` ms at `now`, and sums it up as a
 * breaker does: totals over every bucket, the runs over those before the newest.
 */
export function laySnapshot(
  saved: SavedWindow<SavedTally>,
  size: number,
  window: number,
  now: number,
  evict: (b: Tally) => void,
): Laid {
  const buckets = saved.buckets;
  const win = layWindow(
    () => new Tally(),
    { size, window, now, evict },
    saved.into,
    buckets.length,
    (b, i) => {
      const [success, failure, drop] = buckets[i];
      b.success = success;
      b.failure = failure;
      b.drop = drop;
      b.total = success + failure + drop;
    },
  );
  let total = 0;
  let accepts = 0;
  let withSuccess = 0;
  let withFailure = 0;
  let failing = 0;
  let working = 0;
  let head = new Tally();
  win.each(now, (b) => {
    // The bucket before this one is no longer the newest: its part joins the runs.
    if (head.success > 0) failing = 0;
    else if (head.failure > 0) failing++;
    if (head.failure > 0) working = 0;
    else if (head.success > 0) working++;
    total += b.total;
    accepts += b.success;
    if (b.success > 0) withSuccess++;
    if (b.failure > 0) withFailure++;
    head = b;
  });
  return { win, head, total, accepts, withSuccess, withFailure, failing, working };
}
