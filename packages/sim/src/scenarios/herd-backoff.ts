import { Backoff, Jitter } from "@tideward/backoff";
import type { Jitter as JitterType } from "@tideward/backoff";
import { exponential, fixed } from "../distribution";
import { FailureSchedule } from "../failures";
import { simulate } from "../simulate";
import { herd } from "../bursts";
import type { RunResult } from "../result";
import { defineScenario, seedKnob } from "../scenario";
import { num, outcome } from "../report";
import { attemptsKnob, baseKnob, capKnob, capOf, workersKnob } from "./knobs";
import { checkDuration } from "./run-end";

/** The parameters of {@link herdBackoff}. */
export interface HerdBackoffParams {
  readonly [name: string]: number;
  readonly seed: number;
  readonly clients: number;
  readonly spread: number;
  readonly recovery: number;
  readonly workers: number;
  readonly queue: number;
  readonly attempts: number;
  readonly base: number;
  readonly cap: number;
  readonly duration: number;
}

/** The five jitters, in the order the runs come: the guard's default (a spread of a fifth) first. */
const JITTERS: readonly (readonly [string, JitterType])[] = [
  // The guard's default jitter first.
  ["spread 0.2", Jitter.spread(0.2)],
  ["rigid", Jitter.rigid],
  ["full", Jitter.full],
  ["equal", Jitter.equal],
  ["decorrelated", Jitter.decorrelated],
];

/**
 * Many clients fail together against a backend that is down, then retry with backoff: with no
 * jitter they stay in step and hit the recovering backend as one wave after another; a jitter
 * spreads them out. One run per jitter, on the same herd.
 */
export const herdBackoff = defineScenario<HerdBackoffParams>({
  name: "herd-backoff",
  title: "Backoff and the herd",
  summary:
    "A herd of clients calls at once while the backend is down, and each retries with exponential backoff: the same herd, once per jitter. Without jitter (rigid) every client waits exactly as long as every other, so they come back together, the recovering backend (a few workers and a short queue) turns most of each wave away, and the wave comes back again. Full, equal and decorrelated jitter spread the retries over the wait; spread keeps them within a fifth of the schedule. Read when the retries come (retries sent, each 100 ms) and the load on the backend after it recovers: the busiest moments while it is down are attempts failing at once and retried after their shortest waits, not the herd meeting a backend that can serve.",
  knobs: [
    seedKnob,
    {
      kind: "integer",
      name: "clients",
      label: "Clients",
      doc: "How many clients call at once.",
      default: 1_000,
      min: 1,
      max: 100_000,
      step: 100,
      scale: "log",
    },
    {
      kind: "number",
      name: "spread",
      label: "Spread of the first calls",
      doc: "The first calls are spread over this long.",
      default: 0,
      min: 0,
      max: 10_000,
      step: 10,
      unit: "ms",
    },
    {
      kind: "number",
      name: "recovery",
      label: "Backend recovers at",
      doc: "Until then every call fails (fast).",
      default: 3,
      min: 0,
      max: 60,
      step: 0.5,
      unit: "s",
    },
    workersKnob({ doc: "Calls the backend serves at once (10 ms each).", default: 10, min: 1, max: 10_000, step: 1 }),
    {
      kind: "integer",
      name: "queue",
      label: "Queue",
      doc: "Calls that may wait for a worker; more are turned away at once.",
      default: 50,
      min: 0,
      max: 100_000,
      step: 10,
    },
    attemptsKnob({ doc: "Tries a client may make, the first included.", default: 15, min: 1, max: 30, step: 1 }),
    baseKnob({
      doc: "The ceiling of the first retry's wait, doubling after.",
      default: 100,
      min: 1,
      max: 10_000,
      step: 10,
    }),
    capKnob({ default: 2_000, min: 1, max: 120_000, step: 100 }),
    {
      kind: "number",
      name: "duration",
      label: "Run length",
      doc: "How long the plot covers.",
      default: 30,
      min: 1,
      max: 600,
      step: 1,
      unit: "s",
    },
  ],
  options: (p) => ({ guard: { retry: { cap: capOf(p) } } }),
  work: (p) => ({ calls: JITTERS.length * p.clients, knobs: ["clients"] }),
  run(p, start) {
    checkDuration("herd-backoff", start, p.duration);
    const recovery = p.recovery * 1_000;
    const base = {
      seed: p.seed,
      start,
      duration: p.duration * 1_000,
      step: 100,
      traffic: herd({ clients: p.clients, spread: p.spread }),
      backend: {
        latency: exponential(10),
        failLatency: fixed(5),
        failures: new FailureSchedule(0, [{ from: 0, to: recovery, rate: 1 }]),
        workers: p.workers,
        queue: p.queue,
      },
    };
    const cap = capOf(p);
    const runs = JITTERS.map(([label, jitter]) =>
      simulate({
        ...base,
        label,
        client: { retry: { backoff: new Backoff({ base: p.base, factor: 2, cap, attempts: p.attempts, jitter }) } },
      }),
    );
    const figures: Record<string, number> = { capacity: (p.workers * 1_000) / 10 };
    const rows = runs.map((r) => {
      const peak = peakAfter(r, recovery);
      const down = peakBefore(r, recovery);
      const done = doneBy(r);
      figures[`${r.label}.peakLoad`] = peak;
      figures[`${r.label}.peakDown`] = down;
      figures[`${r.label}.attemptsPerClient`] = r.summary.attempts / p.clients;
      figures[`${r.label}.doneBy`] = done;
      figures[`${r.label}.gaveUp`] = r.summary.gaveUp;
      return [
        r.label,
        num(r.summary.attempts / p.clients, 2),
        `${num(down)}/s`,
        `${num(peak)}/s`,
        done >= 0 ? `${num(done, 1)} s` : "not yet",
        String(r.summary.gaveUp),
      ];
    });
    const table = {
      title: `${p.clients} clients call at once; the backend (${p.workers} workers, queue ${p.queue}) is down until ${p.recovery} s; up to ${p.attempts} attempts, ${p.base} ms doubling to ${cap} ms`,
      columns: [
        "jitter",
        "attempts per client",
        "peak backend load while down",
        "peak backend load after recovery",
        "every client done by",
        "gave up",
      ],
      rows,
    };
    return outcome(
      runs,
      table,
      figures,
      [
        `Rigid backoff kept the herd in step: ${num(figures["rigid.peakLoad"])} calls/s hit the recovering backend at once, against ${num(figures["full.peakLoad"])}/s with full jitter; the backend turned most of each wave away, so rigid clients took ${num(figures["rigid.attemptsPerClient"], 2)} attempts each and ${figures["rigid.gaveUp"]} of them gave up, ${doneText(figures["rigid.doneBy"])}, against ${num(figures["full.attemptsPerClient"], 2)} attempts, ${figures["full.gaveUp"]} given up and ${doneText(figures["full.doneBy"])} with full jitter.`,
        // The whole run's peak (the summary's) comes while the backend is down: say why it is not the herd's.
        ...(runs.every((r) => figures[`${r.label}.peakDown`] > figures[`${r.label}.peakLoad`])
          ? [
              `The busiest 100 ms of every run comes while the backend is down (${num(figures["full.peakDown"])}/s with full jitter, ${num(figures["rigid.peakDown"])}/s rigid): attempts fail fast there and are retried after the schedule's shortest waits, so first calls and first retries land together; the peak that decides the outcome is the one after recovery, when the backend can serve.`,
            ]
          : []),
        `Where jitter costs: while the backend is down, full jitter's waits average half the schedule's, so it spends more attempts on the dead backend than the jitters whose waits stay near the schedule (equal ${num(figures["equal.attemptsPerClient"], 2)}, the guard's spread of a fifth ${num(figures["spread 0.2.attemptsPerClient"], 2)}, ${doneText(figures["spread 0.2.doneBy"])}).`,
      ].join(" "),
    );
  },
});

/** "done by 5.1 s", or "not done when the plot ends". */
function doneText(seconds: number): string {
  return seconds >= 0 ? `done by ${num(seconds, 1)} s` : "not done when the plot ends";
}

/** The most calls that reached the backend in one 100 ms bucket at or after `from`, per second. */
function peakAfter(r: RunResult, from: number): number {
  let peak = 0;
  r.series.t.forEach((t, i) => {
    if (t >= from) peak = Math.max(peak, r.series.backendLoad[i]);
  });
  return (peak * 1_000) / r.step;
}

/** The most calls that reached the backend in one 100 ms bucket before `to`, per second. */
function peakBefore(r: RunResult, to: number): number {
  let peak = 0;
  r.series.t.forEach((t, i) => {
    if (t < to) peak = Math.max(peak, r.series.backendLoad[i]);
  });
  return (peak * 1_000) / r.step;
}

/** Seconds until the last call ended (in a success or not), or −1 if some were still going when the plot ends. */
function doneBy(r: RunResult): number {
  const s = r.series;
  const ended = s.completed.reduce((a, b) => a + b, 0) + s.gaveUp.reduce((a, b) => a + b, 0);
  if (ended < r.summary.calls) return -1;
  for (let i = s.t.length - 1; i >= 0; i--) if (s.completed[i] + s.gaveUp[i] > 0) return (s.t[i] + r.step) / 1_000;
  return 0;
}
