import { exponential } from "../distribution";
import { shedder } from "../policies/shedder";
import { simulate } from "../simulate";
import { ramp } from "../rates";
import type { RunResult } from "../result";
import { defineScenario, seedKnob } from "../scenario";
import { num, percent, outcome } from "../report";
import type { NumberKnob } from "../scenario";
import { deadlineKnob, durationKnob, timeoutKnob, workersKnob } from "./knobs";
import { LEAD_COLUMNS, loadCell } from "./lead";
import { checkDuration } from "./run-end";

/** The parameters of {@link shedderRamp}. */
export interface ShedderRampParams {
  readonly [name: string]: number;
  readonly seed: number;
  readonly from: number;
  readonly to: number;
  readonly duration: number;
  readonly workers: number;
  readonly service: number;
  readonly queue: number;
  readonly cpu: number;
  readonly timeout: number;
  readonly deadline: number;
}

/**
 * Offered load ramps past what a server can do. With tideward's shedder the server refuses the
 * excess once it is hot and full; without it the queue fills and every call waits behind it.
 */
export const shedderRamp = defineScenario<ShedderRampParams>({
  name: "shedder-ramp",
  title: "Shedder under rising load",
  summary:
    "Poisson load ramps in a straight line from well under a server's capacity to past it. The server has a fixed number of workers and a queue, so its CPU reading climbs with the load and waiting turns into latency as queueing theory says. tideward's shedder refuses only when the server is both hot and full, so below capacity it refuses nothing, and past it it keeps the queue short: admitted calls stay fast. Without it the queue fills and every call waits behind it. Read the latency of admitted calls at the peak, and what reached a worker.",
  knobs: [
    seedKnob,
    loadKnob("from", "Load at the start", "Calls a second when the ramp begins.", 50),
    loadKnob("to", "Load at the end", "Calls a second when the ramp ends.", 600),
    durationKnob({ doc: "How long the ramp takes.", default: 120, min: 10, max: 3_600, step: 10 }),
    workersKnob({ doc: "Calls the server serves at once.", default: 8, min: 1, max: 1_000, step: 1 }),
    {
      kind: "number",
      name: "service",
      label: "Service time",
      doc: "Mean time a worker spends on a call, exponentially distributed.",
      default: 20,
      min: 1,
      max: 1_000,
      step: 1,
      unit: "ms",
      scale: "log",
    },
    {
      kind: "integer",
      name: "queue",
      label: "Queue",
      doc: "Calls that may wait for a worker; more fail at once.",
      default: 2_000,
      min: 0,
      max: 100_000,
      step: 10,
      unit: "calls",
    },
    {
      kind: "number",
      name: "cpu",
      label: "Shedder CPU threshold",
      doc: "CPU use in thousandths at which the server counts as hot.",
      default: 900,
      min: 0,
      max: 999,
      step: 10,
      unit: "‰",
      // The shedder sits on the server: it is the server's admission's, not the caller's guard's.
      option: { of: "admit", path: "shedder.cpu" },
    },
    // 0 is the guard's "no timeout" too.
    timeoutKnob({
      label: "Client timeout",
      doc: "How long a client waits for an attempt; 0 waits until the deadline.",
      default: 0,
      min: 0,
      max: 60,
      step: 0.1,
    }),
    deadlineKnob({
      doc: "Only an answer within this long counts as goodput; the caller stops waiting then (the server still serves what it queued).",
      default: 1,
      min: 0.01,
      max: 600,
      step: 0.1,
    }),
  ],
  // Two runs of a ramp: its mean rate over the duration.
  work: (p) => ({ calls: 2 * ((p.from + p.to) / 2) * p.duration, knobs: ["from", "to", "duration"] }),
  run(p, start) {
    checkDuration("shedder-ramp", start, p.duration);
    const duration = p.duration * 1_000;
    const base = {
      seed: p.seed,
      start,
      duration,
      step: Math.max(100, duration / 240),
      traffic: ramp({ from: p.from, to: p.to }),
      backend: { latency: exponential(p.service), workers: p.workers, queue: p.queue },
      client: { deadline: p.deadline * 1_000, ...(p.timeout > 0 ? { timeout: p.timeout * 1_000 } : {}) },
    };
    const runs = [
      simulate({ ...base, label: "tideward shedder", policies: [shedder({ cpu: p.cpu })] }),
      simulate({ ...base, label: "no shedder" }),
    ];
    const capacity = (p.workers * 1_000) / p.service;
    const ids = ["shedder", "none"];
    const figures: Record<string, number> = { capacity };
    const rows = runs.map((r, i) => {
      const peak = atPeak(r);
      const first = firstRefusal(r);
      figures[`${ids[i]}.peakP99`] = peak.p99;
      figures[`${ids[i]}.peakGoodput`] = peak.goodput;
      figures[`${ids[i]}.peakGoodputRate`] = peak.goodputRate;
      figures[`${ids[i]}.peakSuccesses`] = peak.successes;
      figures[`${ids[i]}.peakQueue`] = peak.queue;
      figures[`${ids[i]}.peakBackend`] = peak.backend;
      figures[`${ids[i]}.peakRefused`] = peak.refused;
      figures[`${ids[i]}.peakFailed`] = peak.failed;
      figures[`${ids[i]}.firstRefusalLoad`] = first;
      figures[`${ids[i]}.wasted`] = r.summary.wasted;
      figures[`${ids[i]}.goodputRate`] = r.summary.goodputRate ?? 0;
      return [
        r.label,
        percent(peak.goodputRate),
        `${num(peak.goodput)}/s`,
        loadCell(peak.backend, capacity),
        "–",
        String(r.summary.wasted),
        `${num(peak.successes)}/s`,
        num(peak.queue),
        peak.p99 > 0 ? `${num(peak.p99)} ms` : "–",
        percent(peak.refused),
        first > 0 ? `${num(first)}/s` : "never",
      ];
    });
    const table = {
      title: `load ${p.from} → ${p.to} calls/s on ${p.workers} workers of ${p.service} ms (capacity ${num(capacity)}/s), a ${p.deadline} s deadline; figures over the last fifth of the run (the load never falls, so nothing recovers)`,
      columns: [
        "",
        ...LEAD_COLUMNS,
        "served, late ones included",
        "calls queued",
        "p99 latency of answers in time",
        "refused",
        "first refusal at a load of",
      ],
      rows,
    };
    return outcome(
      runs,
      table,
      figures,
      `At the peak, with the shedder ${num(figures["shedder.peakGoodput"])} calls a second were answered within the ${p.deadline} s deadline, without it ${num(figures["none.peakGoodput"])}: unshed, the server still finishes ${num(figures["none.peakSuccesses"])} calls a second, but ${
        // "Each" only when none came in time: at a lower peak or a longer deadline some do.
        num(figures["none.peakGoodput"]) === "0"
          ? "each waited behind a queue of " + num(figures["none.peakQueue"]) + " calls and its caller had given up"
          : `${percent(1 - figures["none.peakGoodput"] / Math.max(1e-9, figures["none.peakSuccesses"]))} of them waited behind a queue of ${num(figures["none.peakQueue"])} calls until their callers had given up`
      }, so ${figures["none.wasted"]} calls were served for nobody. Counting those late successes as successes is what made no shedder look as good. The shedder first refused when the load reached ${num(figures["shedder.firstRefusalLoad"])} calls/s, against a capacity of ${num(capacity)}, and the p99 of the answers in time at the peak was ${num(figures["shedder.peakP99"])} ms.`,
    );
  },
});

/** The ramp's load at one end, calls a second. */
function loadKnob(name: string, label: string, doc: string, value: number): NumberKnob {
  return {
    kind: "number",
    name,
    label,
    doc,
    default: value,
    min: 1,
    max: 10_000,
    step: 10,
    unit: "calls/s",
    scale: "log",
  };
}

/** Over the last fifth of the run: p99 (the worst bucket's), goodput (a second, and a share of the calls offered), calls served a second (late ones included), the mean queue, backend load a second, and the shares refused and failed. */
function atPeak(r: RunResult): {
  p99: number;
  goodput: number;
  goodputRate: number;
  successes: number;
  queue: number;
  backend: number;
  refused: number;
  failed: number;
} {
  const s = r.series;
  const from = Math.floor(s.t.length * 0.8);
  let p99 = 0;
  let good = 0;
  let offered = 0;
  let ok = 0;
  let queue = 0;
  let backend = 0;
  let attempts = 0;
  let refused = 0;
  let failed = 0;
  for (let i = from; i < s.t.length; i++) {
    p99 = Math.max(p99, s.p99[i] ?? 0);
    good += s.goodput[i];
    offered += s.offered[i];
    // Served: answered in time, or finished after the caller had gone.
    ok += s.succeeded[i] + s.wasted[i];
    queue += s.backendQueue[i];
    backend += s.backendLoad[i];
    attempts += s.attempts[i];
    refused += s.refused[i];
    failed += s.failed[i];
  }
  const seconds = ((s.t.length - from) * r.step) / 1_000;
  return {
    p99,
    goodput: good / seconds,
    goodputRate: offered > 0 ? good / offered : 0,
    successes: ok / seconds,
    queue: queue / (s.t.length - from),
    backend: backend / seconds,
    refused: attempts > 0 ? refused / attempts : 0,
    failed: attempts > 0 ? failed / attempts : 0,
  };
}

/** The offered load (calls a second) in the first bucket with a refusal, or 0. */
function firstRefusal(r: RunResult): number {
  const s = r.series;
  const i = s.refused.findIndex((n) => n > 0);
  return i < 0 ? 0 : (s.offered[i] * 1_000) / r.step;
}
