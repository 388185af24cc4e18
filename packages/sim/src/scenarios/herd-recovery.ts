import { Backoff, Jitter } from "@tideward/backoff";
import type { Jitter as JitterType } from "@tideward/backoff";
import { exponential, fixed } from "../distribution";
import { FailureSchedule } from "../failures";
import { simulate } from "../simulate";
import { poisson } from "../rates";
import type { RunResult } from "../result";
import { defineScenario, seedKnob } from "../scenario";
import { outageKnobs, outageOf } from "./outage";
import { LEAD_COLUMNS, lead, leadCells, leadFigures, recoveryText } from "./lead";
import { attemptsKnob, durationKnob, rateKnob, ratioKnob, timeoutKnob, workersKnob } from "./knobs";
import { num, percent, sumBetween, outcome } from "../report";
import { checkDuration } from "./run-end";

/** The parameters of {@link herdRecovery}. */
export interface HerdRecoveryParams {
  readonly [name: string]: number;
  readonly seed: number;
  readonly rate: number;
  readonly outageFrom: number;
  readonly outageTo: number;
  readonly workers: number;
  readonly queue: number;
  readonly timeout: number;
  readonly attempts: number;
  readonly ratio: number;
  readonly duration: number;
}

/**
 * A steady stream of calls, an outage, and clients that retry: every failed call comes back,
 * so by the time the backend recovers it faces the traffic plus the retries of the outage, and a
 * backend with room for the traffic alone can be held down by them. A retry budget (with
 * jitter) keeps the extra load to a share of the traffic.
 */
export const herdRecovery = defineScenario<HerdRecoveryParams>({
  name: "herd-recovery",
  title: "A thundering herd after recovery",
  summary:
    "Poisson calls to a backend with room for about twice the traffic. It fails every call for a stretch; clients retry each failed call with exponential backoff. Without a budget the retries of the outage multiply the load, and when the backend comes back it meets the traffic and every pending retry at once: queues fill, calls time out, and the timeouts are retried in turn, which can hold a recovered backend down (a metastable failure). With full jitter and a retry budget the extra load stays a share of the traffic and the backend recovers as soon as it can. Read the backend's load against its capacity, and how long success takes to come back.",
  knobs: [
    seedKnob,
    rateKnob({ default: 500, min: 10, max: 10_000, step: 10 }),
    ...outageKnobs(10, 20, 600),
    workersKnob({
      doc: "Calls the backend serves at once, 10 ms each on average.",
      default: 8,
      min: 1,
      max: 10_000,
      step: 1,
    }),
    {
      kind: "integer",
      name: "queue",
      label: "Queue",
      doc: "Calls that may wait for a worker.",
      default: 500,
      min: 0,
      max: 100_000,
      step: 10,
    },
    timeoutKnob({
      label: "Client timeout",
      doc: "How long a client waits for an attempt.",
      default: 0.5,
      min: 0.01,
      max: 30,
      step: 0.01,
    }),
    attemptsKnob({ default: 5, min: 1, max: 20, step: 1 }),
    ratioKnob({
      doc: "Retries the budget allows per first attempt (the budgeted run only).",
      default: 0.2,
      min: 0,
      max: 2,
      step: 0.05,
    }),
    durationKnob({ default: 60, min: 10, max: 3_600, step: 10 }),
  ],
  options: (p) => ({ guard: { retry: backoffOf(p, Jitter.full), budget: budgetOf(p) } }),
  work: (p) => ({ calls: 3 * p.rate * p.duration, knobs: ["rate", "duration"] }),
  run(p, start) {
    checkDuration("herd-recovery", start, p.duration);
    const { from, to } = outageOf("herd-recovery", p);
    const base = {
      seed: p.seed,
      start,
      duration: p.duration * 1_000,
      step: 500,
      traffic: poisson({ rate: p.rate }),
      backend: {
        latency: exponential(10),
        failLatency: fixed(2),
        failures: new FailureSchedule(0, [{ from, to, rate: 1 }]),
        workers: p.workers,
        queue: p.queue,
      },
    };
    const timeout = p.timeout * 1_000;
    const rigid = new Backoff(backoffOf(p, Jitter.rigid));
    const full = new Backoff(backoffOf(p, Jitter.full));
    const runs = [
      simulate({
        ...base,
        label: "full jitter, retry budget",
        client: { timeout, retry: { backoff: full, budget: budgetOf(p) } },
      }),
      simulate({ ...base, label: "rigid backoff, no budget", client: { timeout, retry: { backoff: rigid } } }),
      simulate({ ...base, label: "no retries", client: { timeout } }),
    ];
    const capacity = (p.workers * 1_000) / 10;
    const figures: Record<string, number> = { capacity };
    const ids = ["budget", "rigid", "none"];
    const rows = runs.map((r, i) => {
      const during = loadBetween(r, from, to);
      const after = loadBetween(r, to, to + 5_000);
      figures[`${ids[i]}.loadDuringOutage`] = during;
      figures[`${ids[i]}.loadAfterRecovery`] = after;
      figures[`${ids[i]}.successRate`] = r.summary.successRate ?? 0;
      // Recovery here must hold for five seconds: a lucky half-second between waves is not one.
      const l = lead(r, { after: to, hold: HOLD });
      leadFigures(figures, ids[i], l);
      return [
        r.label,
        ...leadCells(l, capacity),
        `${num(during)}/s`,
        `${num(after)}/s`,
        percent(r.summary.successRate),
      ];
    });
    const table = {
      title: `${p.rate} calls/s to a backend with room for ${num(capacity)}/s, failing from ${p.outageFrom} s to ${p.outageTo} s; clients wait ${p.timeout} s and try up to ${p.attempts} times`,
      columns: ["", ...LEAD_COLUMNS, "backend load in the outage", "in the 5 s after it", "calls that succeeded"],
      rows,
    };
    const back = (id: string) => recoveryText(figures, id, "", 1);
    return outcome(
      runs,
      table,
      figures,
      `Without a budget the retries raised the load on the failing backend to ${num(figures["rigid.loadDuringOutage"])} calls/s (${num(figures["rigid.loadDuringOutage"] / p.rate, 1)}× the traffic), and the recovered backend ${figures["rigid.recovered"] === 1 ? `took ${back("rigid")} to serve 90 % again` : "had not served 90 % again by the end of the run"}; with full jitter and a budget the load stayed at ${num(figures["budget.loadDuringOutage"])} calls/s and ${figures["budget.recovered"] === 1 ? `goodput came back after ${back("budget")}` : "goodput had not come back by the end of the run"}.`,
    );
  },
});

/** How long goodput must stay at 90 % after the outage for the run to count as recovered, ms. */
const HOLD = 5_000;

/** The retries: 200 ms doubling to 5 s, with `jitter`. */
function backoffOf(p: HerdRecoveryParams, jitter: JitterType) {
  return { base: 200, factor: 2, cap: 5_000, attempts: p.attempts, jitter };
}

/** The budgeted run's retry budget: the ratio knob, with no floor of retries a second. */
function budgetOf(p: HerdRecoveryParams) {
  return { ratio: p.ratio, minPerSecond: 0 };
}

/** Calls a second that reached the backend over `[from, to)`. */
function loadBetween(r: RunResult, from: number, to: number): number {
  return to > from ? (sumBetween(r.series.t, r.series.backendLoad, from, to) * 1_000) / (to - from) : 0;
}
