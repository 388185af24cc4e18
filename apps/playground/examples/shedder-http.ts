// The shedder in front of a real node:http server. Each request waits 1 ms on a (simulated)
// database and then burns 4 ms of CPU synchronously, so one core serves at most ~200 requests
// a second. A load generator in a child process offers three times that over loopback for two
// seconds, once with no shedder and once with one fed by LoadSampler's larger-of-CPU-and-event-
// loop reading; each run is bounded in requests and in time. The lines printed give latency
// percentiles of the admitted requests and how many were refused with 503.
//
// Why the database wait: a shedder counts calls in flight, from `allow` to `pass`. A handler
// that is synchronous from start to end is never more than one call in flight, and its queue
// lives in the kernel where no in-process shedder can see it; real handlers await something.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { Shedder } from "@tideward/shedder";
import { LoadSampler } from "@tideward/shedder/node";

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

/** One answered request: when it was due (ms from the start of the run) and its latency (ms). */
export type Answer = readonly [due: number, latency: number];

/** What the load generator saw. */
export interface HttpResult {
  readonly sent: number;
  /** The requests answered 200, in the order they were answered. */
  readonly ok: Answer[];
  /** The requests refused with 503. */
  readonly refused: Answer[];
  /** Requests that failed otherwise (connection errors, other statuses). */
  readonly failed: number;
  /** Requests still unanswered when the generator stopped waiting. */
  readonly unanswered: number;
  /** How long the generator ran, in milliseconds. */
  readonly elapsed: number;
  /** Requests that reached the server's handler. */
  readonly handled: number;
  /** The highest load reading (thousandths) the shedder was handed; 0 without a shedder. */
  readonly peakLoad: number;
}

/** Burns `ms` milliseconds of CPU on this thread. */
function burn(ms: number): number {
  const until = performance.now() + ms;
  let spins = 0;
  while (performance.now() < until) spins++;
  return spins;
}

/** The p-th percentile (nearest rank) of the latencies (ms) of `answers`; NaN when there are none. */
export function percentile(answers: readonly Answer[], p: number): number {
  const sorted = answers.map((a) => a[1]).sort((a, b) => a - b);
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Starts the server, drives it with the generator in a child process, and stops both. */
export async function runHttp(run: HttpRun): Promise<HttpResult> {
  const { burn: cpu = 4, wait = 1 } = run;
  // A quick signal for a short run: a reading every 50 ms, the old value weighing 0.3.
  const sampler = run.shed ? new LoadSampler({ interval: 50, beta: 0.3 }) : undefined;
  const shedder = run.shed ? new Shedder({}, performance.now()) : undefined;
  let handled = 0;
  let peakLoad = 0;
  const server = createServer((_req, res) => {
    handled++;
    const load = sampler?.load ?? 0;
    if (load > peakLoad) peakLoad = load;
    const ticket = shedder?.allow(performance.now(), load);
    if (shedder !== undefined && ticket === undefined) {
      res.writeHead(503, { "retry-after": "1" }).end();
      return;
    }
    void sleep(wait).then(() => {
      // The client gave up (the run is over): do not burn CPU for nobody.
      if (res.destroyed) {
        ticket?.fail();
        return;
      }
      burn(cpu);
      res.end("ok");
      ticket?.pass(performance.now());
    });
  });
  try {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const args = JSON.stringify({ port, rate: run.rate, duration: run.duration, count: run.count, grace: run.grace });
    const child = spawn(process.execPath, [join(import.meta.dirname, "load", "generator.mjs"), args], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    // The generator bounds itself; this is the backstop should it hang (generous: on a busy
    // host, starting a Node.js process alone can take seconds).
    const limit = setTimeout(() => child.kill(), run.duration + run.grace + 15_000);
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    clearTimeout(limit);
    if (code !== 0) throw new Error(`load generator exited with ${code}`);
    return { ...(JSON.parse(out) as Omit<HttpResult, "handled" | "peakLoad">), handled, peakLoad };
  } finally {
    sampler?.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** One line of the table: admitted, refused, unanswered, then p50/p90/p99 of the admitted (ms). */
export function summary(name: string, ok: readonly Answer[], refused: number, lost: number): string {
  const ms = (p: number) => {
    const v = percentile(ok, p);
    return (Number.isNaN(v) ? "—" : v.toFixed(0)).padStart(6);
  };
  return `${name.padEnd(24)} ${String(ok.length).padStart(8)} ${String(refused).padStart(8)} ${String(lost).padStart(9)}  ${ms(50)} ${ms(90)} ${ms(99)}`;
}

/** The lines of a whole comparison: a few requests at an easy rate, then `load` without and with a shedder. */
export async function compareRuns(
  load: Pick<HttpRun, "rate" | "duration" | "count" | "grace">,
): Promise<{ lines: string[]; unloaded: HttpResult; without: HttpResult; shedding: HttpResult }> {
  const unloaded = await runHttp({ shed: false, rate: 50, duration: 400, count: 20, grace: 1_000 });
  const without = await runHttp({ shed: false, ...load });
  const shedding = await runHttp({ shed: true, ...load });
  // The shedder needs a hot reading before it refuses: the calls let in before then queue up.
  const settled = shedding.ok.filter(([due]) => due >= 500);
  const row = (name: string, r: HttpResult) => summary(name, r.ok, r.refused.length, r.unanswered + r.failed);
  const lines = [
    `${load.count} requests offered at ${load.rate}/s for ${load.duration / 1_000} s over loopback; the server does ~200/s (1 ms wait + 4 ms CPU each)`,
    `${"run".padEnd(24)} admitted  refused  no answer     p50    p90    p99  (ms, admitted requests)`,
    row("unloaded, 50/s", unloaded),
    row("no shedder", without),
    row("with shedder", shedding),
    summary("  due after 0.5 s", settled, shedding.refused.filter(([due]) => due >= 500).length, 0),
  ];
  return { lines, unloaded, without, shedding };
}

/** Returns the lines this example prints: under ten seconds of real traffic. */
export async function main(): Promise<string[]> {
  return (await compareRuns({ rate: 600, duration: 2_000, count: 1_200, grace: 1_500 })).lines;
}
