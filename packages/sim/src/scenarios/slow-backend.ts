import type { Dip } from "../dips";
import { exponential } from "../distribution";
import { poisson } from "../rates";
import type { RunResult } from "../result";
import { simulate } from "../simulate";
import { defineScenario, seedKnob } from "../scenario";
import { num, outcome, percent, sumBetween } from "../report";
import { LEAD_COLUMNS, lead, leadCells, leadFigures, recoveryText } from "./lead";
import { deadlineKnob, durationKnob, rateKnob, timeoutKnob, workersKnob } from "./knobs";
import { retriesOf, retryLineup } from "./lineups";
import { checkDuration } from "./run-end";

/** The parameters of {@link slowBackend}. */
export interface SlowBackendParams {
  readonly [name: string]: number;
  readonly seed: number;
  readonly rate: number;
  readonly workers: number;
  readonly peak: number;
  readonly deadline: number;
  readonly timeout: number;
  readonly duration: number;
}

/** The clients compared, the guard's default first. */
const CONTENDERS = retryLineup(["guard", "retries", "none", "budget", "sre", "classic"]);

/** When the slowdown starts, peaks, and ends, ms after the start. */
const RISE = 30_000;
const PEAK = 90_000;
const END = 110_000;
/** Steps of the rise. */
const STEPS = 12;
/** The service time's mean when healthy, ms. */
const BASE = 20;

/**
 * A backend's service time rises step by step from 20 ms to past the callers' deadline, holds,
 * then recovers. Its workers are fixed, so as it slows its capacity falls under the load.
 */
export const slowBackend = defineScenario<SlowBackendParams>({
  name: "slow-backend",
  title: "Slow backend",
  summary:
    "A backend slows down step by step (a table growing without an index, a leak): its mean service time climbs from 20 ms to past the callers' one-second deadline over a minute, holds for twenty seconds, then recovers. It has a fixed number of workers, so as each call takes longer its capacity falls under the offered load and a queue forms. Callers time out each attempt and retry. A slow answer is no answer: read the goodput within the deadline, the load the callers put on the slowing backend, and how soon after it recovers calls are answered in time again.",
  knobs: [
    seedKnob,
    rateKnob({ default: 100, min: 1, max: 5_000, step: 10 }),
    workersKnob({ doc: "Calls the backend serves at once.", default: 50, min: 1, max: 10_000, step: 1 }),
    {
      kind: "number",
      name: "peak",
      label: "Slowest service time",
      doc: "The mean service time at the worst, exponentially distributed.",
      default: 1_500,
      min: 20,
      max: 60_000,
      step: 10,
      unit: "ms",
      scale: "log",
    },
    deadlineKnob({
      doc: "Only an answer within this long of the call counts; no retry starts past it.",
      default: 1,
      min: 0.01,
      max: 60,
      step: 0.1,
    }),
    timeoutKnob({
      label: "Attempt timeout",
      doc: "How long a caller waits for one attempt before it retries (up to two retries, full jitter).",
      default: 0.4,
      min: 0.01,
      max: 60,
      step: 0.05,
    }),
    durationKnob({
      doc: "How long calls are offered; the slowdown runs from 30 s to 110 s.",
      default: 150,
      min: 10,
      max: 3_600,
      step: 10,
    }),
  ],
  work: (p) => ({ calls: CONTENDERS.length * p.rate * p.duration, knobs: ["rate", "duration"] }),
  run(p, start) {
    checkDuration("slow-backend", start, p.duration);
    // A geometric rise in equal steps, then the peak held, then healthy again.
    const ratio = Math.max(p.peak, BASE) / BASE;
    const width = (PEAK - RISE) / STEPS;
    const dips: Dip[] = Array.from({ length: STEPS }, (_, i) => ({
      from: RISE + i * width,
      to: RISE + (i + 1) * width,
      latency: ratio ** ((i + 1) / STEPS),
    }));
    dips.push({ from: PEAK, to: END, latency: ratio });
    const runs = CONTENDERS.map((c) =>
      simulate({
        seed: p.seed,
        start,
        duration: p.duration * 1_000,
        step: 1_000,
        label: c.label,
        traffic: poisson({ rate: p.rate }),
        backend: { latency: exponential(BASE), workers: p.workers, dips },
        client: {
          timeout: (c.retry ? p.timeout : p.deadline) * 1_000,
          deadline: p.deadline * 1_000,
          retry: retriesOf(c, 3),
        },
        policies: c.policies,
        drain: 0,
      }),
    );
    const capacity = (p.workers * 1_000) / BASE;
    // Its capacity falls as it slows: no one figure to set the load against (a load "of capacity"
    // would read as a share of the 20 ms capacity, which the backend has only before and after).
    const figures: Record<string, number> = {
      capacityAtStart: capacity,
      capacityAtPeak: (p.workers * 1_000) / Math.max(p.peak, BASE),
    };
    const rows = runs.map((r, i) => {
      const id = CONTENDERS[i].id;
      const l = lead(r, { after: END, hold: 3_000 });
      leadFigures(figures, id, l);
      const slow = slowGoodput(r);
      figures[`${id}.goodputWhileSlow`] = slow;
      figures[`${id}.backendWhileSlow`] =
        sumBetween(r.series.t, r.series.backendLoad, RISE, END) / ((END - RISE) / 1_000);
      return [r.label, ...leadCells(l), percent(slow), `${num(figures[`${id}.backendWhileSlow`])}/s`];
    });
    const table = {
      title: `${p.rate} calls/s to ${p.workers} workers whose mean service time climbs from ${BASE} ms to ${p.peak} ms between 30 s and 90 s (capacity ${num(capacity)}/s falling to ${num(figures.capacityAtPeak)}/s), holds to 110 s, then recovers; attempts time out after ${p.timeout} s, a ${p.deadline} s deadline`,
      columns: ["", ...LEAD_COLUMNS, "goodput while slow (30–110 s)", "backend load while slow"],
      rows,
    };
    const f = (id: string, name: string) => figures[`${id}.${name}`];
    const back = (id: string) => recoveryText(figures, id);
    return outcome(
      runs,
      table,
      figures,
      [
        `While the backend slowed, the guard's default answered ${percent(f("guard", "goodputWhileSlow"))} of the calls in time, asking the backend ${num(f("guard", "backendWhileSlow"))} calls a second; retries with no policy answered ${percent(f("retries", "goodputWhileSlow"))} and asked ${num(f("retries", "backendWhileSlow"))}: each attempt that times out is retried onto a backend that has just lost capacity, so its queue grows and every answer comes later.`,
        `Without retries ${percent(f("none", "goodputWhileSlow"))}. After the backend recovered, calls were answered in time again within ${back("guard")} with the guard's default, ${back("retries")} with retries and no policy, ${back("none")} without retries, ${back("budget")} with the budget alone, ${back("sre")} with the sre breaker, ${back("classic")} with the consecutive breaker.`,
        (() => {
          const best = CONTENDERS.reduce((a, b) => (f(b.id, "goodputRate") > f(a.id, "goodputRate") ? b : a));
          return best.id === "guard"
            ? "The guard's default had the most goodput of all."
            : `The most goodput overall was ${best.label}'s (${percent(f(best.id, "goodputRate"))}, against ${percent(f("guard", "goodputRate"))} for the guard's default): when the slowness is the backend's own and not its queue, a retry after a timeout only asks it for the same slow work again, so not retrying at all wins; the guard's default is the best of the retrying clients, and its breaker, counting timeouts as failures, cut the backend's load and the work done for nobody.`;
        })(),
        `No policy makes a slow backend fast: past the point where the service time itself exceeds the deadline, nothing answers in time, and what a policy can do is refuse early instead of queueing work that will be late anyway.`,
      ].join(" "),
    );
  },
});

/** Goodput over calls offered while the backend is slow. */
function slowGoodput(r: RunResult): number {
  const offered = sumBetween(r.series.t, r.series.offered, RISE, END);
  return offered > 0 ? sumBetween(r.series.t, r.series.goodput, RISE, END) / offered : 0;
}
