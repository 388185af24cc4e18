// @tideward/guard, two measurements.
//
// 1. The client: a guard with a breaker and a bucket (real clock, Math.random) around an async
//    function that resolves at once, side by side in one process with cockatiel's
//    wrap(retry, circuitBreaker) and opossum's fire with its defaults, and with the floor — an
//    await plus two clock reads plus the synchronous breaker and bucket, written by hand. Rounds
//    of each case are taken in turn, the order alternating, for at least 15 s in all, because
//    opossum slows once its ten-second window fills; the report gives the median round of each
//    and the median of the last third (the full window).
// 2. The server: admitNode in front of a trivial node:http handler against the bare handler,
//    under a loopback load from a child process (keep-alive connections, a fixed concurrency,
//    bounded in requests and time), each run twice in alternation.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { ExponentialBackoff, SamplingBreaker, circuitBreaker, handleAll, retry, wrap } from "cockatiel";
import CircuitBreaker from "opossum";
import { Breaker } from "@tideward/breaker";
import { admit, guard } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import { Bucket } from "@tideward/limiters";
import { systemClock } from "@tideward/time";
import { do_not_optimize } from "mitata";

// eslint-disable-next-line @typescript-eslint/require-await -- an async function that resolves at once is the point
const answer = async (): Promise<number> => 42;
// A bucket that never runs dry at these rates: the cost measured is the decision, not a refusal.
const RATE = 1e12;

const tideward = guard(answer, { breaker: new Breaker({}, systemClock()), bucket: new Bucket(RATE, { now: systemClock() }) });
const tidewardRetry = guard(answer, {
  breaker: new Breaker({}, systemClock()),
  bucket: new Bucket(RATE, { now: systemClock() }),
  retry: { attempts: 3 },
});
const tidewardTimeout = guard(answer, {
  breaker: new Breaker({}, systemClock()),
  bucket: new Bucket(RATE, { now: systemClock() }),
  timeout: 1_000,
});

const floorBreaker = new Breaker({}, systemClock());
const floorBucket = new Bucket(RATE, { now: systemClock() });
const floor = async (): Promise<number> => {
  const now = systemClock();
  if (!floorBucket.take(now)) throw new Error("rate");
  const permit = floorBreaker.allow(now, Math.random());
  if (permit === undefined) throw new Error("breaker");
  const v = await answer();
  permit.pass(systemClock());
  return v;
};

const cockatiel = wrap(
  retry(handleAll, { maxAttempts: 2, backoff: new ExponentialBackoff() }),
  circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new SamplingBreaker({ threshold: 0.5, duration: 10_000 }) }),
);
const opossum = new CircuitBreaker(answer);

interface Case {
  readonly name: string;
  readonly fn: () => Promise<unknown>;
}

type Loop = (n: number) => Promise<void>;

/** A loop of `n` awaited calls compiled for one case alone, so no call site goes megamorphic. */
function loop(fn: () => Promise<unknown>): Loop {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- a fresh function per case is the point
  const make = new Function("fn", "sink", "return async function loop(n) { for (let i = 0; i < n; i++) sink(await fn()); };") as (fn: () => Promise<unknown>, sink: (v: unknown) => void) => Loop;
  return make(fn, do_not_optimize);
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

async function client(): Promise<void> {
  const cases: Case[] = [
    { name: "@tideward/guard breaker + bucket", fn: () => tideward() },
    { name: "@tideward/guard breaker + bucket + retry", fn: () => tidewardRetry() },
    { name: "@tideward/guard breaker + bucket + timeout", fn: () => tidewardTimeout() },
    { name: "floor: await + 2 clock reads + breaker + bucket", fn: floor },
    { name: "cockatiel 3.2.1 wrap(retry, circuitBreaker)", fn: () => cockatiel.execute(answer) },
    { name: "opossum 9.0.0 fire (defaults)", fn: () => opossum.fire() },
  ];
  const loops = cases.map((c) => loop(c.fn));
  const ROUND = 150; // ms a case runs per round
  const TOTAL = Number(process.env.GUARD_BENCH_SECONDS ?? 18) * 1_000;
  const rounds: number[][] = cases.map(() => []);
  // Warm-up: every case a little, thrown away.
  for (const l of loops) await l(20_000);
  const began = performance.now();
  let r = 0;
  while (performance.now() - began < TOTAL) {
    const order = cases.map((_, i) => i);
    if (r++ % 2 === 1) order.reverse();
    for (const i of order) {
      let calls = 0;
      const t0 = performance.now();
      let t = t0;
      while (t - t0 < ROUND) {
        await loops[i](2_000);
        calls += 2_000;
        t = performance.now();
      }
      rounds[i].push((calls / (t - t0)) * 1_000);
    }
  }
  const elapsed = (performance.now() - began) / 1_000;
  const med = rounds.map((xs) => median(xs));
  const late = rounds.map((xs) => median(xs.slice(Math.floor((xs.length * 2) / 3))));
  console.log(`\nclient: calls per second, ${r} rounds of ${ROUND} ms per case taken in turn over ${elapsed.toFixed(1)} s`);
  console.log(`  ${"case".padEnd(50)} ${"median/s".padStart(12)} ${"last third/s".padStart(14)} ${"ns/call".padStart(9)}  tideward (first case) is`);
  for (const [i, c] of cases.entries()) {
    const ratio = i === 0 ? "—" : `${(med[0] / med[i]).toFixed(2)}× (last third ${(late[0] / late[i]).toFixed(2)}×)`;
    console.log(`  ${c.name.padEnd(50)} ${Math.round(med[i]).toLocaleString("en").padStart(12)} ${Math.round(late[i]).toLocaleString("en").padStart(14)} ${(1e9 / med[i]).toFixed(0).padStart(9)}  ${ratio}`);
  }
  console.log(`  guard's cost against the floor: ${(med[3] / med[0]).toFixed(2)}× (target: within 2×)`);
  opossum.shutdown();
}

/** Starts a trivial server, optionally behind the middleware; returns its port and a stop. */
async function server(guarded: boolean): Promise<{ port: number; stop: () => Promise<void> }> {
  const handler = (_req: unknown, res: ServerResponse): void => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  };
  // Generous limits, so nothing is refused: what is measured is the admission's cost.
  const admission = admit({ gate: 100_000, limits: [{ name: "burst", quota: 1e9, window: 1_000 }] });
  const middleware = admitNode(admission);
  const s = createServer(guarded ? (req, res) => middleware(req, res, () => handler(req, res)) : handler);
  s.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return {
    port: (s.address() as AddressInfo).port,
    stop: async () => {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    },
  };
}

/** Runs the loopback load generator against `port`; answers requests per second. */
async function load(port: number, seconds: number): Promise<{ rps: number; ok: number; other: number }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "load.mjs"), JSON.stringify({ port, seconds, connections: 32, limit: 2_000_000 })], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
  const backstop = setTimeout(() => child.kill(), (seconds + 20) * 1_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(backstop);
  if (code !== 0) throw new Error(`load generator exited with ${code}`);
  return JSON.parse(out) as { rps: number; ok: number; other: number };
}

async function http(): Promise<void> {
  const SECONDS = Number(process.env.GUARD_BENCH_HTTP_SECONDS ?? 4);
  const runs: Record<"bare" | "admitted", number[]> = { bare: [], admitted: [] };
  const RUNS = Number(process.env.GUARD_BENCH_HTTP_RUNS ?? 5);
  for (let i = 0; i < RUNS; i++) {
    for (const kind of i % 2 === 0 ? (["bare", "admitted"] as const) : (["admitted", "bare"] as const)) {
      const s = await server(kind === "admitted");
      try {
        const r = await load(s.port, SECONDS);
        if (r.other > 0) throw new Error(`${kind}: ${r.other} requests did not answer 200`);
        runs[kind].push(r.rps);
      } finally {
        await s.stop();
      }
    }
  }
  const bare = median(runs.bare);
  const admitted = median(runs.admitted);
  console.log(`\nserver: a trivial node:http handler under loopback load (32 keep-alive connections, ${SECONDS} s a run, ${RUNS} runs each, alternating, median)`);
  console.log(`  bare handler            ${Math.round(bare).toLocaleString("en").padStart(9)} requests/s  (runs: ${runs.bare.map((x) => Math.round(x)).join(", ")})`);
  console.log(`  admitNode + handler     ${Math.round(admitted).toLocaleString("en").padStart(9)} requests/s  (runs: ${runs.admitted.map((x) => Math.round(x)).join(", ")})`);
  console.log(`  admitted / bare: ${(admitted / bare).toFixed(3)}× (target: at least 0.95×)`);
}

const only = process.env.GUARD_BENCH;
if (only !== "http") await client();
if (only !== "client") await http();
