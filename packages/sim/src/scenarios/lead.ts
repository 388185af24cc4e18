// The figures every scenario's first table leads with, per run: goodput within the caller's
// deadline (a share and a rate), the backend's load (against its capacity, where it has one),
// the time to recover (as `recovery` defines it), and the calls wasted. One definition, so every
// tab reads them alike.
import { recovery } from "../recovery";
import type { RecoveryOptions } from "../recovery";
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
  /** Seconds from `after` to recovery, or the rest of the run when it never recovered (see `recovery`). */
  readonly recoverySeconds: number;
  /** Whether it recovered at all. */
  readonly recovered: boolean;
  /** Decimals its seconds are shown with: the series' resolution (one for half-second buckets). */
  readonly digits: number;
  /** Attempts served for a caller who had stopped waiting. */
  readonly wasted: number;
}

/** Options of {@link lead}: when recovery is measured from, and how long it must hold (ms), as {@link recovery} takes them. */
export type LeadOptions = RecoveryOptions;

/** The run's leading figures; its recovery as {@link recovery} defines it. */
export function lead(r: RunResult, options: LeadOptions): Lead {
  const seconds = r.duration / 1_000;
  // Never negative: a trouble that ends at or past the run's end (the knobs are drawn one by one,
  // so the page and a property may ask for one) has no recovery to measure, and reads 0.
  const back = recovery(r, options);
  return {
    goodputRate: r.summary.goodputRate ?? 0,
    goodputPerSecond: r.summary.goodput / seconds,
    backendPerSecond: r.summary.backendLoad / seconds,
    recoverySeconds: back.seconds,
    recovered: back.recovered,
    digits: Math.max(0, Math.ceil(-Math.log10(r.step / 1_000) - 1e-9)),
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
    recoveryCell(l.recovered, l.recoverySeconds, "", l.digits),
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
 * `after` (`" after the trigger"`), or `"never"`; `digits` decimals.
 */
export function recoveryText(figures: Readonly<Record<string, number>>, id: string, after = "", digits = 0): string {
  return recoveryCell(figures[`${id}.recovered`] === 1, figures[`${id}.recoverySeconds`], after, digits);
}

function recoveryCell(recovered: boolean, seconds: number, after: string, digits: number): string {
  return recovered ? `${num(seconds, digits)} s${after}` : "never";
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
