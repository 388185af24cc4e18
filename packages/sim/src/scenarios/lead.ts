// The figures every scenario's first table leads with, per run: goodput within the caller's
// deadline (a share and a rate), the backend's load (against its capacity, where it has one),
// the time to recover, and the calls wasted. One definition, so every tab reads them alike.
import type { RunResult } from "../result";
import { num, percent } from "../report";

/** The leading figures of one run. */
export interface Lead {
  /** Calls that succeeded within their deadline, over calls offered. */
  readonly goodputRate: number;
  /** Of those, a second over the whole run. */
  readonly goodputPerSecond: number;
  /** Attempts that reached the backend, a second over the whole run. */
  readonly backendPerSecond: number;
  /** Seconds from `after` to recovery, or the rest of the run when it never recovered. */
  readonly recoverySeconds: number;
  /** Whether it recovered at all. */
  readonly recovered: boolean;
  /** Attempts served for a caller who had stopped waiting. */
  readonly wasted: number;
}

/** Options of {@link lead}. */
export interface LeadOptions {
  /** When recovery is measured from, ms after the run's start (the end of the outage, of the trigger). */
  readonly after: number;
  /** Consecutive one-bucket stretches that must each reach 90 % for it to count as recovered. @defaultValue 1 */
  readonly hold?: number;
}

/**
 * The run's leading figures. Recovery is the first bucket at or after `after` from which `hold`
 * buckets in a row each had at least 90 % of the calls offered in them succeed within the deadline.
 */
export function lead(r: RunResult, options: LeadOptions): Lead {
  const s = r.series;
  const seconds = r.duration / 1_000;
  const hold = options.hold ?? 1;
  const good = (i: number): boolean => s.offered[i] > 0 && s.goodput[i] >= 0.9 * s.offered[i];
  let recovery = -1;
  for (let i = 0; i < s.t.length && recovery < 0; i++) {
    if (s.t[i] < options.after || s.t[i] >= r.duration) continue;
    let ok = true;
    for (let j = i; j < i + hold && ok; j++) ok = j < s.t.length && s.t[j] < r.duration && good(j);
    if (ok) recovery = (s.t[i] - options.after) / 1_000;
  }
  return {
    goodputRate: r.summary.goodputRate ?? 0,
    goodputPerSecond: r.summary.goodput / seconds,
    backendPerSecond: r.summary.backendLoad / seconds,
    // Never negative: a trouble that ends at or past the run's end (the knobs are drawn one by
    // one, so the page and a property may ask for one) has no recovery to measure, and reads 0.
    recoverySeconds: recovery < 0 ? Math.max(0, r.duration - options.after) / 1_000 : recovery,
    recovered: recovery >= 0,
    wasted: r.summary.wasted,
  };
}

/** The lead's columns, in the order every first table shows them. */
export const LEAD_COLUMNS = [
  "goodput within the deadline",
  "goodput",
  "backend load",
  "back to 90 % goodput after",
  "calls wasted",
] as const;

/** The lead's cells: `capacity` (calls/s) shows the backend's load as a share of it. */
export function leadCells(l: Lead, capacity?: number): string[] {
  return [
    percent(l.goodputRate),
    `${num(l.goodputPerSecond)}/s`,
    loadCell(l.backendPerSecond, capacity),
    recovery(l.recovered, l.recoverySeconds),
    String(l.wasted),
  ];
}

/** The backend's load as a cell, `perSecond` calls a second: `"150/s"`, or `"150/s (75.0 % of capacity)"` with a `capacity` (calls/s). */
export function loadCell(perSecond: number, capacity?: number): string {
  return capacity === undefined
    ? `${num(perSecond)}/s`
    : `${num(perSecond)}/s (${percent(perSecond / capacity)} of capacity)`;
}

/**
 * How soon the run `id` recovered, from the figures {@link leadFigures} wrote: `"3 s"` followed by
 * `after` (`" after the trigger"`), or `"never"`.
 */
export function recoveryText(figures: Readonly<Record<string, number>>, id: string, after = ""): string {
  return recovery(figures[`${id}.recovered`] === 1, figures[`${id}.recoverySeconds`], after);
}

function recovery(recovered: boolean, seconds: number, after = ""): string {
  return recovered ? `${num(seconds)} s${after}` : "never";
}

/** Writes `l` into `figures` under `id.`: goodputRate, goodputPerSecond, backendPerSecond, recoverySeconds, recovered (0 or 1), wasted. */
export function leadFigures(figures: Record<string, number>, id: string, l: Lead): void {
  figures[`${id}.goodputRate`] = l.goodputRate;
  figures[`${id}.goodputPerSecond`] = l.goodputPerSecond;
  figures[`${id}.backendPerSecond`] = l.backendPerSecond;
  figures[`${id}.recoverySeconds`] = l.recoverySeconds;
  figures[`${id}.recovered`] = l.recovered ? 1 : 0;
  figures[`${id}.wasted`] = l.wasted;
}

/** `[min, max]` of `xs` as text: `"3.2–4.1 %"` for shares (`unit` "%"), `"1–3 s"` otherwise. */
export function spread(xs: readonly number[], unit: "%" | "s" | "", digits = 0): string {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  if (unit === "%") return lo === hi ? percent(lo) : `${percent(lo).replace(" %", "")}–${percent(hi)}`;
  const f = (x: number) => num(x, digits);
  const text = lo === hi ? f(lo) : `${f(lo)}–${f(hi)}`;
  return unit === "" ? text : `${text} ${unit}`;
}
