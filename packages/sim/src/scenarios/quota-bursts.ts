import { bucket, period, sliding } from "../policies/limiters";
import { simulate } from "../simulate";
import { bursts } from "../bursts";
import { defineScenario, seedKnob } from "../scenario";
import { outcome } from "../report";
import type { RunResult } from "../result";
import { checkEnd } from "./run-end";

/**
 * Buckets a row of the table (a burst's `every` ms) is recorded in: 50, fewer when there are
 * many rows, so a run keeps to about 2 000 buckets (each costs the recorder a close).
 */
function slicesOf(rows: number): number {
  return Math.max(1, Math.min(50, Math.floor(2_000 / rows)));
}

/** The parameters of {@link quotaBursts}. */
export interface QuotaBurstsParams {
  readonly [name: string]: number | boolean;
  readonly seed: number;
  readonly quota: number;
  readonly size: number;
  readonly spacing: number;
  readonly every: number;
  readonly at: number;
  readonly bursts: number;
  readonly align: boolean;
}

/**
 * The burst table: one burst of forty calls every two seconds, straddling a second boundary,
 * offered to a token bucket, a sliding window and an aligned period, all with a quota of twenty
 * a second. The bucket admits 21 of each burst, the window 20 and the period 40.
 */
export const quotaBursts = defineScenario<QuotaBurstsParams>({
  name: "quota-bursts",
  title: "Three quotas on bursty traffic",
  summary:
    "The burst table. Bursts of calls straddle a second boundary and meet three limiters with the same quota a second. The bucket spends its saved burst and then holds the rate (plus what refills during the burst: 21 of 40); the sliding window refuses the twenty-first call in any one-second stretch (20); the aligned period starts a fresh quota when the second turns over, so a burst split across the boundary passes whole (40). Same quota, three answers: the choice of limiter is a choice of what a burst may do.",
  knobs: [
    seedKnob,
    {
      kind: "integer",
      name: "quota",
      label: "Quota",
      doc: "Calls a second each limiter allows.",
      default: 20,
      min: 1,
      max: 10_000,
      step: 1,
      unit: "calls/s",
      // The first run is the token bucket: the guard's client bucket, a token a call.
      option: { path: "bucket.rate" },
    },
    {
      kind: "integer",
      name: "size",
      label: "Burst size",
      doc: "Calls in each burst.",
      default: 40,
      min: 1,
      max: 10_000,
      step: 1,
      unit: "calls",
    },
    {
      kind: "number",
      name: "spacing",
      label: "Spacing",
      doc: "Time between the calls of a burst.",
      default: 1.5,
      min: 0,
      max: 100,
      step: 0.1,
      unit: "ms",
    },
    {
      kind: "number",
      name: "every",
      label: "Burst every",
      doc: "Time from one burst to the next.",
      default: 2_000,
      min: 10,
      max: 60_000,
      step: 10,
      unit: "ms",
    },
    {
      kind: "number",
      name: "at",
      label: "First burst at",
      doc: "When the first burst begins; 970 ms puts half of a 40-call burst before the second boundary.",
      default: 970,
      min: 0,
      max: 60_000,
      step: 1,
      unit: "ms",
    },
    {
      kind: "integer",
      name: "bursts",
      label: "Bursts",
      doc: "How many bursts.",
      default: 4,
      min: 1,
      max: 1_000,
      step: 1,
    },
    {
      kind: "boolean",
      name: "align",
      label: "Align periods",
      doc: "Open periods on whole seconds of the clock (rather than at the first call after the last period closed).",
      default: true,
    },
  ],
  work: (p) => ({ calls: 3 * p.size * p.bursts, knobs: ["size", "bursts"] }),
  run(p, start) {
    // The run lasts as many rows of `every` ms as it takes to offer every call of every burst:
    // the last call's time as the traffic computes it, on the clock (at Date.now() scale a call
    // a fraction of a microsecond before a row's end may round onto it).
    const last = start + p.at + (p.bursts - 1) * p.every + (p.size - 1) * p.spacing;
    let rowCount = Math.max(p.bursts, Math.floor((last - start) / p.every) + 1);
    while (!(last < start + rowCount * p.every)) rowCount++;
    // Each row is one burst when every burst lies within its own `every` ms. Longer bursts, or
    // ones begun late, run into the next row (or overlap the next burst): a row is then a stretch
    // of time.
    const fits = rowCount === p.bursts && p.at + (p.size - 1) * p.spacing < p.every;
    checkEnd(
      "quota-bursts",
      start,
      rowCount * p.every,
      fits ? "bursts × every (ms)" : "at, bursts, every, size and spacing",
      fits
        ? `bursts ${p.bursts} × every ${p.every} ms`
        : `${rowCount} × every ${p.every} ms (to the last call of the last burst)`,
    );
    const slices = slicesOf(rowCount);
    const base = {
      seed: p.seed,
      start,
      duration: rowCount * p.every,
      // Finer than a row, so a run's course shows each burst as the spike it is (a row a bucket
      // drew every limiter as a flat line, a burst's 21 calls as 10.5 a second).
      step: p.every / slices,
      traffic: bursts({ size: p.size, spacing: p.spacing, every: p.every, at: p.at, count: p.bursts }),
    };
    const runs = [
      simulate({ ...base, label: "bucket", policies: [bucket(p.quota)] }),
      simulate({ ...base, label: "sliding window", policies: [sliding(p.quota, 1_000)] }),
      simulate({ ...base, label: "period", policies: [period(p.quota, 1_000, { align: p.align })] }),
    ];
    const inRow = (r: RunResult, k: number): number =>
      r.series.admitted.slice(k * slices, (k + 1) * slices).reduce((a, b) => a + b, 0);
    const rows = Array.from({ length: rowCount }, (_, k) => [k, ...runs.map((r) => inRow(r, k))]);
    const figures: Record<string, number> = {};
    runs.forEach((r, i) => {
      const id = ["bucket", "sliding", "period"][i];
      figures[`${id}.first`] = inRow(r, 0);
      figures[`${id}.admitted`] = r.summary.admitted;
    });
    const quota = `quota ${p.quota} a second`;
    const table = {
      title: fits
        ? `calls admitted of each burst of ${p.size}, ${p.spacing} ms apart, every ${p.every} ms; ${quota}`
        : `calls admitted in each ${p.every} ms of the run, bursts of ${p.size} calls ${p.spacing} ms apart every ${p.every} ms from ${p.at} ms, running ${(p.size - 1) * p.spacing > p.every ? "into each other" : "across the rows"}; ${quota}`,
      columns: [
        fits ? "burst" : `${p.every} ms`,
        `bucket (${p.quota}/s, burst ${p.quota})`,
        `sliding (${p.quota} in any 1 s)`,
        `period (${p.quota} a second${p.align ? ", aligned" : ""})`,
      ],
      rows,
    };
    const first = fits ? "of the first burst" : `in the first ${p.every} ms`;
    return outcome(
      runs,
      table,
      figures,
      `Same quota, three answers: the bucket passed ${figures["bucket.first"]} ${first} (its saved ${p.quota} and what refilled during the burst), the sliding window ${figures["sliding.first"]} (never more than ${p.quota} in any one-second stretch), the period ${figures["period.first"]} (a fresh quota when the second turns over).`,
    );
  },
});
