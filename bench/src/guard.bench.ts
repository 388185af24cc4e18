// @tideward/guard, three measurements.
//
// 1. The client: a guard with a breaker and a bucket (real clock, Math.random) around an async
//    function that resolves at once, side by side in one process with cockatiel's
//    wrap(retry, circuitBreaker) and opossum's fire with its defaults, and with two floors written
//    by hand: the issue's (an async function: an await plus two clock reads plus the synchronous
//    breaker and bucket) and the same work as a bare promise chain, the cheapest shape it has;
//    beside cockatiel also the floor under any wrapper that times its call (an async function
//    awaiting it between two clock readings, nothing else), which bounds the ratio any of them
//    can show against cockatiel.
//    Rounds of each case are taken in turn, the order alternating: the guard, the floors and
//    cockatiel for 12 s, then the guard, the floors and opossum for 30 s. Opossum's window is ten
//    seconds and it slows as the window fills, so most of that stretch is the cost a service
//    running for hours sees; the figures for each three seconds show its first ten too.
//
//    Between batches of calls the event loop turns (a setImmediate), as it does in any program
//    doing I/O. That matters for opossum: its window rotates and its snapshot (which every second
//    gathers and sorts the latencies of the whole ten-second window) runs on timers, and a loop
//    of awaits alone never lets a timer fire — so it would never rotate, never snapshot, and
//    look several times cheaper than it is. The time opossum's own timers take is measured
//    (its setInterval callbacks are timed) and charged to opossum, not to whichever case they
//    interrupted. Each figure is a case's whole time over its calls, by wall and by this
//    process's CPU time (which the machine's other tenants disturb less), with the median round,
//    the last third (opossum's window full), and how each cost moves over the run. Then the bytes
//    each case allocates per call, from V8's own count (allocation.ts).
// 2. The server in process: one request's path through the middleware with no socket, against
//    the bare handler, the handler writing the fields itself, and the fields set by setHeader.
// 3. The server under load (guard-http.ts): admitNode (a gate and a per-key bucket) in front of
//    node:http and of Express 5, against the bare servers and express-rate-limit; each server in
//    a process of its own, driven in alternating rounds by one load generator in another.
import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { ExponentialBackoff, SamplingBreaker, circuitBreaker, handleAll, retry, wrap } from "cockatiel";
import CircuitBreaker from "opossum";
import { Breaker } from "@tideward/breaker";
import { admit, guard } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import { Bucket } from "@tideward/limiters";
import { systemClock } from "@tideward/time";
import { do_not_optimize } from "mitata";
import { RATE, chainOf, floorOf, timedOf } from "./floors";
import { http } from "./guard-http";
import { allocation, fastest, median } from "./harness";

// eslint-disable-next-line @typescript-eslint/require-await -- an async function that resolves at once is the point
const answer = async (): Promise<number> => 42;

const tideward = guard(answer, {
  breaker: new Breaker({}, systemClock()),
  bucket: new Bucket(RATE, { now: systemClock() }),
});
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

const floor = floorOf(answer);
const chain = chainOf(answer);
const timedFloor = timedOf(answer);

const cockatiel = wrap(
  retry(handleAll, { maxAttempts: 2, backoff: new ExponentialBackoff() }),
  circuitBreaker(handleAll, {
    halfOpenAfter: 10_000,
    breaker: new SamplingBreaker({ threshold: 0.5, duration: 10_000 }),
  }),
);

/** Wall and CPU time (ms) opossum's own timers have taken so far. */
const background = { wall: 0, cpu: 0 };
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1_000;
}
// opossum sets two intervals per breaker (its window's rotation and its snapshot): while it is
// built, setInterval hands them timed callbacks, so their cost can be charged to opossum. It is
// built only when its stretch begins, so its timers run only then.
function makeOpossum(): CircuitBreaker {
  const realSetInterval = globalThis.setInterval;
  globalThis.setInterval = ((callback: (...a: unknown[]) => void, ms?: number, ...rest: unknown[]) =>
    realSetInterval(() => {
      const wall = performance.now();
      const cpu = cpuMs();
      try {
        callback(...rest);
      } finally {
        background.wall += performance.now() - wall;
        background.cpu += cpuMs() - cpu;
      }
    }, ms)) as typeof setInterval;
  try {
    return new CircuitBreaker(answer);
  } finally {
    globalThis.setInterval = realSetInterval;
  }
}

interface Case {
  readonly name: string;
  readonly fn: () => Promise<unknown>;
}

type Loop = (n: number) => Promise<void>;

/** A loop of `n` awaited calls compiled for one case alone, so no call site goes megamorphic. */
function loop(fn: () => Promise<unknown>): Loop {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- a fresh function per case is the point
  const make = new Function(
    "fn",
    "sink",
    "return async function loop(n) { for (let i = 0; i < n; i++) sink(await fn()); };",
  ) as (fn: () => Promise<unknown>, sink: (v: unknown) => void) => Loop;
  return make(fn, do_not_optimize);
}

/** One turn of the event loop: timers due by now run. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One round of one case: when it began in the run (s), its calls, and the time they took (ms). */
interface Round {
  readonly at: number;
  readonly calls: number;
  readonly wall: number;
  readonly cpu: number;
}

/** Nanoseconds per call over some rounds: all their time over all their calls (calls per second, inverted). */
function perCall(rs: readonly Round[], by: "wall" | "cpu"): number {
  let time = 0;
  let calls = 0;
  for (const r of rs) {
    time += r[by];
    calls += r.calls;
  }
  return (time * 1e6) / calls;
}

/**
 * Rounds of `ROUND` ms of each case in turn (the order alternating) for `seconds`, the event loop
 * turning every `BATCH` calls. The time opossum's timers take is taken out of the round it fell
 * in and charged to the case at `charge` (opossum's own), its next round paying what they took
 * since its last.
 */
async function rounds(
  cases: readonly Case[],
  seconds: number,
  charge = -1,
): Promise<{ rounds: Round[][]; elapsed: number; taken: number }> {
  const loops = cases.map((c) => loop(c.fn));
  const ROUND = 150;
  const out: Round[][] = cases.map(() => []);
  for (const l of loops) {
    await l(100_000); // warm-up, thrown away
    await turn();
  }
  const began = performance.now();
  const start = { ...background };
  let charged = { ...background };
  let r = 0;
  while (performance.now() - began < seconds * 1_000) {
    const order = cases.map((_, i) => i);
    if (r++ % 2 === 1) order.reverse();
    for (const i of order) {
      let calls = 0;
      const bg0 = { ...background };
      const c0 = cpuMs();
      const t0 = performance.now();
      let t = t0;
      while (t - t0 < ROUND) {
        await loops[i](BATCH);
        await turn();
        calls += BATCH;
        t = performance.now();
      }
      let wall = t - t0 - (background.wall - bg0.wall);
      let cpu = cpuMs() - c0 - (background.cpu - bg0.cpu);
      if (i === charge) {
        wall += background.wall - charged.wall;
        cpu += background.cpu - charged.cpu;
        charged = { ...background };
      }
      out[i].push({ at: (t0 - began) / 1_000, calls, wall, cpu });
    }
  }
  return { rounds: out, elapsed: (performance.now() - began) / 1_000, taken: background.wall - start.wall };
}

const BATCH = 2_000; // calls between turns of the event loop

function report(title: string, cases: readonly Case[], m: { rounds: Round[][]; elapsed: number; taken: number }): void {
  const { rounds: rs, elapsed } = m;
  // Calls per second over the whole run is all calls over all time; the median round, which a
  // burst of the machine's other work moves less, is shown beside it.
  const wall = rs.map((xs) => perCall(xs, "wall"));
  const cpu = rs.map((xs) => perCall(xs, "cpu"));
  const med = rs.map((xs) => median(xs.map((x) => (x.wall * 1e6) / x.calls)));
  const late = rs.map((xs) => perCall(xs.slice(Math.floor((xs.length * 2) / 3)), "wall"));
  console.log(
    `\n${title}: ns per call, ${rs[0].length} rounds of 150 ms per case taken in turn over ${elapsed.toFixed(1)} s, the event loop turning every ${BATCH} calls`,
  );
  if (m.taken > 0)
    console.log(`  opossum's own timers took ${(m.taken / 1_000).toFixed(2)} s of it, charged to opossum`);
  console.log(
    `  ${"case".padEnd(50)} ${"wall".padStart(6)} ${"CPU".padStart(6)} ${"median".padStart(7)} ${"last ⅓".padStart(7)}  guard (first case) is faster by: wall, CPU, median round, last third`,
  );
  for (const [i, c] of cases.entries()) {
    const ratio =
      i === 0
        ? "—"
        : `${(wall[i] / wall[0]).toFixed(2)}×, ${(cpu[i] / cpu[0]).toFixed(2)}×, ${(med[i] / med[0]).toFixed(2)}×, ${(late[i] / late[0]).toFixed(2)}×`;
    console.log(
      `  ${c.name.padEnd(50)} ${wall[i].toFixed(0).padStart(6)} ${cpu[i].toFixed(0).padStart(6)} ${med[i].toFixed(0).padStart(7)} ${late[i].toFixed(0).padStart(7)}  ${ratio}`,
    );
  }
  // How each cost moves over the run, in stretches of three seconds (opossum's as its window fills).
  const STRETCH = 3;
  const stretches = Math.floor(elapsed / STRETCH);
  console.log(`  over the run, ns per call (wall) in each ${STRETCH} s:`);
  console.log(
    `  ${"".padEnd(50)} ${Array.from({ length: stretches }, (_, k) => `${k * STRETCH}–${(k + 1) * STRETCH}s`.padStart(7)).join(" ")}`,
  );
  for (const [i, c] of cases.entries()) {
    const cells = Array.from({ length: stretches }, (_, k) => {
      const xs = rs[i].filter((x) => x.at >= k * STRETCH && x.at < (k + 1) * STRETCH);
      return (xs.length === 0 ? "" : perCall(xs, "wall").toFixed(0)).padStart(7);
    });
    console.log(`  ${c.name.padEnd(50)} ${cells.join(" ")}`);
  }
}

/**
 * Per block of `seconds` of the run, each peer's cost as a multiple of the guard's (case 0) in the
 * rounds of that block: the figure a service sees at that point of its life. Blocks from `from`
 * seconds on (opossum's window full) are the ones it is read on; their least is printed, and
 * beside it the least against case `floor` (the hand-written wrap), the bound of that ratio.
 */
function blocks(
  cases: readonly Case[],
  m: { rounds: Round[][]; elapsed: number },
  seconds: number,
  from: number,
  floor: number,
): void {
  const n = Math.floor(m.elapsed / seconds);
  const at = (i: number, k: number) => m.rounds[i].filter((x) => x.at >= k * seconds && x.at < (k + 1) * seconds);
  console.log(`  each ${seconds} s block, ns per call (wall), and the peer's cost over the guard's:`);
  console.log(
    `  ${"".padEnd(50)} ${Array.from({ length: n }, (_, k) => `${k * seconds}–${(k + 1) * seconds}s`.padStart(8)).join(" ")}`,
  );
  for (const [i, c] of cases.entries()) {
    const cells = Array.from({ length: n }, (_, k) => {
      const xs = at(i, k);
      return (xs.length === 0 ? "" : perCall(xs, "wall").toFixed(0)).padStart(8);
    });
    console.log(`  ${c.name.padEnd(50)} ${cells.join(" ")}`);
  }
  for (const [i, c] of cases.entries()) {
    if (i === 0) continue;
    const ratios = Array.from({ length: n }, (_, k) => perCall(at(i, k), "wall") / perCall(at(0, k), "wall"));
    const cpu = Array.from({ length: n }, (_, k) => perCall(at(i, k), "cpu") / perCall(at(0, k), "cpu"));
    const late = ratios.filter((_, k) => k * seconds >= from);
    const lateCpu = cpu.filter((_, k) => k * seconds >= from);
    console.log(`  ${`${c.name} / guard`.padEnd(50)} ${ratios.map((r) => `${r.toFixed(2)}×`.padStart(8)).join(" ")}`);
    if (c.name.startsWith("opossum")) {
      console.log(
        `  least block from ${from} s on: ${Math.min(...late).toFixed(2)}× by wall, ${Math.min(...lateCpu).toFixed(2)}× by CPU (no target of its own: read it beside the floor's, below)`,
      );
      // The same read against the hand-written wrap (a breaker and a bucket, no retry, no
      // library): the ratio code that does less than the guard reaches, its bound.
      const byFloor = (k: number) => perCall(at(i, k), "wall") / perCall(at(floor, k), "wall");
      const least = Math.min(
        ...Array.from({ length: n }, (_, k) => k)
          .filter((k) => k * seconds >= from)
          .map(byFloor),
      );
      console.log(
        `  the floor: ${c.name} over ${cases[floor].name}, least block from ${from} s on: ${least.toFixed(2)}×`,
      );
    }
  }
}

/**
 * Two stretches in this one process, as the independent harness measured: the guard with a
 * breaker, a bucket and retries (the shape cockatiel's wrap(retry, circuitBreaker) has) against
 * cockatiel, and against opossum's fire for 30 s, opossum read per 5 s block once its ten-second
 * window has filled; beside them the guard with a breaker and a bucket against the hand-written
 * async breaker + bucket wrap. They are apart because opossum's snapshots (millions of latencies
 * gathered and sorted each second) load the collector for everything in the process: cockatiel,
 * which allocates about 2.5 kB a call, reads a third slower beside them, which would flatter the
 * guard's ratio to it.
 */
async function client(): Promise<void> {
  const retryCase: Case = { name: "@tideward/guard breaker + bucket + retry", fn: () => tidewardRetry() };
  const guardCase: Case = { name: "@tideward/guard breaker + bucket", fn: () => tideward() };
  const floorCase: Case = { name: "hand-written async breaker + bucket wrap", fn: floor };
  const chainCase: Case = { name: "the same as a bare promise chain", fn: chain };
  const first: Case[] = [
    retryCase,
    guardCase,
    { name: "@tideward/guard breaker + bucket + timeout", fn: () => tidewardTimeout() },
    floorCase,
    chainCase,
    { name: "cockatiel 3.2.1 wrap(retry, circuitBreaker)", fn: () => cockatiel.execute(answer) },
    { name: "an async function awaiting it, two clock reads", fn: timedFloor },
  ];
  const one = await rounds(first, Number(process.env.GUARD_BENCH_COCKATIEL_SECONDS ?? 12));
  report("client, against cockatiel (the first case is the guard with retries)", first, one);
  const ns = (i: number, by: "wall" | "cpu") => perCall(one.rounds[i], by);
  console.log(
    `  the guard (breaker + bucket) over the hand-written wrap (the floor): ${(ns(1, "wall") / ns(3, "wall")).toFixed(2)}× by wall, ${(ns(1, "cpu") / ns(3, "cpu")).toFixed(2)}× by CPU (target: at most 1.25×); over the bare chain ${(ns(1, "cpu") / ns(4, "cpu")).toFixed(2)}× by CPU`,
  );
  console.log(
    `  cockatiel over the guard with retries: ${(ns(5, "wall") / ns(0, "wall")).toFixed(2)}× by wall, ${(ns(5, "cpu") / ns(0, "cpu")).toFixed(2)}× by CPU (no target of its own: read it beside the floor's, below)`,
  );
  // The floor under any wrapper that times its call: what 2.5× cockatiel leaves the guard.
  console.log(
    `  over an async function awaiting the call between two clock reads, by CPU: cockatiel ${(ns(5, "cpu") / ns(6, "cpu")).toFixed(2)}×, the guard with retries ${(ns(0, "cpu") / ns(6, "cpu")).toFixed(2)}×, the bare chain ${(ns(4, "cpu") / ns(6, "cpu")).toFixed(2)}× (2.5× cockatiel needs the guard within ${(ns(5, "cpu") / ns(6, "cpu") / 2.5).toFixed(2)}× of it)`,
  );
  console.log(
    `  the floor: cockatiel over the hand-written breaker + bucket wrap (no retry, no library): ${(ns(5, "wall") / ns(3, "wall")).toFixed(2)}× by wall, ${(ns(5, "cpu") / ns(3, "cpu")).toFixed(2)}× by CPU`,
  );
  const opossum = makeOpossum();
  const second: Case[] = [
    retryCase,
    guardCase,
    floorCase,
    { name: "opossum 9.0.0 fire (defaults)", fn: () => opossum.fire() },
  ];
  const two = await rounds(second, Number(process.env.GUARD_BENCH_SECONDS ?? 30), 3);
  report("client, against opossum (the first case is the guard with retries)", second, two);
  blocks(second, two, 5, 10, 2);
  opossum.shutdown();

  // Bytes allocated per call, read from V8's own account (allocation.ts, each case in a process
  // of its own). The loop alone (an awaited async function) is in every figure; the rest is the case's.
  console.log("\nclient: bytes allocated per call (the awaited loop alone is the first line, in every other)");
  for (const [name, label] of [
    ["async-loop", "the loop alone: await of an async function"],
    ["guard", "@tideward/guard breaker + bucket"],
    ["guard-retry", "@tideward/guard breaker + bucket + retry"],
    ["guard-timeout", "@tideward/guard breaker + bucket + timeout"],
    ["guard-floor", "hand-written async breaker + bucket wrap"],
    ["guard-chain", "the same as a bare promise chain"],
    ["cockatiel", "cockatiel 3.2.1 wrap(retry, circuitBreaker)"],
    ["opossum", "opossum 9.0.0 fire (its timers not running)"],
  ] as const) {
    console.log(`  ${label.padEnd(50)} ${allocation(name).toFixed(0).padStart(6)}`);
  }
}

// The two fields as admitNode writes them for the bench's limit, for the handler that writes
// them itself: what node:http alone charges for sending them.
const POLICY = '"burst";q=1000000000;w=1';
const LIMIT = '"burst";r=999999999;t=1';

/**
 * The same request path in process, with no socket: a response made, its head written (and its
 * end buffered), its close emitted. What the middleware's own JavaScript costs, apart from the
 * kernel and the load generator, and what node:http charges for two fields set one by one
 * against the same two written with the handler's own.
 */
function inProcess(): void {
  const socket = new Socket();
  Object.defineProperty(socket, "remoteAddress", { value: "127.0.0.1" });
  const req = new IncomingMessage(socket);
  const head = { "content-type": "text/plain" };
  const limit = [{ name: "burst", quota: 1e9, window: 1_000 }];
  const always = admitNode(admit({ gate: 100_000, limits: limit }));
  const low = admitNode(admit({ gate: 100_000, limits: limit, fields: "low" }));
  const gateOnly = admitNode(admit({ gate: 100_000 }));
  const respond = (res: ServerResponse) => () => void res.writeHead(200, head).end("ok");
  const run = (body: (res: ServerResponse) => void) => () => {
    const res = new ServerResponse(req);
    body(res);
    res.emit("close");
    return res;
  };
  fastest(
    "server, in process: one request's path with no socket (ns)",
    [
      { name: "bare: writeHead(200, fields) and end", fn: run((res) => respond(res)()) },
      {
        name: "the handler writing the 2 fields in its writeHead",
        fn: run(
          (res) =>
            void res
              .writeHead(200, { "content-type": "text/plain", "RateLimit-Policy": POLICY, RateLimit: LIMIT })
              .end("ok"),
        ),
      },
      {
        name: "the 2 fields by setHeader, then writeHead",
        fn: run(
          (res) =>
            void res.setHeader("RateLimit-Policy", POLICY).setHeader("RateLimit", LIMIT).writeHead(200, head).end("ok"),
        ),
      },
      { name: "admitNode: gate only, no fields", fn: run((res) => gateOnly(req, res, respond(res))) },
      { name: "admitNode: gate + per-key bucket, fields low", fn: run((res) => low(req, res, respond(res))) },
      { name: "admitNode: gate + per-key bucket, fields always", fn: run((res) => always(req, res, respond(res))) },
    ],
    { rounds: 30, batch: 20_000 },
  );
}

const only = process.env.GUARD_BENCH;
if (only !== "http" && only !== "in-process") await client();
if (only !== "client") {
  inProcess();
  if (only !== "in-process") await http();
}
