import { instant } from "../backend";
import type { Adapter, PolicySpec } from "../policy";
import { replay } from "../replay";
import type { TraceRecord } from "../replay";
import { simulate } from "../simulate";
import { check } from "@tideward/time/internal";
import { maxBytesOf } from "../memory";
import { describeLimit, policyOf } from "./limit";
import type { CandidateLimit } from "./limit";
import { parseLogLine } from "./log";
import type { KeyField } from "./log";

/** What a candidate limit would have done to one key. */
export interface KeyReport {
  readonly key: string;
  readonly requests: number;
  readonly refused: number;
  /** When its first request would have been refused (ms since the epoch), or `null`. */
  readonly firstRefused: number | null;
}

/** What a candidate limit would have done to a whole log. */
export interface ReplayReport {
  /** The limit, in words. */
  readonly limit: string;
  readonly requests: number;
  readonly keys: number;
  readonly refused: number;
  /** Keys with at least one refusal. */
  readonly keysRefused: number;
  /** The first and last request's time, ms since the epoch. */
  readonly from: number;
  readonly to: number;
  /** Lines that could not be read, with why (the first ten), and how many there were. */
  readonly skipped: readonly { readonly line: number; readonly reason: string }[];
  readonly skippedCount: number;
  /** Every key, most refused first (then busiest, then by name). */
  readonly perKey: readonly KeyReport[];
  /** The replay's trace hash: the same log and limit always give the same one. */
  readonly hash: string;
}

/** Options of {@link replayLog}. */
export interface ReplayLogOptions {
  readonly limit: CandidateLimit;
  /** Which part of a line names the caller. @defaultValue "ip" (or the NDJSON field "key") */
  readonly key?: KeyField;
  /**
   * The most memory the replay may set aside, bytes: its per-key totals (about 112 B a key) and
   * the candidate limit's state (a sliding window keeps 8 B per call of its count, per key).
   * @defaultValue 536 870 912 (512 MiB)
   */
  readonly maxBytes?: number;
}

/** Clock readings a replay can hold, ms either side of the epoch (as `simulate` allows). */
const CLOCK_LIMIT = 2 ** 43;
/** The series' buckets a replay keeps at most: it reports totals, so a long log gets long buckets. */
const BUCKETS = 1_000;

/**
 * Replays an access log through a candidate limit on the simulator, at the log's own clock
 * readings, and reports what it would have refused, key by key: a dry run of a limit before it
 * is switched on.
 *
 * @throws RangeError when no line of the log can be read; TypeError when `text` is not text, or
 *   `options` (its `limit`, `key` or `maxBytes`) is missing, misspelt or of the wrong type
 */
export function replayLog(text: string, options: ReplayLogOptions): ReplayReport {
  if (typeof text !== "string")
    throw new TypeError(`replayLog text must be the log's text (a string), got ${check.describe(text)}`);
  if (options === undefined)
    throw new TypeError(
      'replayLog needs options with a limit: replayLog(text, { limit: parseLimit("100/min per key") })',
    );
  const o = check.options(options, ["limit", "key", "maxBytes"], "replayLog");
  // Checked, and the limiter made, before the log is read: a limit it cannot hold is named here.
  const spec = policyOf(o.limit, "replayLog limit");
  const limit = o.limit as CandidateLimit;
  if (o.key !== undefined && !(typeof o.key === "string" && o.key.length > 0))
    throw new TypeError(
      `replayLog key must be a field name such as "ip", "user" or "path", got ${check.describe(o.key)}`,
    );
  const maxBytes = o.maxBytes === undefined ? undefined : maxBytesOf(o.maxBytes, "replayLog maxBytes");
  const records: TraceRecord[] = [];
  const skipped: { line: number; reason: string }[] = [];
  let skippedCount = 0;
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    const r = parseLogLine(line, o.key);
    if (r === undefined) return;
    const why =
      typeof r === "string"
        ? r
        : Math.abs(r.t) > CLOCK_LIMIT
          ? `a time past ±2^43 ms of the epoch (${r.t})`
          : undefined;
    if (why !== undefined) {
      skippedCount++;
      if (skipped.length < 10) skipped.push({ line: i + 1, reason: why });
      return;
    }
    records.push(r as TraceRecord);
  });
  if (records.length === 0) {
    const why = skipped.length > 0 ? `; line ${skipped[0].line}: ${skipped[0].reason}` : "";
    throw new RangeError(`no request could be read from the log${why}`);
  }
  let from = Infinity;
  let to = -Infinity;
  for (const r of records) {
    if (r.t < from) from = r.t;
    if (r.t > to) to = r.t;
  }
  const trace = replay(records, { absolute: true });
  const first = new Map<number, number>();
  const duration = to - from + 1;
  let run;
  try {
    run = simulate({
      start: from,
      duration,
      // Only totals are reported: the series need no finer grain than a thousandth of the log.
      step: Math.max(1_000, duration / BUCKETS),
      traffic: trace,
      backend: instant,
      policies: [noting(spec, first)],
      perKey: true,
      ...(maxBytes === undefined ? {} : { maxBytes }),
    });
  } catch (e) {
    if (e instanceof RangeError && e.message.includes("simulate maxBytes"))
      throw new RangeError(e.message.replace("simulate maxBytes", "replayLog maxBytes"), { cause: e });
    throw e;
  }
  const totals = run.keys;
  if (totals === undefined) throw new Error("the replay kept no per-key totals");
  const perKey: KeyReport[] = totals.names.map((key, i) => ({
    key,
    requests: totals.offered[i],
    refused: totals.refused[i],
    firstRefused: first.get(i) ?? null,
  }));
  perKey.sort(
    (a, b) => b.refused - a.refused || b.requests - a.requests || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
  return {
    limit: describeLimit(limit),
    requests: run.summary.calls,
    keys: perKey.length,
    refused: run.summary.refused,
    keysRefused: perKey.filter((k) => k.refused > 0).length,
    from,
    to,
    skipped,
    skippedCount,
    perKey,
    hash: run.summary.hash,
  };
}

/** `spec`, noting the time of each key's first refusal in `first`. */
function noting(spec: PolicySpec, first: Map<number, number>): PolicySpec {
  return {
    name: spec.name,
    create(context): Adapter {
      const inner = spec.create(context);
      return {
        name: inner.name,
        side: inner.side,
        get reason() {
          return inner.reason;
        },
        admit(now, key, cost) {
          const token = inner.admit(now, key, cost);
          if (token === undefined && !first.has(key)) first.set(key, now);
          return token;
        },
        settle: (token, now, ok) => inner.settle(token, now, ok),
      };
    },
  };
}
