import { metastable } from "../backends";
import { poisson } from "../rates";
import type { RunResult } from "../result";
import { simulate } from "../simulate";
import { defineScenario, seedKnob } from "../scenario";
import type { ClientOptions } from "../options";
import { num, percent, outcome, sumBetween } from "../report";
import { LEAD_COLUMNS, lead, leadCells, leadFigures, recoveryText } from "./lead";
import { deadlineKnob, durationKnob, rateKnob, timeoutKnob } from "./knobs";
import { retriesOf, retryLineup } from "./lineups";
import type { RetryContender } from "./lineups";
import { checkDuration } from "./run-end";

/** The parameters of {@link metastableOverload}. */
export interface MetastableOverloadParams {
  readonly [name: string]: number | string;
  readonly seed: number;
  readonly capacity: number;
  readonly rate: number;
  readonly triggerFrom: number;
  readonly triggerLength: number;
  readonly slowdown: number;
  readonly timeout: number;
  readonly retries: number;
  readonly deadline: number;
  readonly abandoned: "serve" | "drop";
  readonly duration: number;
}

/** The runs that are a policy on retries (not retries alone, nor none), and how the report names each. */
const POLICIES = ["guard", "budget", "sre", "client", "classic", "shedder"] as const;
const NAMES: Readonly<Record<(typeof POLICIES)[number], string>> = {
  guard: "guard's default",
  budget: "budget alone",
  sre: "sre breaker",
  client: "client breaker alone",
  classic: "consecutive breaker",
  shedder: "shedder",
};

/** The clients compared, the guard's default first; two adaptive limits behind it last (ten runs: as many as the page's plot tells apart). */
const CONTENDERS = retryLineup([
  "guard",
  "retries",
  "none",
  "budget",
  "sre",
  "client",
  "classic",
  "shedder",
  "guard+gradient2",
  "guard+vegas",
]);

/**
 * A backend at three quarters of its capacity is slowed for a few seconds; its callers time out
 * and retry, and whether the overload outlasts the trigger is what each policy decides.
 */
export const metastableOverload = defineScenario<MetastableOverloadParams>({
  name: "metastable-overload",
  title: "Metastable overload",
  summary:
    "A backend serves 200 calls a second and is offered 150, Poisson. For a few seconds its service time doubles: a slow disk, a garbage collection, a noisy neighbour. Its queue grows, callers give up on each attempt after a second and retry, and the retries keep the load past capacity after the trigger is over: the backend is busy serving answers nobody waits for. That is a metastable failure, the situation retry budgets, adaptive breakers and load shedders exist for. Read whether, and how soon after the trigger, goodput (answers within the caller's deadline) is back to 90 %, and what the backend was asked meanwhile. Whether the backend serves or drops work whose caller has given up decides much of it: try both.",
  knobs: [
    seedKnob,
    {
      kind: "number",
      name: "capacity",
      label: "Capacity",
      doc: "Calls a second the backend serves at full speed (4 workers, exponential service times).",
      default: 200,
      min: 10,
      max: 10_000,
      step: 10,
      unit: "calls/s",
      scale: "log",
    },
    rateKnob({ default: 150, min: 1, max: 10_000, step: 10 }),
    {
      kind: "number",
      name: "triggerFrom",
      label: "Trigger starts",
      doc: "When service slows down.",
      default: 30,
      min: 0,
      max: 3_600,
      step: 1,
      unit: "s",
    },
    {
      kind: "number",
      name: "triggerLength",
      label: "Trigger length",
      doc: "How long service stays slow.",
      default: 10,
      min: 0,
      max: 600,
      step: 1,
      unit: "s",
    },
    {
      kind: "number",
      name: "slowdown",
      label: "Trigger slowdown",
      doc: "Service times are multiplied by this during the trigger.",
      default: 2,
      min: 1,
      max: 20,
      step: 0.1,
    },
    timeoutKnob({
      label: "Attempt timeout",
      doc: "How long a caller waits for one attempt before it counts it failed and retries.",
      default: 1,
      min: 0.01,
      max: 60,
      step: 0.1,
    }),
    {
      kind: "integer",
      name: "retries",
      label: "Retries",
      doc: "Retries after the first attempt, full jitter from 100 ms doubling to 1 s.",
      default: 3,
      min: 0,
      max: 20,
      step: 1,
      // The guard counts attempts, the first included.
      option: { path: "retry.attempts", offset: 1 },
    },
    deadlineKnob({
      doc: "Only an answer within this long of the call's arrival counts as goodput; no retry starts past it.",
      default: 5,
      min: 0.1,
      max: 600,
      step: 0.5,
    }),
    {
      kind: "select",
      name: "abandoned",
      label: "Work nobody waits for",
      doc: "What the backend does with a queued call whose caller has given up: serve it anyway, or drop it when it would start on it.",
      default: "serve",
      options: [
        { value: "serve", label: "served (work done for nobody)" },
        { value: "drop", label: "dropped (the server checks the deadline)" },
      ],
    },
    durationKnob({ default: 120, min: 10, max: 3_600, step: 10 }),
  ],
  work: (p) => ({ calls: CONTENDERS.length * p.rate * p.duration, knobs: ["rate", "duration"] }),
  run(p, start) {
    checkDuration("metastable-overload", start, p.duration);
    const from = p.triggerFrom * 1_000;
    const to = from + p.triggerLength * 1_000;
    const duration = p.duration * 1_000;
    const backend = metastable({
      capacity: p.capacity,
      workers: 4,
      trigger: { from, to, latency: p.slowdown },
      abandoned: p.abandoned,
    });
    const clientOf = (c: RetryContender): ClientOptions => ({
      timeout: p.timeout * 1_000,
      deadline: p.deadline * 1_000,
      retry: retriesOf(c, p.retries + 1),
    });
    const runs = CONTENDERS.map((c) =>
      simulate({
        seed: p.seed,
        start,
        duration,
        step: 1_000,
        label: c.label,
        traffic: poisson({ rate: p.rate }),
        backend,
        client: clientOf(c),
        policies: c.policies,
        // What is still queued when the traffic stops is not the story: stop there.
        drain: 0,
      }),
    );
    const figures: Record<string, number> = { capacity: p.capacity };
    const rows = runs.map((r, i) => {
      const id = CONTENDERS[i].id;
      const l = lead(r, { after: to, hold: 5_000 });
      leadFigures(figures, id, l);
      const before = refusedBefore(r, from);
      const after = goodputAfter(r, to, 30_000);
      figures[`${id}.refusedBeforeTrigger`] = before;
      figures[`${id}.goodputAfter`] = after;
      figures[`${id}.peakBackendLoad`] = r.summary.peakBackendLoad;
      return [r.label, ...leadCells(l, p.capacity), `${num(after)}/s`, `${num(r.summary.peakBackendLoad)}/s`];
    });
    const table = {
      title: `${p.rate} calls/s to ${p.capacity}/s of capacity; service ${p.slowdown}× slower from ${p.triggerFrom} s for ${p.triggerLength} s; attempts time out after ${p.timeout} s, up to ${p.retries} retries, a ${p.deadline} s deadline; abandoned work ${p.abandoned === "serve" ? "served" : "dropped"}. Recovered: five seconds in a row at 90 % goodput.`,
      columns: ["", ...LEAD_COLUMNS, "goodput in the 30 s after the trigger", "peak backend load"],
      rows,
    };
    const f = (id: string, name: string) => figures[`${id}.${name}`];
    const back = (id: string) => recoveryText(figures, id, " after the trigger");
    // The policy slowest to recover (one that never did, slowest of all), by its stated figures.
    const later = (a: string, b: string): boolean =>
      f(a, "recovered") !== f(b, "recovered")
        ? f(a, "recovered") === 0
        : f(a, "recoverySeconds") > f(b, "recoverySeconds");
    const slowest = POLICIES.reduce((a, b) => (later(b, a) ? b : a));
    const reading = [
      `With retries and no policy the backend ${f("retries", "recovered") === 1 ? `came back ${back("retries")}` : "never came back"}: ${num(f("retries", "goodputAfter"))} answers a second in time over the 30 s after the trigger, against ${p.rate} offered, every answer late because the queue is full of attempts whose callers have gone, and their retries keep it full.`,
      `The guard's default (the client breaker over budgeted retries) recovered ${back("guard")}; the budget alone ${back("budget")}, the client breaker alone ${back("client")}, the sre breaker ${back("sre")}, the consecutive breaker ${back("classic")}, the shedder ${back("shedder")}.`,
      p.abandoned === "serve"
        ? `Here the backend serves work nobody waits for (${f("retries", "wasted")} such calls without a policy). ${
            slowest === "budget"
              ? "The budget alone is the slowest policy to recover here: it still lets a fifth of the calls retry, which holds the load near capacity, so the queue of the trigger drains slowly."
              : `The slowest policy to recover here is the ${NAMES[slowest]} (${back(slowest)}); the budget alone, which still lets a fifth of the calls retry, ${back("budget") === "never" ? "never recovered" : `recovered ${back("budget")}`}.`
          } The breakers stop the retries outright, and the ones with a short window (the guard's client preset, the consecutive breaker) let the queue drain within seconds; the sre preset's ten-second window keeps refusing, and keeps the overload's failures, for longer. A backend that drops expired work (the knob) lets the budget and the shedder recover sooner.`
        : `Here the backend drops work whose caller has given up, so its queue empties at once when the load falls under capacity: even without retries' policies the damage is bounded.`,
      `With no retries at all it ${back("none") === "never" ? "never recovered" : `recovered ${back("none")}`}: the retries are what hold the overload in place.`,
      `Behind the guard's default, an adaptive concurrency limit on the server (its preset, a floor of one place, each second's calls folded into one sample) recovered: Gradient2 ${back("guard+gradient2")}, Vegas ${back("guard+vegas")}, with goodput over the run of ${percent(f("guard+gradient2", "goodputRate"))} and ${percent(f("guard+vegas", "goodputRate"))}. A limit refuses the calls past what the backend serves at once, so the trigger's queue never grows long.`,
      `Before the trigger, at ${percent(p.rate / p.capacity)} of capacity, the shedder refused ${f("shedder", "refusedBeforeTrigger")} calls.`,
    ].join(" ");
    return outcome(runs, table, figures, reading);
  },
});

/** Attempts refused before `from` ms. */
function refusedBefore(r: RunResult, from: number): number {
  return sumBetween(r.series.t, r.series.refused, 0, from);
}

/** Goodput a second over `[to, to + span)` ms (cut at the run's end). */
function goodputAfter(r: RunResult, to: number, span: number): number {
  const end = Math.min(to + span, r.duration);
  return end > to ? (sumBetween(r.series.t, r.series.goodput, to, end) * 1_000) / (end - to) : 0;
}
