import type { BackendOptions } from "../backend";
import { exponential, fixed } from "../distribution";
import { FailureSchedule } from "../failures";
import { poisson } from "../rates";
import type { RunResult } from "../result";
import { simulate } from "../simulate";
import { defineScenario, seedKnob } from "../scenario";
import type { Table } from "../scenario";
import { num, percent, sumBetween, textTable } from "../report";
import { LEAD_COLUMNS, lead, leadCells, leadFigures } from "./lead";
import { durationKnob, rateKnob } from "./knobs";
import { BASELINE, breakerLineup, retriesOf } from "./lineups";
import { checkDuration } from "./run-end";

/** The parameters of {@link breakerBrownout}. */
export interface BreakerBrownoutParams {
  readonly [name: string]: number | string;
  readonly seed: number;
  readonly rate: number;
  readonly failing: number;
  readonly from: number;
  readonly to: number;
  readonly cost: "nothing" | "capacity";
  readonly duration: number;
}

/** The breakers compared, tideward's as the guard ships it first, the baselines at their usual settings. */
const CONTENDERS = breakerLineup(BASELINE);

/** Workers of the backend whose failures cost capacity, each success taking 20 ms: 400 calls/s of successes. */
const WORKERS = 8;
/** How long a failing call holds a worker there, ms: a dependency timing out behind it. */
const FAIL_HOLD = 200;
/** The caller's deadline, ms. */
const DEADLINE = 1_000;

/**
 * A backend fails a share of its calls for a minute. Whether a breaker helps depends on what a
 * failure costs: if nothing, refusing a call only loses the successes it would have had; if a
 * failure holds the backend's capacity, refusing some of them keeps the rest in time.
 */
export const breakerBrownout = defineScenario<BreakerBrownoutParams>({
  name: "breaker-brownout",
  title: "Breaker under a brownout",
  summary:
    "Poisson calls to a backend that fails a share of them (40 % by default) for a minute, whatever its load. The honest answer first: when a failure costs nothing (it comes back as fast as a success and takes nothing from the backend), every breaker only lowers goodput, since each call it refuses had the same chance of success as any other. A breaker earns its place when a failure is costly: here, with the cost knob on capacity, each failing call holds one of the backend's eight workers for 200 ms (a dependency timing out behind it), so the failures crowd out the successes, the queue grows and answers miss the caller's one-second deadline. Both cases are shown, each without retries and with three.",
  knobs: [
    seedKnob,
    rateKnob({ default: 100, min: 10, max: 2_000, step: 10 }),
    {
      kind: "number",
      name: "failing",
      label: "Failures during the brownout",
      doc: "The share of calls that fail from its start to its end, whatever the load.",
      default: 0.4,
      min: 0,
      max: 1,
      step: 0.05,
      unit: "share",
    },
    {
      kind: "number",
      name: "from",
      label: "Brownout starts",
      doc: "When the failures begin.",
      default: 40,
      min: 0,
      max: 3_600,
      step: 1,
      unit: "s",
    },
    {
      kind: "number",
      name: "to",
      label: "Brownout ends",
      doc: "When they stop.",
      default: 100,
      min: 0,
      max: 3_600,
      step: 1,
      unit: "s",
    },
    {
      kind: "select",
      name: "cost",
      label: "What a failure costs",
      doc: "Nothing (a failure is as quick as a success, the backend has room to spare), or capacity (eight workers; a failing call holds one for 200 ms).",
      default: "capacity",
      options: [
        { value: "capacity", label: "the backend's capacity" },
        { value: "nothing", label: "nothing" },
      ],
    },
    durationKnob({ default: 160, min: 10, max: 3_600, step: 10 }),
  ],
  // Every contender, with a failure costing nothing and costing capacity, without retries and with.
  work: (p) => ({ calls: CONTENDERS.length * 2 * 2 * p.rate * p.duration, knobs: ["rate", "duration"] }),
  run(p, start) {
    checkDuration("breaker-brownout", start, p.duration);
    if (p.to < p.from)
      throw new RangeError(`scenario breaker-brownout to (${p.to} s) must be at least from (${p.from} s)`);
    const from = p.from * 1_000;
    const to = p.to * 1_000;
    const failures = new FailureSchedule(0, [{ from, to, rate: p.failing }]);
    const backendOf = (cost: string): BackendOptions =>
      cost === "capacity"
        ? { latency: exponential(20), failLatency: fixed(FAIL_HOLD), failures, workers: WORKERS }
        : { latency: exponential(20), failures };
    const once = (cost: string, retries: boolean, c: (typeof CONTENDERS)[number]): RunResult =>
      simulate({
        seed: p.seed,
        start,
        duration: p.duration * 1_000,
        step: 1_000,
        label: c.label,
        traffic: poisson({ rate: p.rate }),
        backend: backendOf(cost),
        client: {
          timeout: DEADLINE,
          deadline: DEADLINE,
          retry: retriesOf({ retry: retries, budget: false }, 4),
        },
        policies: c.spec === undefined ? [] : [c.spec],
        drain: 0,
      });
    const figures: Record<string, number> = {};
    const capacity = p.cost === "capacity" ? (WORKERS * 1_000) / 20 : undefined;
    if (capacity !== undefined) figures.capacity = capacity;
    const runs: RunResult[] = [];
    const tables: Table[] = [];
    for (const cost of [p.cost, p.cost === "capacity" ? "nothing" : "capacity"]) {
      const rows = CONTENDERS.map((c) => {
        const plain = once(cost, false, c);
        const retried = once(cost, true, c);
        const id = `${cost}.${c.id}`;
        if (cost === p.cost) {
          runs.push(plain);
          leadFigures(figures, c.id, lead(plain, { after: to }));
        }
        figures[`${id}.goodput`] = plain.summary.goodput;
        figures[`${id}.goodputRetried`] = retried.summary.goodput;
        figures[`${id}.backendCalls`] = plain.summary.backendLoad;
        const during = perBackendCall(plain, from, to);
        figures[`${id}.goodputPerBackendCall`] = during;
        const busy = meanBetween(plain.series.t, plain.series.backendBusy, from, to) / WORKERS;
        figures[`${id}.busy`] = busy;
        const head =
          cost === p.cost
            ? leadCells(lead(plain, { after: to }))
            : [percent(plain.summary.goodputRate), `${num(plain.summary.backendLoad / p.duration)}/s`];
        return [
          c.label,
          ...head,
          ...(cost === "capacity" ? [percent(busy)] : []),
          String(retried.summary.goodput),
          String(plain.summary.goodput),
          num(during, 2),
        ];
      });
      const title =
        cost === "capacity"
          ? `a failure holds one of ${WORKERS} workers for ${FAIL_HOLD} ms (successes take 20 ms: ${(WORKERS * 1_000) / 20} calls/s)`
          : "a failure costs nothing (as quick as a success, no capacity limit)";
      tables.push({
        title: `${p.rate} calls/s, ${percent(p.failing)} failing from ${p.from} s to ${p.to} s; ${title}; a ${DEADLINE / 1_000} s deadline`,
        columns: [
          "",
          ...(cost === p.cost ? LEAD_COLUMNS : ["goodput within the deadline", "backend load"]),
          ...(cost === "capacity" ? ["workers busy in the brownout"] : []),
          "goodput, 3 retries with jitter",
          "goodput, no retries",
          "goodput per backend call in the brownout",
        ],
        rows,
      });
    }
    const g = (cost: string, id: string, name = "goodput") => figures[`${cost}.${id}.${name}`];
    const breakers = CONTENDERS.filter((c) => c.spec !== undefined);
    const list = (cost: string) =>
      breakers.map((c) => `${c.label} ${g(cost, c.id)} (${g(cost, c.id, "goodputRetried")})`).join(", ");
    const reading = [
      `When a failure costs nothing, no breaker is best: ${g("nothing", "none")} calls answered in time without one (${g("nothing", "none", "goodputRetried")} with retries); ${list("nothing")}. A breaker that never throttled ties it. Every policy gets about the same goodput per backend call during the brownout (${num(g("nothing", "none", "goodputPerBackendCall"), 2)} without a breaker), so each refusal is a success lost. The SRE formula throttles once k × (1 − failure share) < 1: the sre preset (k 1.5) does at 40 % failures, the guard's default (k 2) only past half.`,
      `When a failure holds the backend's capacity, the failures crowd out the successes and without a breaker ${g("capacity", "none")} calls were answered in time (${g("capacity", "none", "goodputRetried")} with retries); with a breaker: ${list("capacity")}. ${breakers.every((c) => g("capacity", c.id) > g("capacity", "none")) ? "Every breaker does better than none here" : "Most breakers do better than none here"}, by refusing calls that would have held a worker for nothing; the ones that refuse everything while open lose successes too${breakers.every((c) => g("capacity", "tideward") >= g("capacity", c.id)) ? ", and the guard's default, throttling only the excess, keeps the most" : ""}.`,
    ].join(" ");
    return { runs, tables, figures, report: [...tables.map(textTable), reading].join("\n\n") };
  },
});

/** The mean of `values` over the buckets whose start is in `[from, to)` ms. */
function meanBetween(t: readonly number[], values: readonly number[], from: number, to: number): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < t.length; i++)
    if (t[i] >= from && t[i] < to) {
      sum += values[i];
      n++;
    }
  return n > 0 ? sum / n : 0;
}

/** Goodput over attempts that reached the backend, over `[from, to)` ms. */
function perBackendCall(r: RunResult, from: number, to: number): number {
  const calls = sumBetween(r.series.t, r.series.backendLoad, from, to);
  return calls > 0 ? sumBetween(r.series.t, r.series.goodput, from, to) / calls : 0;
}
