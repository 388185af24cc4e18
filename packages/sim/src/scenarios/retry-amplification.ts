import { Backoff, Jitter } from "@tideward/backoff";
import { exponential } from "../distribution";
import { simulate } from "../simulate";
import { poisson } from "../rates";
import { defineScenario, seedKnob } from "../scenario";
import { lead, leadCells, leadFigures } from "./lead";
import { attemptsKnob, baseKnob, durationKnob, rateKnob, ratioKnob } from "./knobs";
import { num, percent, outcome } from "../report";
import { checkDuration } from "./run-end";

/** The parameters of {@link retryAmplification}. */
export interface RetryAmplificationParams {
  readonly [name: string]: number;
  readonly seed: number;
  readonly rate: number;
  readonly failureRate: number;
  readonly attempts: number;
  readonly base: number;
  readonly ratio: number;
  readonly duration: number;
}

/**
 * A backend failing a share of its calls, and clients that retry: without a budget every
 * failure multiplies the load; a retry budget caps the extra at a fraction of first attempts.
 */
export const retryAmplification = defineScenario<RetryAmplificationParams>({
  name: "retry-amplification",
  title: "Retry amplification",
  summary:
    "A backend fails a share of its calls independently, and each client retries a failed call with backoff. Without a budget a call that keeps failing is tried every time it may be, so the load on the backend grows with the failure rate: (1 − pⁿ) / (1 − p) attempts per call at failure rate p and n attempts. A shared retry budget (Finagle's) allows retries up to a share of first attempts, so a failing backend sees at most that much more load, at the cost of some calls that a retry would have saved. Sweep the failure rate to see amplification against success.",
  knobs: [
    seedKnob,
    rateKnob({ default: 100, min: 1, max: 10_000, step: 10 }),
    {
      kind: "number",
      name: "failureRate",
      label: "Failure rate",
      doc: "The share of the backend's calls that fail.",
      default: 0.5,
      min: 0,
      max: 1,
      step: 0.01,
      unit: "share",
    },
    attemptsKnob({ default: 4, min: 1, max: 20, step: 1 }),
    baseKnob({
      doc: "The wait before the first retry (doubling, full jitter, capped at 2 s).",
      default: 50,
      min: 0,
      max: 2_000,
      step: 10,
    }),
    ratioKnob({ default: 0.2, min: 0, max: 2, step: 0.05 }),
    durationKnob({ default: 60, min: 5, max: 3_600, step: 5 }),
  ],
  options: (p) => ({ guard: { retry: backoffOf(p), budget: budgetOf(p) } }),
  work: (p) => ({ calls: 3 * p.rate * p.duration, knobs: ["rate", "duration"] }),
  run(p, start) {
    checkDuration("retry-amplification", start, p.duration);
    const backoff = new Backoff(backoffOf(p));
    const base = {
      seed: p.seed,
      start,
      duration: p.duration * 1_000,
      traffic: poisson({ rate: p.rate }),
      backend: { latency: exponential(10), failures: p.failureRate },
    };
    const runs = [
      simulate({
        ...base,
        label: "retries with a budget",
        client: { retry: { backoff, budget: budgetOf(p) } },
      }),
      simulate({ ...base, label: "retries, no budget", client: { retry: { backoff } } }),
      simulate({ ...base, label: "no retries" }),
    ];
    const f = p.failureRate;
    const expected = f === 1 ? p.attempts : (1 - f ** p.attempts) / (1 - f);
    const figures: Record<string, number> = { expectedAmplification: expected, expectedSuccess: 1 - f ** p.attempts };
    const ids = ["budget", "unbounded", "none"];
    const rows = runs.map((r, i) => {
      figures[`${ids[i]}.amplification`] = r.summary.amplification ?? 0;
      figures[`${ids[i]}.successRate`] = r.summary.successRate ?? 0;
      // Failures here are steady, not an outage: there is no recovery to time.
      const l = lead(r, { after: 0 });
      leadFigures(figures, ids[i], l);
      const [within, rate, load, , wasted] = leadCells(l);
      return [
        r.label,
        within,
        rate,
        load,
        wasted,
        `${num(r.summary.amplification, 2)}×`,
        percent(r.summary.successRate),
        String(r.summary.retries),
      ];
    });
    const table = {
      title: `${p.rate} calls/s; ${percent(f)} of backend calls fail; up to ${p.attempts} attempts; budget ${p.ratio} retries per call`,
      columns: [
        "",
        "goodput within the deadline",
        "goodput",
        "backend load",
        "calls wasted",
        "backend calls per call",
        "calls that succeeded",
        "retries",
      ],
      rows,
    };
    return outcome(
      runs,
      table,
      figures,
      `Without a budget each call cost the backend ${num(figures["unbounded.amplification"], 2)} attempts (theory: ${num(expected, 2)}); the budget held it to ${num(figures["budget.amplification"], 2)}, saving ${percent(figures["budget.successRate"])} of calls against ${percent(figures["unbounded.successRate"])}. Here the failures do not depend on the backend's load, so retries without a budget win on goodput; what the budget buys is the load it spares the backend (${num(figures["budget.backendPerSecond"])}/s against ${num(figures["unbounded.backendPerSecond"])}/s), which decides the outcome when failures come from overload (the metastable overload).`,
    );
  },
});

/** The retries of every retrying run: doubling from the base, full jitter, capped at 2 s (or the base, past it). */
function backoffOf(p: RetryAmplificationParams) {
  return { base: p.base, factor: 2, cap: Math.max(2_000, p.base), attempts: p.attempts, jitter: Jitter.full };
}

/** The budgeted run's retry budget: the ratio knob, with no floor of retries a second. */
function budgetOf(p: RetryAmplificationParams) {
  return { ratio: p.ratio, minPerSecond: 0 };
}
