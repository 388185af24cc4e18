// @tideward/otel: what reporting a guarded call costs.
//
// 1. A guard with a breaker and a bucket (guard.bench.ts's client) around an async function that
//    resolves at once, side by side in one process: uninstrumented; instrumented on the API's
//    no-op meter (no SDK installed, what a library's user pays when the application wires no
//    telemetry); instrumented on @opentelemetry/sdk-metrics, with its two duration histograms
//    and without them (`durations: false`). Such a guard makes one attempt a call and is counted
//    from its events alone. Then what one SDK `Histogram.record` costs by itself here.
// 2. The same with retries configured (three attempts, none needed): a guard whose calls are
//    watched to see them end.
// 3. The same guard around a real call, a GET to a node:http server on loopback: the telemetry
//    against a call that does I/O. A second uninstrumented guard runs beside the first as a
//    control: its ratio is what the order of the rounds and the machine's noise alone give.
//
// Then the targets: at most 1.15× CPU for the loopback GET with durations, at most 1.5× for the
// call that resolves at once with `durations: false` (both with one attempt a call and with
// retries configured).
//
// Rounds of each case are taken in turn, each round in its own seeded order (a fixed order gave the
// cases in the middle some 10 to 20 % more than those at the ends, which ran twice in a row). (A
// gc() before each batch is no remedy: it made every call here five to eight times slower.) Each
// time is the median round's nanoseconds per call by this process's CPU time (which the machine's
// other tenants disturb less than the wall clock), with the same by wall time after it; each ratio
// is the median over rounds of the case's time over the uninstrumented guard's in the same round.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { metrics } from "@opentelemetry/api";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { Breaker } from "@tideward/breaker";
import { guard } from "@tideward/guard";
import type { Attempt, GuardOptions } from "@tideward/guard";
import { Bucket } from "@tideward/limiters";
import { DURATION_BUCKETS, instrumentGuard } from "@tideward/otel";
import { systemClock } from "@tideward/time";
import { do_not_optimize } from "mitata";
import { RATE } from "./floors";

// eslint-disable-next-line @typescript-eslint/require-await -- an async function that resolves at once is the point
const answer = async (): Promise<number> => 42;

// A reader that exports once a minute, as a service's would: its collections are not in the figures.
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
const sdkMeter = new MeterProvider({ readers: [reader] }).getMeter("bench");
const noopMeter = metrics.getMeter("bench");

const policies = (more: GuardOptions<unknown> = {}): GuardOptions<unknown> => ({
  breaker: new Breaker({}, systemClock()),
  bucket: new Bucket(RATE, { now: systemClock() }),
  ...more,
});

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

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** This process's CPU time so far, in nanoseconds. */
function cpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1_000;
}

/** A seeded shuffle of `0 … n - 1` (xorshift32): each round's order, the same in every run. */
function orders(n: number, rounds: number): number[][] {
  let x = 0x9e3779b9;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  return Array.from({ length: rounds }, () => {
    const o = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [o[i], o[j]] = [o[j], o[i]];
    }
    return o;
  });
}

/**
 * Runs `cases` side by side; answers each case's ratio to the first: the median over rounds of
 * its CPU time a call over the first case's in the same round.
 */
async function side(title: string, cases: readonly Case[], rounds: number, batch: number): Promise<number[]> {
  const loops = cases.map((c) => loop(c.fn));
  for (const l of loops) await l(batch); // warm-up, thrown away
  const byCpu: number[][] = cases.map(() => []);
  const byWall: number[][] = cases.map(() => []);
  for (const order of orders(cases.length, rounds)) {
    for (const i of order) {
      const c = cpu();
      const t = process.hrtime.bigint();
      await loops[i](batch);
      byWall[i]?.push(Number(process.hrtime.bigint() - t) / batch);
      byCpu[i]?.push((cpu() - c) / batch);
      // The event loop turns between batches, as in any program doing I/O.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  // Paired by round: a case against the first in the same round, under the same load.
  const paired = (by: number[][], i: number) => median((by[i] ?? []).map((v, r) => v / (by[0]?.[r] ?? Number.NaN)));
  console.log(
    `\n${title} — median of ${rounds} rounds of ${batch.toLocaleString("en")} calls, each round in its own order; CPU (wall)`,
  );
  for (const [i, c] of cases.entries()) {
    const m = median(byCpu[i] ?? []);
    const w = median(byWall[i] ?? []);
    const ratio = i === 0 ? "—" : `${paired(byCpu, i).toFixed(2)}× (${paired(byWall, i).toFixed(2)}×) uninstrumented`;
    console.log(`  ${c.name.padEnd(50)} ${m.toFixed(0).padStart(8)} (${w.toFixed(0).padStart(8)}) ns   ${ratio}`);
  }
  return cases.map((_, i) => paired(byCpu, i));
}

const instant = await side(
  "1. A guarded call that resolves at once (breaker + bucket; one attempt a call)",
  [
    { name: "guard, uninstrumented", fn: guard(answer, policies()) },
    {
      name: "instrumentGuard, API no-op meter",
      fn: instrumentGuard(answer, policies(), { meter: noopMeter, name: "a" }),
    },
    { name: "instrumentGuard, sdk-metrics", fn: instrumentGuard(answer, policies(), { meter: sdkMeter, name: "b" }) },
    {
      name: "instrumentGuard, sdk-metrics, durations: false",
      fn: instrumentGuard(answer, policies(), { meter: sdkMeter, name: "c", durations: false }),
    },
  ],
  31,
  20_000,
);

{
  // One SDK histogram record with a guard's attributes: what each duration costs by itself.
  const h = sdkMeter.createHistogram("bench.record", {
    unit: "s",
    advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
  });
  const attributes = { "tideward.name": "api", "tideward.outcome": "success", "tideward.attempt.kind": "first" };
  const times: number[] = [];
  const walls: number[] = [];
  for (let r = 0; r < 31; r++) {
    const c = cpu();
    const t = process.hrtime.bigint();
    for (let i = 0; i < 20_000; i++) h.record(0.0001 * (i & 63), attributes);
    walls.push(Number(process.hrtime.bigint() - t) / 20_000);
    times.push((cpu() - c) / 20_000);
  }
  const name = "one sdk-metrics Histogram.record, 3 attributes".padEnd(50);
  console.log(`  ${name} ${median(times).toFixed(0).padStart(8)} (${median(walls).toFixed(0).padStart(8)}) ns`);
}

const retrying = await side(
  "2. The same with retries configured (3 attempts, none needed): its calls are watched",
  [
    { name: "guard, uninstrumented", fn: guard(answer, policies({ retry: { attempts: 3 } })) },
    {
      name: "instrumentGuard, sdk-metrics",
      fn: instrumentGuard(answer, policies({ retry: { attempts: 3 } }), { meter: sdkMeter, name: "d" }),
    },
    {
      name: "instrumentGuard, sdk-metrics, durations: false",
      fn: instrumentGuard(answer, policies({ retry: { attempts: 3 } }), {
        meter: sdkMeter,
        name: "e",
        durations: false,
      }),
    },
  ],
  31,
  20_000,
);

const server = createServer((_req, res) => res.end("ok"));
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
// No signal passed on: nothing here can abort an attempt, and the one such an attempt is handed
// is shared, so fetch would pile its abort listeners on it until they are collected.
const get = async (_: Attempt) => (await fetch(url)).text();
const loopback = await side(
  "3. A guarded GET to a node:http server on loopback (breaker + bucket)",
  [
    { name: "guard, uninstrumented", fn: guard(get, policies()) },
    { name: "guard, uninstrumented, a second (the control)", fn: guard(get, policies()) },
    { name: "instrumentGuard, sdk-metrics", fn: instrumentGuard(get, policies(), { meter: sdkMeter, name: "f" }) },
    {
      name: "instrumentGuard, sdk-metrics, durations: false",
      fn: instrumentGuard(get, policies(), { meter: sdkMeter, name: "g", durations: false }),
    },
  ],
  31,
  200,
);
server.closeAllConnections();
server.close();
await reader.shutdown();

const verdict = (ratio: number | undefined, target: number) =>
  `${(ratio ?? Number.NaN).toFixed(2)}× (${(ratio ?? Number.NaN) <= target ? "met" : "missed"})`;
console.log("\nTargets, by CPU against the same guard uninstrumented:");
console.log(
  `  a GET on loopback, with durations: at most 1.15×: ${verdict(loopback[2], 1.15)}; the control ${(loopback[1] ?? Number.NaN).toFixed(2)}×`,
);
console.log(
  `  a call that resolves at once, durations: false: at most 1.5×: ${verdict(instant[3], 1.5)} with one attempt a call, ${verdict(retrying[2], 1.5)} with retries configured`,
);
