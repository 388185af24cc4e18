// @tideward/guard, two measurements.
//
// 1. The client: a guard with a breaker and a bucket (real clock, Math.random) around an async
//    function that resolves at once, side by side in one process with cockatiel's
//    wrap(retry, circuitBreaker) and opossum's fire with its defaults, and with the floor — an
//    await plus two clock reads plus the synchronous breaker and bucket, written by hand. Rounds
//    of each case are taken in turn, the order alternating, for at least 15 s in all, because
//    opossum slows once its ten-second window fills; the report gives the median round of each
//    and the median of the last third (the full window).
// 2. The server: admitNode (a gate and a per-key bucket) in front of a trivial node:http handler
//    against the bare handler, both servers up at once and driven in alternating short slices by
//    one load generator in a child process (keep-alive connections, a fixed concurrency, bounded
//    in requests and time), so that both see the same noise of a shared machine.
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

/** Starts a trivial server, optionally behind the middleware; returns its port, a count of requests served, and a stop. */
async function server(fields: "bare" | "always" | "low"): Promise<{ port: number; served: () => number; stop: () => Promise<void> }> {
  let served = 0;
  const handler = (_req: unknown, res: ServerResponse): void => {
    served++;
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  };
  // Generous limits, so nothing is refused: what is measured is the admission's cost.
  const admission = admit({ gate: 100_000, limits: [{ name: "burst", quota: 1e9, window: 1_000 }], fields: fields === "low" ? "low" : "always" });
  const middleware = admitNode(admission);
  const s = createServer(fields === "bare" ? handler : (req, res) => middleware(req, res, () => handler(req, res)));
  s.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return {
    port: (s.address() as AddressInfo).port,
    served: () => served,
    stop: async () => {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    },
  };
}

interface Load {
  /** Requests per second of each slice, per server. */
  readonly rates: number[][];
  /** This process's CPU time per request served in each slice, per server, in microseconds. */
  readonly cpu: number[][];
  readonly other: number;
}

/**
 * Drives both servers in alternating slices from one child process. At the edges of each slice
 * the child waits for this process to read its own CPU time and the requests served, which gives
 * the server's CPU per request: a figure the other tenants of a shared machine disturb far less
 * than throughput, which they steal cores from.
 */
async function load(servers: readonly { port: number; served: () => number }[], slices: number, slice: number): Promise<Load> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "load.mjs"), JSON.stringify({ ports: servers.map((s) => s.port), slices, slice, connections: 32 })], { stdio: ["ignore", "pipe", "inherit", "ipc"] });
  const cpu: number[][] = servers.map(() => []);
  let mark = { cpu: 0, served: 0 };
  child.on("message", (m: { start?: number; end?: number }) => {
    const used = process.cpuUsage();
    const now = used.user + used.system;
    if (m.start !== undefined) mark = { cpu: now, served: servers[m.start].served() };
    else if (m.end !== undefined) cpu[m.end].push((now - mark.cpu) / (servers[m.end].served() - mark.served));
    child.send("go");
  });
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (c: string) => (out += c));
  const backstop = setTimeout(() => child.kill(), slices * slice * 4 + 30_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(backstop);
  if (code !== 0) throw new Error(`load generator exited with ${code}`);
  const { rates, other } = JSON.parse(out) as { rates: number[][]; other: number };
  return { rates, cpu, other };
}

async function http(): Promise<void> {
  const SLICES = Number(process.env.GUARD_BENCH_HTTP_SLICES ?? 30);
  const SLICE = 250;
  const kinds = [
    ["bare handler", "bare"],
    ["admitNode, fields always", "always"],
    ["admitNode, fields low", "low"],
  ] as const;
  const servers = await Promise.all(kinds.map(([, k]) => server(k)));
  try {
    const { rates, cpu, other } = await load(servers, SLICES, SLICE);
    if (other > 0) throw new Error(`${other} requests did not answer 200`);
    console.log(`\nserver: a trivial node:http handler under loopback load (32 keep-alive connections; ${SLICES} slices of ${SLICE} ms to each server in turn, from one child process)`);
    console.log(`  ${"".padEnd(26)} ${"requests/s".padStart(11)} ${"(quartiles)".padEnd(14)} ${"CPU µs/request".padStart(15)}  against the bare handler: throughput, CPU`);
    for (const [i, [name]] of kinds.entries()) {
      const vs = i === 0 ? "—" : `${(median(rates[i]) / median(rates[0])).toFixed(3)}×, ${(median(cpu[0]) / median(cpu[i])).toFixed(3)}×`;
      console.log(`  ${name.padEnd(26)} ${Math.round(median(rates[i])).toLocaleString("en").padStart(11)} ${`${Math.round(quartile(rates[i], 1))}–${Math.round(quartile(rates[i], 3))}`.padEnd(14)} ${median(cpu[i]).toFixed(2).padStart(15)}  ${vs}`);
    }
    console.log("  (the CPU ratio is the throughput ratio a saturated server would see; target: at least 0.95×)");
  } finally {
    for (const s of servers) await s.stop();
  }
}

function quartile(xs: readonly number[], q: 1 | 3): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor((s.length * q) / 4)] ?? Number.NaN;
}

const only = process.env.GUARD_BENCH;
if (only !== "http") await client();
if (only !== "client") await http();
