// @tideward/otel: what reporting a guarded call costs.
//
// A guard with a breaker and a bucket (as guard.bench.ts's client) around an async function that
// resolves at once, side by side in one process: uninstrumented; instrumented on the API's no-op
// meter (no SDK installed: what a library user pays when the application wires no telemetry);
// and instrumented on @opentelemetry/sdk-metrics with a reader, as a service runs it. Then the
// same three around a real call, a GET to a node:http server on loopback, where the cost of the
// telemetry is measured against a call that does I/O.
//
// Rounds of each case are taken in turn, the order alternating, and each figure is the median
// round's nanoseconds per call (wall time; the machine is shared).
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
import type { Attempt } from "@tideward/guard";
import { Bucket } from "@tideward/limiters";
import { instrumentGuard } from "@tideward/otel";
import { systemClock } from "@tideward/time";
import { do_not_optimize } from "mitata";
import { RATE } from "./floors";

// eslint-disable-next-line @typescript-eslint/require-await -- an async function that resolves at once is the point
const answer = async (): Promise<number> => 42;

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
const sdkMeter = new MeterProvider({ readers: [reader] }).getMeter("bench");
const noopMeter = metrics.getMeter("bench");

const policies = () => ({ breaker: new Breaker({}, systemClock()), bucket: new Bucket(RATE, { now: systemClock() }) });

type Loop = (n: number) => Promise<void>;
function loop(fn: () => Promise<unknown>): Loop {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- a fresh function per case, so no call site goes megamorphic
  const make = new Function(
    "fn",
    "sink",
    "return async function loop(n) { for (let i = 0; i < n; i++) sink(await fn()); };",
  ) as (fn: () => Promise<unknown>, sink: (v: unknown) => void) => Loop;
  return make(fn, do_not_optimize);
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function side(
  title: string,
  cases: readonly { name: string; fn: () => Promise<unknown> }[],
  rounds: number,
  batch: number,
): Promise<void> {
  const loops = cases.map((c) => loop(c.fn));
  for (const l of loops) await l(batch); // warm-up, thrown away
  const ns: number[][] = cases.map(() => []);
  const order = cases.map((_, i) => i);
  for (let r = 0; r < rounds; r++) {
    for (const i of r % 2 === 0 ? order : [...order].reverse()) {
      const t = process.hrtime.bigint();
      await loops[i](batch);
      ns[i].push(Number(process.hrtime.bigint() - t) / batch);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  const first = median(ns[0]);
  console.log(`\n${title} — median of ${rounds} rounds of ${batch.toLocaleString("en")} calls, taken in turn`);
  for (const [i, c] of cases.entries()) {
    const m = median(ns[i]);
    const lo = Math.min(...ns[i]);
    console.log(
      `  ${c.name.padEnd(52)} ${m.toFixed(0).padStart(7)} ns (fastest ${lo.toFixed(0)})   ${i === 0 ? "—" : `${(m / first).toFixed(2)}× uninstrumented`}`,
    );
  }
}

await side(
  "A guarded call that resolves at once (breaker + bucket)",
  [
    { name: "guard, uninstrumented", fn: guard(answer, policies()) },
    {
      name: "instrumentGuard, API no-op meter (no SDK)",
      fn: instrumentGuard(answer, policies(), { meter: noopMeter, name: "a" }),
    },
    { name: "instrumentGuard, sdk-metrics", fn: instrumentGuard(answer, policies(), { meter: sdkMeter, name: "b" }) },
    {
      name: "instrumentGuard, sdk-metrics, durations: false",
      fn: instrumentGuard(answer, policies(), { meter: sdkMeter, name: "e", durations: false }),
    },
    {
      name: "instrumentGuard + retry, sdk-metrics, durations: false",
      fn: instrumentGuard(
        answer,
        { ...policies(), retry: { attempts: 2 } },
        { meter: sdkMeter, name: "f", durations: false },
      ),
    },
  ],
  31,
  20_000,
);

const server = createServer((_req, res) => res.end("ok"));
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
const get = async (_a: Attempt) => (await fetch(url)).text();
await side(
  "A guarded GET to a node:http server on loopback (breaker + bucket)",
  [
    { name: "guard, uninstrumented", fn: guard(get, policies()) },
    {
      name: "instrumentGuard, API no-op meter (no SDK)",
      fn: instrumentGuard(get, policies(), { meter: noopMeter, name: "c" }),
    },
    { name: "instrumentGuard, sdk-metrics", fn: instrumentGuard(get, policies(), { meter: sdkMeter, name: "d" }) },
  ],
  15,
  400,
);
server.close();
await reader.shutdown();
