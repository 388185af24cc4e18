// Whether a retry budget's floor should scale with its caller's rate: `pnpm bench claims-budget-floor`.
// Not a benchmark: the sweep behind one of the claims (see `pnpm claims`). The guard's default
// budget is Finagle's: a fifth of first attempts, on top of a floor of 10 retries a second, over
// 10 s. Below 50 calls a second the floor is the larger part, and at 10 calls a second it allows
// a retry for every call: the budget never binds. This sweeps callers from 1 to 500 calls a second
// against a backend failing half its calls (the load retries add, and the calls they save), with
// no budget, the fixed floor, no floor, and a floor that scales with the caller's rate (a tenth of
// it, at most 10 a second); then the metastable overload at its defaults, where the guard's
// default (client breaker and budget) is set against the breaker alone, floor by floor.
//   flock /tmp/tideward-bench.lock nice pnpm bench claims-budget-floor [--quick]
import { Backoff, Jitter } from "@tideward/backoff";
import { client } from "@tideward/breaker";
import { backends, latency, policy, simulate, traffic } from "@tideward/sim";
import type { RunResult } from "@tideward/sim";
import { spread, table } from "./sweep/stats";

const quick = process.argv.includes("--quick");
const SEEDS = Array.from({ length: quick ? 2 : 5 }, (_, i) => i + 1);
const RATES = quick ? [2, 10, 50, 200] : [1, 2, 5, 10, 20, 50, 100, 200, 500];

/** A budget's floor, in retries a second, for a caller at `rate` calls a second; `undefined` for no budget at all. */
interface Floor {
  readonly label: string;
  readonly at: (rate: number) => number | undefined;
}

const FLOORS: readonly Floor[] = [
  { label: "no budget", at: () => undefined },
  { label: "floor 10/s (the default)", at: () => 10 },
  { label: "no floor", at: () => 0 },
  { label: "floor a tenth of the rate, at most 10/s", at: (rate) => Math.min(10, rate / 10) },
];

const budgetOf = (floor: number | undefined) => (floor === undefined ? false : { ratio: 0.2, minPerSecond: floor });

/** A caller at `rate` against a backend failing half its calls, up to 4 attempts (50 ms doubling, full jitter). */
function failing(rate: number, floor: number | undefined, seed: number): RunResult {
  return simulate({
    seed,
    duration: 120_000,
    traffic: traffic.poisson({ rate }),
    backend: { latency: latency.exponential(10), failures: 0.5 },
    client: {
      retry: {
        backoff: new Backoff({ base: 50, factor: 2, cap: 2_000, attempts: 4, jitter: Jitter.full }),
        budget: budgetOf(floor),
      },
    },
  });
}

const f2 = (x: number): string => x.toFixed(2);
const range = (xs: readonly number[], digits = 2): string => {
  const s = spread(xs);
  return s.min.toFixed(digits) === s.max.toFixed(digits)
    ? s.min.toFixed(digits)
    : `${s.min.toFixed(digits)}–${s.max.toFixed(digits)}`;
};

console.log(
  `## A backend failing half its calls: attempts a call (the load) and calls that succeeded, seeds ${SEEDS[0]}–${SEEDS.at(-1)}\n`,
);
const rows: string[][] = [];
for (const rate of RATES) {
  const row = [`${rate}`];
  for (const floor of FLOORS) {
    const runs = SEEDS.map((seed) => failing(rate, floor.at(rate), seed));
    row.push(
      `${range(runs.map((r) => r.summary.amplification ?? 0))}× (${range(
        runs.map((r) => (r.summary.successRate ?? 0) * 100),
        1,
      )} %)`,
    );
  }
  rows.push(row);
  process.stderr.write(`rate ${rate} done\n`);
}
table(["calls/s", ...FLOORS.map((f) => f.label)], rows);

console.log(`\n## The metastable overload at its defaults (150 calls/s on 200/s), seeds ${SEEDS[0]}–${SEEDS.at(-1)}\n`);
/** Seconds from the end of the trigger until five seconds in a row at 90 % goodput; `null` when never. */
function recovery(r: RunResult, after: number): number | null {
  const s = r.series;
  const good = (i: number): boolean => (s.offered[i] ?? 0) > 0 && (s.goodput[i] ?? 0) >= 0.9 * (s.offered[i] ?? 0);
  for (let i = 0; i < s.t.length; i++) {
    if ((s.t[i] ?? 0) < after) continue;
    let ok = true;
    for (let j = i; j < i + 5 && ok; j++) ok = j < s.t.length && good(j);
    if (ok) return ((s.t[i] ?? 0) - after) / 1_000;
  }
  return null;
}

function overload(floor: number | undefined, breaker: boolean, seed: number): RunResult {
  return simulate({
    seed,
    duration: 120_000,
    step: 1_000,
    traffic: traffic.poisson({ rate: 150 }),
    backend: backends.metastable({ capacity: 200, workers: 4, trigger: { from: 30_000, to: 40_000, latency: 2 } }),
    client: {
      timeout: 1_000,
      deadline: 5_000,
      retry: {
        backoff: { attempts: 4, base: 100, factor: 2, cap: 1_000, jitter: Jitter.full },
        budget: budgetOf(floor),
      },
    },
    policies: breaker ? [policy.breaker(client)] : [],
    drain: 0,
  });
}

const overloadRows: string[][] = [];
for (const floor of FLOORS) {
  for (const breaker of [false, true]) {
    const runs = SEEDS.map((seed) => overload(floor.at(150), breaker, seed));
    const alone = breaker ? SEEDS.map((seed) => overload(undefined, true, seed)) : undefined;
    const back = runs.map((r) => recovery(r, 40_000));
    const never = back.filter((b) => b === null).length;
    const times = back.filter((b): b is number => b !== null);
    overloadRows.push([
      `${breaker ? "client breaker + " : ""}${floor.label}`,
      `${times.length === 0 ? "–" : range(times, 0)} s${never > 0 ? `, never in ${never} of ${runs.length}` : ""}`,
      `${range(
        runs.map((r) => (r.summary.goodputRate ?? 0) * 100),
        1,
      )} %`,
      `${range(runs.map((r) => r.summary.retries))}`.replace(/\.00/g, ""),
      alone === undefined
        ? ""
        : `${runs.filter((r, i) => r.summary.hash === alone[i]?.summary.hash).length} of ${runs.length}`,
    ]);
  }
  process.stderr.write(`${floor.label} done\n`);
}
table(
  ["client", "back to 90 % after the trigger", "goodput", "retries", "the same run as the breaker alone (trace hash)"],
  overloadRows,
);
console.log(
  `\n(${f2(SEEDS.length)} seeds; load average ${(await import("node:os"))
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")})`,
);
