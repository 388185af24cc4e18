// The replay CLI, a Node.js-only subpath: `tideward-sim replay access.log --limit "100/min per key"`.
import { readFile } from "node:fs/promises";
import { formatSpan } from "@tideward/time";
import { check } from "@tideward/time/internal";
import { parseLimit } from "./limit";
import type { Algorithm } from "./limit";
import { replayLog } from "./replay-log";
import type { KeyReport, ReplayReport } from "./replay-log";

export { parseLimit, describeLimit, limitPolicy } from "./limit";
export type { Algorithm, CandidateLimit } from "./limit";
export { parseLogLine, parseTime } from "./log";
export type { KeyField } from "./log";
export { replayLog } from "./replay-log";
export type { KeyReport, ReplayLogOptions, ReplayReport } from "./replay-log";

/** Where the CLI writes and how it reads a file: the process's by default, swappable in tests. */
export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly read: (path: string) => Promise<string>;
}

const processIo: Io = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  read: (path) => readFile(path, "utf8"),
};

const USAGE = `usage: tideward-sim replay <log> --limit <limit> [options]
       <limit>: "<count>/<unit> [per key|per all|per everyone] [burst <n>] [sliding|bucket|gcra|period]"

Replays an access log through a candidate limit and reports, per key, what it would have refused.

  <log>                 a file of requests: NDJSON ({"t": …, "key": …}), common or combined
                        log format (Apache, nginx), or "<time> <key>" lines; "-" reads stdin.
                        A time (NDJSON "t", "time", "timestamp" or "ts") is absolute: ISO 8601
                        with a zone, or a number of Unix seconds (below 10^11) or Unix ms
                        (10^11 and up); not traffic.replay's ms after the start
  --limit <limit>       the candidate limit, e.g. "100/min per key", "10/s burst 20 bucket":
                        <count>/<unit>, the unit ms, s, m, h or d, or sec, second, min,
                        minute, hr, hour or day (these plural or not), or a span such as
                        10s or 1h30m; then, in any order, "per key" (a limit for each key)
                        or "per all" (the default; "per everyone" too: one limit for all
                        traffic), "burst <n>" (bucket and gcra only; the count by default),
                        and the algorithm (or --algorithm)
  --algorithm <name>    sliding (default: an exact window), bucket, gcra or period
  --key <field>         what names the caller: ip (default), user, path, or an NDJSON field
  --top <n>             keys to list, most refused first (default 20; 0 lists all)
  --max-bytes <n>       the most memory the replay may use, bytes (default 536870912, 512 MiB)
  --json                print the whole report as JSON
  --help, -h            print this
`;

/**
 * Runs the CLI with `argv` (the arguments after the program's name) and returns the exit code:
 * 0 done, 1 the log could not be read, 2 a usage error.
 *
 * @throws TypeError (the promise rejects) when `argv` is not an array of text or `io` has not
 *   its three functions: the caller's mistake, not the user's
 */
export async function main(argv: readonly string[], io: Io = processIo): Promise<number> {
  if (!Array.isArray(argv))
    throw new TypeError(
      `main argv must be an array of text (the arguments after the program's name), got ${check.describe(argv)}`,
    );
  const args = Array.from(argv as readonly unknown[], (a, i) => {
    if (typeof a !== "string") throw new TypeError(`main argv[${i}] must be text, got ${check.describe(a)}`);
    return a;
  });
  if (io !== processIo) io = ioOf(io);
  if (args.length === 0 || args.includes("--help") || args.includes("-h")) {
    (args.length === 0 ? io.err : io.out)(USAGE);
    return args.length === 0 ? 2 : 0;
  }
  const command = args.shift();
  if (command !== "replay") {
    io.err(`tideward-sim: unknown command ${JSON.stringify(command)}; the command is "replay"\n\n${USAGE}`);
    return 2;
  }
  let path: string | undefined;
  let limitText: string | undefined;
  let algorithm: Algorithm | undefined;
  let key = "ip";
  let top = 20;
  let json = false;
  let maxBytes: number | undefined;
  const seen = new Set<string>();
  while (args.length > 0) {
    const a = args.shift() as string;
    const value = (): string => {
      // A flag next is the value left out (`--key --json`), not a key named "--json".
      const v = args[0];
      if (v === undefined || v.startsWith("--")) throw new UsageError(`${a} needs a value`);
      return args.shift() as string;
    };
    try {
      // A flag given twice would silently keep the last: say so instead.
      if ((OPTIONS as readonly string[]).includes(a.slice(2)) && a.startsWith("--")) {
        if (seen.has(a)) throw new UsageError(`${a} is given twice; give it once`);
        seen.add(a);
      }
      if (a === "--limit") limitText = value();
      else if (a === "--algorithm") {
        const v = value();
        if (!["sliding", "bucket", "gcra", "period"].includes(v))
          throw new UsageError(`--algorithm must be sliding, bucket, gcra or period, got ${JSON.stringify(v)}`);
        algorithm = v as Algorithm;
      } else if (a === "--key") key = value();
      else if (a === "--top") {
        const raw = value();
        // Decimal digits only: Number() would also take "", "0x10" and "1e3".
        const v = /^\d+$/.test(raw) ? Number(raw) : NaN;
        if (!Number.isSafeInteger(v))
          throw new UsageError(`--top must be a whole number, 0 or more, got ${JSON.stringify(raw)}`);
        top = v;
      } else if (a === "--max-bytes") {
        const raw = value();
        const v = /^\d+$/.test(raw) ? Number(raw) : NaN;
        if (!Number.isSafeInteger(v) || v < 1)
          throw new UsageError(
            `--max-bytes must be a whole number of bytes from 1 to ${Number.MAX_SAFE_INTEGER} (2^53 − 1), got ${JSON.stringify(raw)}`,
          );
        maxBytes = v;
      } else if (a === "--json") json = true;
      else if (a.startsWith("--")) {
        const near = check.closest(a.slice(2), OPTIONS);
        throw new UsageError(`unknown option ${a}${near === undefined ? "" : `; did you mean --${near}?`}`);
      } else if (path === undefined) path = a;
      else throw new UsageError(`one log at a time; got ${JSON.stringify(path)} and ${JSON.stringify(a)}`);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      io.err(`tideward-sim: ${e.message}\n\n${USAGE}`);
      return 2;
    }
  }
  if (path === undefined || limitText === undefined) {
    io.err(`tideward-sim: replay needs a log and --limit\n\n${USAGE}`);
    return 2;
  }
  let limit;
  try {
    limit = parseLimit(limitText, algorithm);
  } catch (e) {
    io.err(`tideward-sim: --limit ${JSON.stringify(limitText)}: ${(e as Error).message}\n`);
    return 2;
  }
  let text: string;
  try {
    text = path === "-" ? await readStdin() : await io.read(path);
  } catch (e) {
    io.err(`tideward-sim: cannot read ${path}: ${(e as Error).message}\n`);
    return 1;
  }
  let report: ReplayReport;
  try {
    report = replayLog(text, { limit, key, ...(maxBytes === undefined ? {} : { maxBytes }) });
  } catch (e) {
    io.err(`tideward-sim: ${path}: ${(e as Error).message.replace("replayLog maxBytes", "--max-bytes")}\n`);
    return 1;
  }
  io.out(json ? JSON.stringify(report, null, 2) + "\n" : format(report, top));
  return 0;
}

class UsageError extends Error {}

/** `io` read once and checked: its out, err and read, each a function. */
function ioOf(io: unknown): Io {
  const o = check.options(io as Io, ["out", "err", "read"], "main", "io");
  return {
    out: check.fn(o.out, "main io out"),
    err: check.fn(o.err, "main io err"),
    read: check.fn(o.read, "main io read"),
  };
}

/** The options `main` reads, for "did you mean". */
const OPTIONS = ["limit", "algorithm", "key", "top", "max-bytes", "json", "help"] as const;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;
const iso = (t: number): string => new Date(t).toISOString();
const share = (a: number, b: number): string => (b > 0 ? `${((100 * a) / b).toFixed(1)} %` : "–");

/** An instant of a report, as ISO 8601, or a TypeError naming it when it is not one. */
function instant(t: unknown, what: string): string {
  if (typeof t !== "number" || !(Math.abs(t) <= 8.64e15))
    throw new TypeError(`${what} must be a time in ms since the epoch, got ${check.describe(t)}`);
  return iso(t);
}

/**
 * The report as a table for a terminal, listing the `top` keys most refused (0: all of them).
 *
 * @throws TypeError when `r` is not a report from replayLog (a field missing or of the wrong
 *   kind), naming the field; RangeError or TypeError when `top` is not a whole number, 0 or more
 */
export function format(r: ReplayReport, top = 20): string {
  if (r === null || typeof r !== "object")
    throw new TypeError(`format report must be a report from replayLog, got ${check.describe(r)}`);
  check.integer(top, "format top", 0);
  if (typeof r.limit !== "string")
    throw new TypeError(`format report limit must be text, got ${check.describe(r.limit)}`);
  for (const field of ["requests", "keys", "refused", "keysRefused", "skippedCount"] as const)
    if (typeof r[field] !== "number")
      throw new TypeError(`format report ${field} must be a number, got ${check.describe(r[field])}`);
  for (const field of ["skipped", "perKey"] as const)
    if (!Array.isArray(r[field]))
      throw new TypeError(`format report ${field} must be an array, got ${check.describe(r[field])}`);
  const from = instant(r.from, "format report from");
  const to = instant(r.to, "format report to");
  if (r.skippedCount > 0) {
    const first: unknown = r.skipped[0];
    if (first === null || typeof first !== "object")
      throw new TypeError(`format report skipped[0] must be { line, reason }, got ${check.describe(first)}`);
  }
  const lines = [
    `limit: ${r.limit}`,
    `${plural(r.requests, "request")} from ${plural(r.keys, "key")} over ${formatSpan(r.to - r.from)} (${from} to ${to}); ${r.refused} would be refused (${share(r.refused, r.requests)}), from ${r.keysRefused} key${r.keysRefused === 1 ? "" : "s"}`,
  ];
  if (r.skippedCount > 0)
    lines.push(
      `${r.skippedCount} line${r.skippedCount === 1 ? "" : "s"} skipped (line ${r.skipped[0].line}: ${r.skipped[0].reason})`,
    );
  const shown = top === 0 ? r.perKey : r.perKey.slice(0, top);
  const rows = [
    ["key", "requests", "refused", "share", "first refused at"],
    // Every index, holes included: a hole is refused as the key's report it is not.
    ...Array.from(shown as readonly (KeyReport | null | undefined)[], (k, i) => {
      const what = `format report perKey[${i}]`;
      if (k === null || typeof k !== "object" || typeof k.key !== "string")
        throw new TypeError(`${what} must be a key's report (with its key as text), got ${check.describe(k)}`);
      return [
        k.key,
        String(k.requests),
        String(k.refused),
        share(k.refused, k.requests),
        k.firstRefused === null ? "–" : instant(k.firstRefused, `${what} firstRefused`),
      ];
    }),
  ];
  // A reduce, not Math.max(...): a log can have more keys than a call has room for arguments.
  const widths = rows[0].map((_, j) => rows.reduce((w, row) => Math.max(w, row[j].length), 0));
  lines.push("");
  for (const row of rows)
    lines.push(
      row
        .map((c, j) => (j === 0 || j === 4 ? c.padEnd(widths[j]) : c.padStart(widths[j])))
        .join("  ")
        .trimEnd(),
    );
  if (shown.length < r.perKey.length)
    lines.push(`… and ${r.perKey.length - shown.length} more keys (--top 0 lists all)`);
  return lines.join("\n") + "\n";
}
