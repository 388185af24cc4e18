import { check } from "@tideward/time/internal";
import type { RunResult } from "./result";

/** Options of {@link recovery}. */
export interface RecoveryOptions {
  /** When recovery is measured from, ms after the run's start: the end of an outage, of a trigger. */
  readonly after: number;
  /**
   * How long goodput must stay up for it to count, ms, rounded up to whole buckets of the run's
   * series: a lucky second between two waves of retries is not a recovery. @defaultValue one bucket
   */
  readonly hold?: number;
}

/** How soon a run recovered: see {@link recovery}. */
export interface Recovery {
  /** Whether it recovered within the run. */
  readonly recovered: boolean;
  /**
   * Seconds from `after` to the start of the first bucket of the stretch that held; when it did
   * not recover, the rest of the run after `after` (0 when `after` is at or past its end): never
   * negative.
   */
  readonly seconds: number;
}

/** The share of the calls offered in a bucket that must be goodput for the bucket to count as recovered. */
export const RECOVERED_SHARE = 0.9;

/**
 * The time to recover: the one definition every scenario reports and the playground reads.
 *
 * A bucket of the run's series is **good** when calls were offered in it and at least 90 % as
 * many ended in goodput in it (a success within the caller's deadline; every success, without
 * one). A bucket with no calls offered is not good: nothing was served. The run **recovered** at
 * the first bucket starting at or after `after` from which every bucket for `hold` ms (whole
 * buckets, all before the run's end) is good; its time to recover is from `after` to that
 * bucket's start, in seconds. A stretch cut short by the end of the run does not count.
 *
 * @throws TypeError when `run` is not a run's result; RangeError when `after` is not a finite
 *   number of ms or `hold` is not above 0
 */
export function recovery(run: RunResult, options: RecoveryOptions): Recovery {
  const s = run?.series;
  if (s === null || typeof s !== "object" || !Array.isArray(s.t))
    throw new TypeError(`recovery run must be a run's result (what simulate returns), got ${check.describe(run)}`);
  const o = check.options(options, ["after", "hold"], "recovery");
  const after = check.finite(o.after, "recovery after (ms)");
  const hold = o.hold === undefined ? 1 : Math.ceil(check.positive(o.hold, "recovery hold (ms)") / run.step);
  const { t, offered, goodput } = s;
  const end = run.duration;
  const good = (i: number): boolean => offered[i] > 0 && goodput[i] >= RECOVERED_SHARE * offered[i];
  for (let i = 0; i < t.length && t[i] < end; i++) {
    if (t[i] < after) continue;
    let ok = true;
    for (let j = i; j < i + hold && ok; j++) ok = j < t.length && t[j] < end && good(j);
    if (ok) return { recovered: true, seconds: (t[i] - after) / 1_000 };
  }
  return { recovered: false, seconds: Math.max(0, end - after) / 1_000 };
}
