// The shedder in front of a real node:http server. Each request waits 1 ms on a (simulated)
// database and then burns 4 ms of CPU synchronously, so one core serves at most ~200 requests
// a second. A load generator in a child process offers three times that over loopback for two
// seconds, once with no shedder and once with one fed by LoadSampler's larger-of-CPU-and-event-
// loop reading; each run is bounded in requests and in time. The lines printed give, for each
// run, the requests offered, admitted, refused with 503 and left without an answer, and the
// latency percentiles of the admitted ones, then a line on what each column and row means.
//
// Why the database wait: a shedder counts calls in flight, from `allow` to `pass`. A handler
// that is synchronous from start to end is never more than one call in flight, and its queue
// lives in the kernel where no in-process shedder can see it; real handlers await something.
import { performance } from "node:perf_hooks";
import { Shedder } from "@tideward/shedder";
import { LoadSampler } from "@tideward/shedder/node";
import { generate, open, serve, shed } from "./load/busy-server";
import type { Admit, Answer, Busy, Seen } from "./load/busy-server";

export type { Answer } from "./load/busy-server";

/** How one run is set up. */
export interface HttpRun {
  /** Whether a shedder guards the server. */
  readonly shed: boolean;
  /** Offered requests per second. */
  readonly rate: number;
  /** How long the generator sends, in milliseconds (it also stops after `count` requests). */
  readonly duration: number;
  /** The most requests the generator sends. */
  readonly count: number;
  /** How long the generator waits for answers after it stops sending, in milliseconds. */
  readonly grace: number;
  /** CPU each request burns synchronously, in milliseconds. */
  readonly burn?: number;
  /** The (simulated) database wait before the burn, in milliseconds. */
  readonly wait?: number;
}

/** What the load generator saw (its calls answered 200 in the order answered), and the server. */
export interface HttpResult extends Pick<Seen, "sent" | "ok" | "refused" | "failed" | "unanswered" | "elapsed"> {
  /** Requests that reached the server's handler. */
  readonly handled: number;
  /** The highest load reading (thousandths) the shedder was handed; 0 without a shedder. */
  readonly peakLoad: number;
}

/** The p-th percentile (nearest rank) of the latencies (ms) of `answers`; NaN when there are none. */
export function percentile(answers: readonly Answer[], p: number): number {
  const sorted = answers.map((a) => a[1]).sort((a, b) => a - b);
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Starts the server (load/busy-server.ts's), drives it with the generator in a child process,
 * and stops both.
 */
export async function runHttp(run: HttpRun): Promise<HttpResult> {
  const { burn = 4, wait = 1 } = run;
  // A quick signal for a short run: a reading every 50 ms, the old value weighing 0.3.
  const sampler = run.shed ? new LoadSampler({ interval: 50, beta: 0.3 }) : undefined;
  const load = (): number => sampler?.load ?? 0;
  const policy = run.shed ? shed(new Shedder({}, performance.now()), load) : open;
  let handled = 0;
  let peakLoad = 0;
  const admit: Admit = (now, level) => {
    handled++;
    peakLoad = Math.max(peakLoad, load());
    return policy(now, level);
  };
  let server: Busy | undefined;
  try {
    server = await serve(admit, { wait, burn });
    const { port } = server;
    const { rate, duration, count, grace } = run;
    const { sent, ok, refused, failed, unanswered, elapsed } = await generate({
      port,
      path: "/",
      rate,
      duration,
      count,
      grace,
    });
    return { sent, ok, refused, failed, unanswered, elapsed, handled, peakLoad };
  } finally {
    sampler?.stop();
    await server?.close();
  }
}

/** A row of the table: a run, or the part of one due from `from` ms on. */
export interface Row {
  readonly name: string;
  readonly offered: number;
  readonly admitted: number;
  readonly refused: number;
  /** Offered, neither admitted nor refused: unanswered when the generator stopped waiting, or failed. */
  readonly lost: number;
  /** The admitted requests' latencies, ms. */
  readonly ok: readonly Answer[];
}

/** The row of a whole run, or of its requests due at `from` ms or later (request i is due at i·1000/rate ms). */
export function rowOf(name: string, r: HttpResult, rate: number, from = 0): Row {
  const ok = r.ok.filter(([due]) => due >= from);
  const refused = r.refused.filter(([due]) => due >= from).length;
  let offered = 0;
  for (let i = 0; i < r.sent; i++) if ((i * 1_000) / rate >= from) offered++;
  return { name, offered, admitted: ok.length, refused, lost: offered - ok.length - refused, ok };
}

/** One line of the table: offered, admitted, refused, no answer, then p50/p90/p99 of the admitted (ms). */
export function summary(row: Row): string {
  const ms = (p: number) => {
    const v = percentile(row.ok, p);
    return (Number.isNaN(v) ? "—" : v.toFixed(0)).padStart(6);
  };
  const counts = [row.offered, row.admitted, row.refused, row.lost].map((n, i) => String(n).padStart(i === 3 ? 9 : 8));
  return `${row.name.padEnd(24)}${counts.join(" ")}  ${ms(50)} ${ms(90)} ${ms(99)}`;
}

/** When the shedder's run is counted again without its start: before its first hot reading it admits everything. */
const SETTLED = 500;

/** The table and the lines under it that say what each column and row means. */
export function report(
  load: Pick<HttpRun, "rate" | "duration" | "count" | "grace">,
  unloaded: HttpResult,
  without: HttpResult,
  shedding: HttpResult,
): string[] {
  const rows = [
    rowOf("unloaded, 50/s", unloaded, 50),
    rowOf("no shedder", without, load.rate),
    rowOf("with shedder", shedding, load.rate),
    rowOf(`  due after ${SETTLED / 1_000} s`, shedding, load.rate, SETTLED),
  ];
  return [
    `${load.count} requests offered at ${load.rate}/s for ${load.duration / 1_000} s over loopback; the server does ~200/s (1 ms wait + 4 ms CPU each)`,
    `${"run".padEnd(24)} offered admitted  refused no answer     p50    p90    p99`,
    ...rows.map(summary),
    "What the columns and rows say (each row: offered = admitted + refused + no answer):",
    "  admitted         answered 200 by the server",
    "  refused          answered 503 at once, by the shedder",
    `  no answer        still unanswered ${load.grace / 1_000} s after the last request was sent (the server's backlog), or failed`,
    "  p50 p90 p99      latency of the admitted requests, ms, counted from when each was due: time queued counts",
    "  unloaded, 50/s   a few requests at an easy rate: the latency of a request that does not queue",
    `  due after ${SETTLED / 1_000} s  the shedder's run without its first ${SETTLED / 1_000} s: until its first hot CPU reading it admits everything, and those requests queue`,
  ];
}

/** The lines of a whole comparison: a few requests at an easy rate, then `load` without and with a shedder. */
export async function compareRuns(
  load: Pick<HttpRun, "rate" | "duration" | "count" | "grace">,
): Promise<{ lines: string[]; unloaded: HttpResult; without: HttpResult; shedding: HttpResult }> {
  const unloaded = await runHttp({ shed: false, rate: 50, duration: 400, count: 20, grace: 1_000 });
  const without = await runHttp({ shed: false, ...load });
  const shedding = await runHttp({ shed: true, ...load });
  return { lines: report(load, unloaded, without, shedding), unloaded, without, shedding };
}

/** Returns the lines this example prints: under ten seconds of real traffic. */
export async function main(): Promise<string[]> {
  return (await compareRuns({ rate: 600, duration: 2_000, count: 1_200, grace: 1_500 })).lines;
}
