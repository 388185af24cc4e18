import { poisson } from "../rates";
import type { RunResult } from "../result";
import { simulate } from "../simulate";
import { defineScenario, seedKnob } from "../scenario";
import { num, outcome, percent, sumBetween } from "../report";
import { LEAD_COLUMNS, lead, leadCells, leadFigures, recoveryText } from "./lead";
import { deadlineKnob, durationKnob, rateKnob, workersKnob } from "./knobs";
import { lineup, policiesOf, serviceTime, traceFor, serviceKnob, spreadKnob } from "./adaptive-lineup";
import type { AdaptiveContender } from "./adaptive-lineup";
import type { SampleWindow } from "@tideward/concurrency";
import { settleTime } from "./limit-trace";
import { SAMPLE_WINDOW } from "./lineups";
import { checkDuration } from "./run-end";

/** The parameters of {@link capacityShift}. */
export interface CapacityShiftParams {
  readonly [name: string]: number;
  readonly seed: number;
  readonly rate: number;
  readonly workers: number;
  readonly left: number;
  readonly service: number;
  readonly spread: number;
  readonly shiftFrom: number;
  readonly shiftLength: number;
  readonly deadline: number;
  readonly duration: number;
}

/** The contenders: the three adaptive limits, the shedder, a gate sized for the whole backend, and none. */
export const SHIFT_CONTENDERS = lineup([
  ["gradient2", false],
  ["vegas", false],
  ["aimd", false],
  ["shedder", false],
  ["fixed", false],
  ["none", false],
]);

/** The limits whose value over the run is traced, and how the report names them. */
const LIMITS = ["gradient2", "vegas", "aimd"] as const;
const NAMES = { gradient2: "Gradient2", vegas: "Vegas", aimd: "AIMD" } as const;
/** The backend's queue: long enough that, unguarded, waiting rather than refusal is what fails calls. */
const QUEUE = 2_000;
/** How close to the true concurrency a limit must come to count as settled: ±20 %. */
const BAND = 0.2;
/** How long a limit must stay within the band, to the end of the stretch, to count as settled, ms. */
const HOLD = 5_000;
/** The resolution of the limit's trace, ms. */
const TRACE_STEP = 250;

/**
 * A backend loses half its workers for a minute, then gets them back. The adaptive limits must
 * find the new capacity and then the old one again; a gate sized for the whole backend cannot.
 */
export const capacityShift = defineScenario<CapacityShiftParams>({
  name: "capacity-shift",
  title: "Capacity halves, then returns",
  summary:
    "A backend of 16 workers is offered 70 % of what it can serve. For a minute half its workers are gone, so the load is 140 % of what is left; then they return. Gradient2, Vegas and AIMD (presets, with a floor of one place, each second's calls folded into one sample as Netflix runs them) must learn the smaller capacity and the larger one again; the shedder, a static gate of 16 places and no policy are the baselines. Read goodput within the deadline during the shift, the time to recover after it, the refusals at steady load (and those made while a limit probed for its no-load round trip), and how long each limit took to come within ±20 % of the workers there.",
  knobs: [
    seedKnob,
    rateKnob({ default: 280, min: 1, max: 5_000, step: 10 }),
    workersKnob({ doc: "The backend's workers: its true concurrency.", default: 16, min: 2, max: 1_000, step: 1 }),
    {
      kind: "number",
      name: "left",
      label: "Capacity left",
      doc: "The share of the workers left during the shift.",
      default: 0.5,
      min: 0.05,
      max: 1,
      step: 0.05,
    },
    serviceKnob,
    spreadKnob,
    {
      kind: "number",
      name: "shiftFrom",
      label: "Shift starts",
      doc: "When the workers go.",
      default: 30,
      min: 0,
      max: 3_600,
      step: 1,
      unit: "s",
    },
    {
      kind: "number",
      name: "shiftLength",
      label: "Shift length",
      doc: "How long they stay gone.",
      default: 60,
      min: 1,
      max: 3_600,
      step: 1,
      unit: "s",
    },
    deadlineKnob({
      doc: "Only an answer within this long counts as goodput; the caller stops waiting then (the server still serves what it queued).",
      default: 1,
      min: 0.05,
      max: 60,
      step: 0.1,
    }),
    durationKnob({ default: 150, min: 10, max: 3_600, step: 10 }),
  ],
  work: (p) => ({ calls: SHIFT_CONTENDERS.length * p.rate * p.duration, knobs: ["rate", "duration"] }),
  run(p, start) {
    checkDuration("capacity-shift", start, p.duration);
    const left = leftOf(p);
    const capacity = (p.workers * 1_000) / p.service;
    const figures: Record<string, number> = { capacity, shiftedCapacity: (left * 1_000) / p.service };
    const shifts = SHIFT_CONTENDERS.map((c) => runShift(p, start, c));
    const runs = shifts.map((s) => s.run);
    const rows = shifts.map((s) => {
      Object.assign(figures, s.figures);
      return s.cells;
    });
    const table = {
      title: `${p.rate} calls/s to ${p.workers} workers of ${p.service} ms (capacity ${num(capacity)}/s); ${left} workers left from ${p.shiftFrom} s for ${p.shiftLength} s (${num(figures.shiftedCapacity)}/s); a ${p.deadline} s deadline. Recovered: five seconds in a row at 90 % goodput after the workers return. Settled: the limit within ±20 % of the workers there, and staying so to the end of the stretch, five seconds at least.`,
      columns: [
        "",
        ...LEAD_COLUMNS,
        "goodput within the deadline, in the shift",
        "worst second's p99, in the shift",
        "refused before the shift, at steady load (of which while probing min-RTT)",
        `limit settled near ${left} after`,
        `limit settled near ${p.workers} after`,
      ],
      rows,
    };
    return outcome(runs, table, figures, reading(p, left, figures));
  },
});

/** The workers left during the shift. */
function leftOf(p: CapacityShiftParams): number {
  return Math.max(1, Math.round(p.workers * p.left));
}

/** Settings laid over a contender's, for a run that is not the scenario's own (the README's variants). */
export interface ShiftVariant {
  /** The id its figures are keyed by. @defaultValue the contender's */
  readonly id?: string;
  /** Fields laid over the algorithm's policy. */
  readonly policy?: Readonly<Record<string, number>>;
  /** A sample window for the limiter, or `null` for a sample a call. @defaultValue the scenario's, 1 s (`SAMPLE_WINDOW`) */
  readonly window?: Partial<SampleWindow> | null;
}

/** One contender's run of the capacity shift. */
export interface ShiftRun {
  readonly run: RunResult;
  /** Its figures, keyed `${id}.…`, as the scenario reports them. */
  readonly figures: Readonly<Record<string, number>>;
  /** Its row of the scenario's table. */
  readonly cells: readonly string[];
  /**
   * Of the calls offered before the shift (at steady load), the share refused while the limit
   * probed for its no-load round trip (0 for a policy that has no limit or never probes).
   */
  readonly refusedProbing: number;
  /** The limit a `TRACE_STEP` ms over the run, for a contender with a limit. */
  readonly trace: readonly number[] | undefined;
}

/** The resolution of {@link ShiftRun.trace}, ms. */
export const SHIFT_TRACE_STEP = TRACE_STEP;

/**
 * Runs contender `c` through the capacity shift at `p` from `start` (ms), with `variant`'s
 * settings laid over its own: what the scenario does for each of its contenders, and what the
 * README's head-to-head runs for the settings beside the presets.
 */
export function runShift(
  p: CapacityShiftParams,
  start: number,
  c: AdaptiveContender,
  variant: ShiftVariant = {},
): ShiftRun {
  const duration = p.duration * 1_000;
  const from = Math.min(p.shiftFrom * 1_000, duration);
  const to = Math.min(from + p.shiftLength * 1_000, duration);
  const left = leftOf(p);
  const capacity = (p.workers * 1_000) / p.service;
  const id = variant.id ?? c.id;
  const trace = traceFor(c, start, duration, TRACE_STEP);
  const settings = {
    fixed: p.workers,
    deadline: p.deadline * 1_000,
    ...(variant.policy === undefined ? {} : { policy: variant.policy }),
    ...(variant.window === null ? {} : { window: variant.window ?? SAMPLE_WINDOW }),
  };
  const r = simulate({
    seed: p.seed,
    start,
    duration,
    step: 1_000,
    label: c.label,
    traffic: poisson({ rate: p.rate }),
    backend: {
      latency: serviceTime(p.service, p.spread),
      workers: p.workers,
      queue: QUEUE,
      dips: to > from ? [{ from, to, workers: left }] : [],
    },
    client: { deadline: p.deadline * 1_000 },
    policies: policiesOf(c, settings, trace),
    drain: 0,
  });
  const figures: Record<string, number> = {};
  const l = lead(r, { after: to, hold: 5_000 });
  leadFigures(figures, id, l);
  const during = goodputShare(r, from, to);
  const p99 = worstP99(r, from, to);
  figures[`${id}.goodputInShift`] = during;
  figures[`${id}.p99InShift`] = p99;
  const before = refusedShare(r, 0, from);
  figures[`${id}.refusedBefore`] = before;
  let settle = ["–", "–"];
  const values = trace?.values();
  if (values !== undefined) {
    const down = settleTime(values, TRACE_STEP, from, to, left, BAND, HOLD);
    const up = settleTime(values, TRACE_STEP, to, duration, p.workers, BAND, HOLD);
    figures[`${id}.settleDown`] = down ?? -1;
    figures[`${id}.settleUp`] = up ?? -1;
    settle = [down === null ? "never" : `${num(down, 2)} s`, up === null ? "never" : `${num(up, 2)} s`];
    figures[`${id}.limitInShift`] = mean(values, from, to);
    figures[`${id}.limitAfter`] = mean(values, to, duration);
  }
  const offeredBefore = sumBetween(r.series.t, r.series.offered, 0, from);
  const probing = trace === undefined ? 0 : trace.probingRefusals(0, from);
  const refusedProbing = offeredBefore > 0 ? probing / offeredBefore : 0;
  if (trace !== undefined) figures[`${id}.refusedProbing`] = refusedProbing;
  return {
    run: r,
    figures,
    cells: [
      r.label,
      ...leadCells(l, capacity),
      percent(during),
      p99 > 0 ? `${num(p99)} ms` : "–",
      // One column with the probing share beside it: a column more does not fit a narrow laptop's page.
      trace === undefined ? percent(before) : `${percent(before)} (${percent(refusedProbing)})`,
      ...settle,
    ],
    refusedProbing,
    trace: values,
  };
}

/** Of the calls offered in `[from, to)` ms, the share answered within the deadline (by the buckets they ended in). */
function goodputShare(r: RunResult, from: number, to: number): number {
  const offered = sumBetween(r.series.t, r.series.offered, from, to);
  return offered > 0 ? Math.min(1, sumBetween(r.series.t, r.series.goodput, from, to) / offered) : 1;
}

/** Of the calls offered in `[from, to)` ms, the share of attempts refused: at steady load, what a limit costs. */
function refusedShare(r: RunResult, from: number, to: number): number {
  const offered = sumBetween(r.series.t, r.series.offered, from, to);
  return offered > 0 ? sumBetween(r.series.t, r.series.refused, from, to) / offered : 0;
}

/** The worst bucket's p99 in `[from, to)` ms, or 0 with none. */
function worstP99(r: RunResult, from: number, to: number): number {
  let worst = 0;
  r.series.t.forEach((t, i) => {
    const v = r.series.p99[i];
    if (t >= from && t < to && v !== null && v > worst) worst = v;
  });
  return worst;
}

/** The mean of a trace's values over `[from, to)` ms after the start. */
function mean(values: readonly number[], from: number, to: number): number {
  const a = Math.floor(from / TRACE_STEP);
  const b = Math.min(values.length, Math.ceil(to / TRACE_STEP));
  let s = 0;
  for (let i = a; i < b; i++) s += values[i];
  return b > a ? s / (b - a) : 0;
}

function reading(p: CapacityShiftParams, left: number, figures: Readonly<Record<string, number>>): string {
  const f = (id: string, name: string) => figures[`${id}.${name}`];
  const settled = (id: string, name: string) => (f(id, name) < 0 ? "never" : `after ${num(f(id, name), 2)} s`);
  const inShift = (id: string) => percent(f(id, "goodputInShift"));
  const best = [...SHIFT_CONTENDERS.map((c) => c.id)].sort((a, b) => f(b, "goodputInShift") - f(a, "goodputInShift"));
  const top = best.filter((id) => inShift(id) === inShift(best[0]));
  const label = (id: string) => SHIFT_CONTENDERS.find((c) => c.id === id)?.label ?? id;
  return [
    `During the shift, goodput within the ${p.deadline} s deadline was ${SHIFT_CONTENDERS.map((c) => `${c.label} ${inShift(c.id)}`).join(", ")}; ${top.length > 1 ? `${top.map(label).join(" and ")} tie at the top at this precision` : `${label(top[0])} did best`}.`,
    `Once the workers were back, ${SHIFT_CONTENDERS.map((c) => `${c.label} recovered ${recoveryText(figures, c.id, "", 0)}`).join(", ")}.`,
    `The limits came within ±20 % of the ${left} workers left ${LIMITS.map((k) => `${NAMES[k]} ${settled(k, "settleDown")}`).join(", ")} (their mean limit in the shift: ${LIMITS.map((k) => num(f(k, "limitInShift"), 1)).join(", ")}), and of the ${p.workers} workers after it ${LIMITS.map((k) => `${NAMES[k]} ${settled(k, "settleUp")}`).join(", ")} (mean after: ${LIMITS.map((k) => num(f(k, "limitAfter"), 1)).join(", ")}).`,
    `Before the shift, at steady load, they refused ${LIMITS.map((k) => `${NAMES[k]} ${percent(f(k, "refusedBefore"))}`).join(", ")} of calls, of which while probing for the no-load round trip ${LIMITS.map((k) => percent(f(k, "refusedProbing"))).join(", ")}.`,
    `A limit held above the workers there is not wrong in itself: a queue a few calls long costs little within a ${p.deadline} s deadline, and the gate of ${p.workers} places bounds the queue during the shift to ${p.workers - left} calls, which is why a static gate sized for the whole backend does well here; it would not against a slowdown that stretches every call past the deadline.`,
  ].join(" ");
}
