// A window's live buckets as plain data, and a window laid back from them on another clock: what
// the breaker's, the shedder's and the retry budget's snapshots share.
import { check, read } from "@tideward/time/internal";
import { Window } from "./window";
import type { Resettable, WindowOptions } from "./window";

/**
 * A window's live buckets as a snapshot holds them, relative to one clock reading: oldest first,
 * the last the bucket the reading fell in.
 */
export interface SavedWindow<T> {
  /** How far the reading was into the newest bucket, in milliseconds: 0 or more, under one bucket's width. */
  readonly into: number;
  /** The live buckets, oldest first; empty ones older than every other are left out. */
  readonly buckets: T[];
}

/**
 * The buckets of `win` live at `now`, oldest first, each as `save` renders it, and how far `now`
 * is into the newest. Empty buckets older than every other are left out (an empty bucket weighs
 * nothing, before the first one written as after), but the newest is always there.
 *
 * @param win - the window, moved on to `now` (what had aged out by then is cleared, its `evict`
 *   called, as the next write there would)
 * @param now - the reading to save at, in milliseconds: the window's latest, so that nothing
 *   live is skipped; one before its newest bucket counts as that bucket's start
 * @param save - renders one bucket as plain data
 * @param empty - whether a bucket holds nothing
 */
export function saveWindow<B extends Resettable, T>(
  win: Window<B>,
  now: number,
  save: (bucket: B) => T,
  empty: (bucket: B) => boolean,
): SavedWindow<T> {
  // Moved on to `now` first, clearing only what a read at `now` already skips, so that the
  // bucket `now` falls in is written and visited even when nothing was written since it opened.
  win.slot(now);
  const live: B[] = [];
  let start = now;
  win.each(now, (b, at) => {
    live.push(b);
    start = at;
  });
  let first = 0;
  while (first < live.length - 1 && empty(live[first])) first++;
  const width = win.width;
  const into = now - start;
  return {
    // Within one bucket by construction, except by a float step at the bucket's end, or for a
    // reading before the newest bucket (a clock that stepped back).
    into: into >= 0 ? (into < width ? into : width * (1 - 2 ** -52)) : 0,
    buckets: live.slice(first).map(save),
  };
}

/**
 * Reads a saved window's fields from a snapshot's root, checked as untrusted input: `size` and
 * `window` must be the restoring owner's (buckets of another width cannot be laid on its own),
 * `into` within one bucket, and `buckets` from one to `size` entries, each read by `bucket`.
 *
 * @param root - the snapshot's root record, holding `size`, `window`, `into` and `buckets`
 * @param owner - how messages name what restores, such as `"breaker"`
 * @param bucket - reads one entry at `path`, or throws a `SnapshotError` naming it
 * @throws SnapshotError naming the first bad field
 */
export function readWindow<T>(
  root: Record<string, unknown>,
  size: number,
  window: number,
  owner: string,
  bucket: (value: unknown, path: string) => T,
): SavedWindow<T> {
  if (root.size !== size)
    read.fail("snapshot.size", `must be ${size} (the buckets of this ${owner}), got ${check.describe(root.size)}`);
  if (root.window !== window)
    read.fail(
      "snapshot.window",
      `must be ${window} (the window of this ${owner}, in ms), got ${check.describe(root.window)}`,
    );
  const width = window / size;
  const into = read.finite(root.into, "snapshot.into");
  if (!(into >= 0 && into < width))
    read.fail("snapshot.into", `must be 0 or more and under ${width} (ms, one bucket of this ${owner}), got ${into}`);
  const buckets = read
    .list(root.buckets, "snapshot.buckets", 1, size)
    .map((b, i) => bucket(b, `snapshot.buckets[${i}]`));
  return { into, buckets };
}

/**
 * A window whose newest bucket opened `into` ms before `now`, with `count − 1` buckets before it
 * (as {@link saveWindow} left them), each handed to `fill` oldest first to write its counts in:
 * a saved window laid onto another clock, the reading it was saved at becoming `now`.
 *
 * @param make - makes one empty bucket, as for `new Window`
 * @param options - the window's `size`, `window` and `evict`, and the `now` to lay it at (its
 *   `evict` is called on empty buckets while the window is laid)
 * @param into - how far `now` is into the newest bucket, in ms: 0 or more, under one bucket's width
 * @param count - how many buckets to lay, from 1 to `size`
 * @param fill - called once per bucket, oldest first, with its place in that order
 * @throws RangeError when the float grid at `now` is too coarse to place a bucket boundary
 */
export function layWindow<B extends Resettable>(
  make: () => B,
  options: WindowOptions<B> & { readonly now: number },
  into: number,
  count: number,
  fill: (bucket: B, i: number) => void,
): Window<B> {
  const now = options.now;
  const width = options.window / options.size;
  // The origin that puts `now` in bucket `count − 1`, `into` after its start. Bucket i opens at
  // origin + i·width as the doubles compute it, which can land a step either side of `now`:
  // nudge the origin by steps of `now`'s grid until `now` falls in that bucket.
  let origin = now - into - (count - 1) * width;
  const step = Math.max(Math.abs(now), Math.abs(origin)) * 2 ** -52 || Number.MIN_VALUE;
  for (let tries = 0; ; tries++) {
    if (origin + (count - 1) * width > now) origin -= step;
    else if (!(origin + count * width > now)) origin += step;
    else break;
    if (tries === 64)
      throw new RangeError(`cannot lay a window of ${width} ms buckets at ${now}: the float grid there is too coarse`);
  }
  const win = new Window(make, { ...options, now: origin });
  win.slot(now);
  let i = 0;
  win.each(now, (b) => fill(b, i++));
  return win;
}

/**
 * Checks that `now` can be told apart from `now` plus one bucket of `size` buckets over `window`
 * ms, which laying a window at `now` needs: a restore's argument, checked before its snapshot.
 *
 * @param owner - how the message names the method, such as `"Breaker.restore"`
 * @throws RangeError naming `owner`'s `now` when a bucket rounds away at that reading
 */
export function checkReading(now: number, size: number, window: number, owner: string): void {
  const width = window / size;
  if (!(now + width > now))
    throw new RangeError(
      `${owner} now (ms) ${now} is too coarse a reading for buckets of ${width} ms (window ÷ size): the bucket rounds away there`,
    );
}

/**
 * Where to lay a window saved `age` ms before `now`, in milliseconds: `now − age`, so its buckets'
 * boundaries fall where the saved ones' would have and what aged out since is gone. Past two
 * windows everything has aged out, and where the float grid at `now − age` is coarse (a step over
 * a thousandth of a bucket) it is laid nearer, two windows and the same part of a bucket back, so
 * that the boundaries still fall where the saved ones' would have.
 *
 * @param now - the restoring clock's reading, in milliseconds
 * @param age - how long before `now` the window was saved, in milliseconds: 0 or more
 * @param size - the window's buckets
 * @param window - how far back it reaches, in milliseconds
 */
export function layAt(now: number, age: number, size: number, window: number): number {
  const anchor = now - age;
  const width = window / size;
  // The remainder is exact in floats; a plain `now − 2·window` shifted the boundaries by a part
  // of a bucket, so a restored window aged its first passes out at other instants.
  if (age > 2 * window && !(Math.abs(anchor) * 2 ** -52 < width / 1_024)) return now - (2 * window + (age % width));
  return anchor;
}
