import { check } from "@tideward/time/internal";
import type { RunResult, Series } from "./result";

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

function cell(value: unknown): string {
  return typeof value === "number" && Number.isFinite(value) ? String(value) : "";
}

function quote(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** `value` as a run's result, or a TypeError naming `what` (`"toCsv run"`) and what it got. */
function runOf(value: unknown, what: string): RunResult {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new TypeError(`${what} must be a run's result (what simulate returns), got ${check.describe(value)}`);
  return value as RunResult;
}

/** Series `name` of `series`, read once: an array, or a TypeError naming it. */
function column(series: Series, name: keyof Series, what: string): readonly unknown[] {
  const c = series[name];
  if (!Array.isArray(c)) throw new TypeError(`${what} series ${name} must be an array, got ${check.describe(c)}`);
  return c;
}

/**
 * A run's time series as CSV (RFC 4180): a header, then one row per bucket. `t` is the bucket's
 * start in milliseconds after the run's start (add `start` for the clock reading); refusals by
 * reason are columns `refused:<reason>`; an empty cell is a bucket with nothing to measure.
 *
 * @throws TypeError when `run` is not a run's result (or its series are not arrays), naming it
 */
export function toCsv(run: RunResult): string {
  const s = runOf(run, "toCsv run").series;
  if (s === null || typeof s !== "object")
    throw new TypeError(`toCsv run series must be a run's series, got ${check.describe(s)}`);
  const t = column(s, "t", "toCsv run");
  const by = s.refusedBy;
  if (by === null || typeof by !== "object")
    throw new TypeError(`toCsv run series refusedBy must be a record of arrays, got ${check.describe(by)}`);
  const reasons = Object.keys(by);
  const columns = [
    ...COLUMNS.slice(0, 6).map((c) => column(s, c, "toCsv run")),
    ...reasons.map((r) => {
      const c = by[r];
      if (!Array.isArray(c))
        throw new TypeError(
          `toCsv run series refusedBy ${JSON.stringify(r)} must be an array, got ${check.describe(c)}`,
        );
      return c as readonly unknown[];
    }),
    ...COLUMNS.slice(6).map((c) => column(s, c, "toCsv run")),
  ];
  const header = ["t", ...COLUMNS.slice(0, 6), ...reasons.map((r) => `refused:${r}`), ...COLUMNS.slice(6)];
  const lines = [header.map(quote).join(",")];
  for (let i = 0; i < t.length; i++) lines.push([cell(t[i]), ...columns.map((c) => cell(c[i]))].join(","));
  return lines.join("\n") + "\n";
}

/**
 * A run as JSON text. A result is plain data already (`JSON.stringify` works on it); this
 * indents it by `indent` spaces (a whole number, 0 or more; JSON caps it at 10) and is the inverse
 * of `JSON.parse`, with `null` wherever a bucket had nothing to measure.
 *
 * @throws TypeError when `run` is not a run's result; RangeError or TypeError for a bad `indent`
 */
export function toJson(run: RunResult, indent = 0): string {
  return JSON.stringify(runOf(run, "toJson run"), null, check.integer(indent, "toJson indent", 0));
}
