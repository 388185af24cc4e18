import { poisson } from "../rates";
import { exponential } from "../distribution";
import { FailureSchedule } from "../failures";
import { breaker } from "../policies/breaker";
import { classicBreaker } from "../policies/classic";
import { simulate } from "../simulate";
import type { RunResult } from "../result";
import { defineScenario, seedKnob } from "../scenario";
import { outageKnobs, outageOf } from "./outage";
import { num, percent, sumBetween, outcome } from "../report";

/** The parameters of {@link breakerOutage}. */
export interface BreakerOutageParams {
  readonly [name: string]: number;
  readonly seed: number;
  readonly rate: number;
  readonly duration: number;
  readonly outageFrom: number;
  readonly outageTo: number;
  readonly outageRate: number;
  readonly baseRate: number;
  readonly latency: number;
  readonly k: number;
  readonly threshold: number;
  readonly openFor: number;
}

/**
 * A backend fails (all its calls, or a share) for a stretch of the run. tideward's adaptive
 * breaker, a classic consecutive-failure breaker and no breaker at all see the same calls.
 */
export const breakerOutage = defineScenario<BreakerOutageParams>({
  name: "breaker-outage",
  title: "Breaker under an outage",
  summary:
    "Poisson calls to a backend that fails for a stretch of the run. tideward's adaptive breaker refuses a growing share of calls as failures mount and keeps probing, so it lets the backend's recovery in gradually; the classic breaker opens after a run of failures, refuses everything for a fixed time, then risks one probe. Both see the same calls as a run with no breaker. Read the share of calls that still reached the dead backend, and how soon after the outage calls succeed again.",
  knobs: [
    seedKnob,
    {
      kind: "number",
      name: "rate",
      label: "Offered load",
      doc: "Calls a second, Poisson.",
      default: 200,
      min: 10,
      max: 5_000,
      step: 10,
      unit: "calls/s",
      scale: "log",
    },
    {
      kind: "number",
      name: "duration",
      label: "Run length",
      doc: "How long calls are offered.",
      default: 180,
      min: 30,
      max: 3_600,
      step: 10,
      unit: "s",
    },
    ...outageKnobs(60, 120, 3_600),
    {
      kind: "number",
      name: "outageRate",
      label: "Failures during the outage",
      doc: "The share of calls failing during the outage.",
      default: 1,
      min: 0,
      max: 1,
      step: 0.01,
      unit: "share",
    },
    {
      kind: "number",
      name: "baseRate",
      label: "Failures otherwise",
      doc: "The share of calls failing the rest of the time.",
      default: 0.01,
      min: 0,
      max: 0.5,
      step: 0.005,
      unit: "share",
    },
    {
      kind: "number",
      name: "latency",
      label: "Backend latency",
      doc: "Mean response time, exponentially distributed.",
      default: 20,
      min: 1,
      max: 1_000,
      step: 1,
      unit: "ms",
      scale: "log",
    },
    {
      kind: "number",
      name: "k",
      label: "tideward k",
      doc: "How many calls each success pays for: at 1.5 the backend is left alone until a third of its calls fail.",
      default: 1.5,
      min: 1.1,
      max: 4,
      step: 0.05,
    },
    {
      kind: "integer",
      name: "threshold",
      label: "Classic threshold",
      doc: "Consecutive failures that open the classic breaker.",
      default: 5,
      min: 1,
      max: 100,
      step: 1,
      unit: "calls",
    },
    {
      kind: "number",
      name: "openFor",
      label: "Classic open time",
      doc: "How long the classic breaker stays open before its probe.",
      default: 5,
      min: 0.1,
      max: 60,
      step: 0.1,
      unit: "s",
    },
  ],
  run(p, start) {
    const { from, to } = outageOf("breaker-outage", p);
    const duration = p.duration * 1_000;
    const base = {
      seed: p.seed,
      start,
      duration,
      step: 1_000,
      traffic: poisson({ rate: p.rate }),
      backend: {
        latency: exponential(p.latency),
        failures: new FailureSchedule(p.baseRate, [{ from, to, rate: p.outageRate }]),
      },
    };
    const runs = [
      simulate({ ...base, label: "tideward breaker", policies: [breaker({ k: p.k })] }),
      simulate({
        ...base,
        label: "classic breaker",
        policies: [classicBreaker({ threshold: p.threshold, openFor: p.openFor * 1_000 })],
      }),
      simulate({ ...base, label: "no breaker" }),
    ];
    const ids = ["tideward", "classic", "none"];
    const figures: Record<string, number> = {};
    const rows = runs.map((r, i) => {
      const through = throughDuring(r, from, to);
      const recovery = recoveryAfter(r, to, duration);
      figures[`${ids[i]}.reachedDuringOutage`] = through;
      figures[`${ids[i]}.recoverySeconds`] = recovery;
      figures[`${ids[i]}.successRate`] = r.summary.successRate ?? 0;
      figures[`${ids[i]}.backendLoad`] = r.summary.backendLoad;
      return [
        r.label,
        percent(through),
        `${num(recovery)} s`,
        percent(r.summary.successRate),
        String(r.summary.backendLoad),
      ];
    });
    const table = {
      title: `${p.rate} calls/s; ${percent(p.outageRate)} of calls fail from ${p.outageFrom} s to ${p.outageTo} s`,
      columns: [
        "",
        "reached the backend during the outage",
        "back to 90 % success after",
        "calls that succeeded",
        "backend calls",
      ],
      rows,
    };
    return outcome(
      runs,
      table,
      figures,
      `tideward's breaker let ${percent(figures["tideward.reachedDuringOutage"])} of the outage's calls through to the failing backend (most in its first seconds, while the window still held the successes from before, then a probe a second), the classic one ${percent(figures["classic.reachedDuringOutage"])}; after the outage, tideward's calls were back to 90 % success within ${num(figures["tideward.recoverySeconds"])} s, as the failures aged out of its window, the classic breaker's within ${num(figures["classic.recoverySeconds"])} s, on its first good probe.`,
    );
  },
});

/** The share of calls offered during `[from, to)` that reached the backend. */
function throughDuring(r: RunResult, from: number, to: number): number {
  const offered = sumBetween(r.series.t, r.series.attempts, from, to);
  return offered > 0 ? sumBetween(r.series.t, r.series.backendLoad, from, to) / offered : 0;
}

/** Seconds after `to` until the first one-second bucket in which at least 90 % of the calls offered succeeded. */
function recoveryAfter(r: RunResult, to: number, duration: number): number {
  const { t, offered, completed } = r.series;
  for (let i = 0; i < t.length; i++) {
    if (t[i] < to) continue;
    if (offered[i] > 0 && completed[i] / offered[i] >= 0.9) return (t[i] - to) / 1_000;
  }
  return (duration - to) / 1_000;
}
