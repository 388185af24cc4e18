import type { RunResult } from "./result";

// The series columns, in the order a CSV lists them (refusals by reason follow `refused`): every
// series of a result, in the result's order.
const COLUMNS = [
  "offered",
  "attempts",
  "retries",
  "hedges",
  "admitted",
  "refused",
  "succeeded",
  "failed",
  "timedOut",
  "completed",
  "gaveUp",
  "goodput",
  "inFlight",
  "latencyMean",
  "p50",
  "p95",
  "p99",
  "backendLoad",
  "backendBusy",
  "backendQueue",
  "backendCpu",
  "wasted",
  "dropped",
  "amplification",
] as const;

function cell(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "";
  return String(value);
}

function quote(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * A run's time series as CSV (RFC 4180): a header, then one row per bucket. `t` is the bucket's
 * start in milliseconds after the run's start (add `start` for the clock reading); refusals by
 * reason are columns `refused:<reason>`; an empty cell is a bucket with nothing to measure.
 */
export function toCsv(run: RunResult): string {
  const s = run.series;
  const reasons = Object.keys(s.refusedBy);
  const header = ["t", ...COLUMNS.slice(0, 6), ...reasons.map((r) => `refused:${r}`), ...COLUMNS.slice(6)];
  const lines = [header.map(quote).join(",")];
  for (let i = 0; i < s.t.length; i++) {
    const row = [
      cell(s.t[i]),
      ...COLUMNS.slice(0, 6).map((c) => cell(s[c][i])),
      ...reasons.map((r) => cell(s.refusedBy[r][i])),
      ...COLUMNS.slice(6).map((c) => cell(s[c][i])),
    ];
    lines.push(row.join(","));
  }
  return lines.join("\n") + "\n";
}

/**
 * A run as JSON text. A result is plain data already (`JSON.stringify` works on it); this
 * indents it and is the inverse of `JSON.parse`, with `null` wherever a bucket had nothing to
 * measure.
 */
export function toJson(run: RunResult, indent = 0): string {
  return JSON.stringify(run, null, indent);
}
