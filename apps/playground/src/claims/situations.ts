// The situations the scoreboard and the READMEs make claims about: for each, a scenario of the
// simulator's catalogue, the figure a user judges the situation by (read from the scenario's
// result), the runs that are tideward's configurations and those that are baselines, and the
// main knobs a claim must survive ±20 % of. `pnpm claims` runs every one over seeds and those
// settings (see run.ts); nothing here runs a scenario by itself.
import type { KnobValue, ScenarioResult } from "@tideward/sim";

/** Which way is better for a figure. */
export type Better = "lower" | "higher";

/** A run of the scenario, by the id its figures are stated under, as the scoreboard names it. */
export interface Contender {
  readonly id: string;
  readonly label: string;
  readonly side: "tideward" | "baseline";
}

/** A figure users judge a situation by. */
export interface FigureDef {
  /** What it is, in a few words: "seconds until goodput is back at 90 % after the trigger". */
  readonly label: string;
  /** Its unit as printed after a value: "s", "%", "calls/s", "×", "" for a count. */
  readonly unit: string;
  readonly better: Better;
  /** Decimal places it is printed (and compared) to: two runs that print alike tie. */
  readonly digits: number;
  /** Its value for contender `id` in `result`; `null` when there is none to state (a run that never recovered). */
  read(result: ScenarioResult, id: string): number | null;
  /** What a `null` reads as ("never"); a `null` is worse than any value. */
  readonly none?: string;
}

/** A knob a claim must survive ±20 % of. */
export interface Nearby {
  readonly knob: string;
  /** What moving it means, for a setting's label: "load", "trigger length". */
  readonly what: string;
  /** For a knob that ends a stretch (an outage's end), the knob it starts at: the end moves so the stretch's length scales. */
  readonly from?: string;
}

/** One situation of the scoreboard and the READMEs. */
export interface Situation {
  /** Stable, for the data file and the README's markers: "metastable-served". */
  readonly id: string;
  readonly scenario: string;
  /** Parameters fixed for this situation, over the scenario's defaults. */
  readonly params?: Readonly<Record<string, KnobValue>>;
  /** The situation in a few words, for the scoreboard's first column. */
  readonly title: string;
  readonly figure: FigureDef;
  readonly contenders: readonly Contender[];
  readonly nearby: readonly Nearby[];
  /** Whether the first screen's scoreboard shows it (every situation is in the README). */
  readonly scoreboard: boolean;
  /** Whether one side can win: `false` where the figure is a choice, not a score (a limiter's admissions against its bound). @defaultValue true */
  readonly ranked?: boolean;
  /** Why the result is what it is, one line; it names no figure (the figures are measured, the reason is not). */
  readonly reason: string;
}

/** A figure the scenario states by name; a missing one is an error naming it, never a quiet 0. */
export function stated(result: ScenarioResult, name: string): number {
  const v = result.figures[name];
  if (typeof v !== "number") throw new Error(`${result.scenario} states no figure ${JSON.stringify(name)}`);
  return v;
}

/** Seconds until recovery as the scenario states it (`<id>.recoverySeconds`), `null` when it never recovered (`<id>.recovered` 0, or a negative time). */
function recovery(result: ScenarioResult, id: string): number | null {
  const recovered = result.figures[`${id}.recovered`];
  const seconds = stated(result, `${id}.recoverySeconds`);
  return recovered === 0 || seconds < 0 ? null : seconds;
}

/** The calls offered to each run (the same traffic for every run of a scenario). */
function offered(result: ScenarioResult): number {
  return result.runs[0]?.summary.calls ?? 0;
}

const recoveryFigure = (after: string): FigureDef => ({
  label: `seconds until goodput is back at 90 % after ${after}`,
  unit: "s",
  better: "lower",
  digits: 0,
  read: recovery,
  none: "never",
});

const goodputFigure: FigureDef = {
  label: "goodput: calls answered within the caller's deadline, of those offered",
  unit: "%",
  better: "higher",
  digits: 1,
  read: (r, id) => stated(r, `${id}.goodputRate`) * 100,
};

/** The retrying clients the overload scenarios set side by side. */
const retriers = (ids: readonly string[]): Contender[] => {
  const all: Record<string, Contender> = {
    guard: { id: "guard", label: "the guard's default (client breaker, budgeted retries)", side: "tideward" },
    client: { id: "client", label: "client breaker alone", side: "tideward" },
    budget: { id: "budget", label: "retry budget alone", side: "tideward" },
    sre: { id: "sre", label: "sre breaker", side: "tideward" },
    shedder: { id: "shedder", label: "shedder", side: "tideward" },
    retries: { id: "retries", label: "retries, no policy", side: "baseline" },
    none: { id: "none", label: "no retries", side: "baseline" },
    classic: { id: "classic", label: "consecutive breaker (cockatiel)", side: "baseline" },
  };
  return ids.map((id) => {
    const c = all[id];
    if (c === undefined) throw new Error(`no retrying client ${id}`);
    return c;
  });
};

const breakers: readonly Contender[] = [
  { id: "tideward", label: "the guard's default breaker", side: "tideward" },
  { id: "sre", label: "sre preset", side: "tideward" },
  { id: "classic", label: "consecutive (cockatiel)", side: "baseline" },
  { id: "sampling", label: "sampling (cockatiel)", side: "baseline" },
  { id: "opossum", label: "rolling percentage (opossum)", side: "baseline" },
  { id: "none", label: "no breaker", side: "baseline" },
];

const metastable = (abandoned: "serve" | "drop"): Situation => ({
  id: `metastable-${abandoned === "serve" ? "served" : "dropped"}`,
  scenario: "metastable-overload",
  params: { abandoned },
  title: `Metastable overload, work nobody waits for ${abandoned === "serve" ? "served" : "dropped"}`,
  figure: recoveryFigure("the trigger"),
  contenders: retriers(["guard", "client", "budget", "sre", "shedder", "retries", "none", "classic"]),
  nearby: [
    { knob: "rate", what: "load" },
    { knob: "triggerLength", what: "trigger length" },
    { knob: "deadline", what: "deadline" },
  ],
  scoreboard: true,
  reason:
    abandoned === "serve"
      ? "Retries hold an overload in place; a breaker that stops them lets the queue drain, where a budget alone still lets a share retry into it."
      : "A backend that drops expired work empties its queue as soon as the load falls, so most policies recover; retries without one still may not.",
});

/** Every situation, in the scoreboard's order: the ones tideward's defaults exist for first, then the others, wins and losses alike. */
export const situations: readonly Situation[] = [
  metastable("serve"),
  metastable("drop"),
  {
    id: "brownout-capacity",
    scenario: "breaker-brownout",
    title: "Brownout where a failing call holds a worker",
    figure: {
      ...goodputFigure,
      label: "goodput: calls answered within the deadline, of those offered (no retries)",
      read: (r, id) => (stated(r, `capacity.${id}.goodput`) / offered(r)) * 100,
    },
    contenders: breakers,
    nearby: [
      { knob: "rate", what: "load" },
      { knob: "to", what: "brownout length", from: "from" },
    ],
    scoreboard: true,
    reason:
      "A failure that holds a worker takes capacity from the calls that would succeed: refusing them early keeps the workers for those.",
  },
  {
    id: "brownout-free",
    scenario: "breaker-brownout",
    title: "Brownout where a failure costs nothing",
    figure: {
      ...goodputFigure,
      label: "goodput: calls answered within the deadline, of those offered (no retries)",
      read: (r, id) => (stated(r, `nothing.${id}.goodput`) / offered(r)) * 100,
    },
    contenders: breakers,
    nearby: [
      { knob: "rate", what: "load" },
      { knob: "to", what: "brownout length", from: "from" },
    ],
    scoreboard: true,
    reason:
      "When a failure costs the backend nothing, every refusal is a success lost: no breaker is best, and one can only tie it by not throttling.",
  },
  {
    id: "shedder-ramp",
    scenario: "shedder-ramp",
    title: "Load ramping past a server's capacity",
    figure: {
      label: "calls answered within the deadline at the peak (the last fifth), per second",
      unit: "calls/s",
      better: "higher",
      digits: 0,
      read: (r, id) => stated(r, `${id}.peakGoodput`),
    },
    contenders: [
      { id: "shedder", label: "the shedder", side: "tideward" },
      { id: "none", label: "no shedder", side: "baseline" },
    ],
    nearby: [
      { knob: "to", what: "peak load" },
      { knob: "deadline", what: "deadline" },
    ],
    scoreboard: true,
    reason:
      "Unshed, the queue grows until every answer comes after its caller has gone; the shedder refuses early and keeps the queue short.",
  },
  {
    id: "shedder-p99",
    scenario: "shedder-ramp",
    title: "Latency of the calls answered in time at the peak",
    figure: {
      label: "p99 latency of the answers in time at the peak",
      unit: "ms",
      better: "lower",
      digits: 0,
      read: (r, id) => {
        const v = stated(r, `${id}.peakP99`);
        // No answer in time at all: no latency to state.
        return stated(r, `${id}.peakGoodput`) === 0 ? null : v;
      },
      none: "no answer in time",
    },
    contenders: [
      { id: "shedder", label: "the shedder", side: "tideward" },
      { id: "none", label: "no shedder", side: "baseline" },
    ],
    nearby: [
      { knob: "to", what: "peak load" },
      { knob: "deadline", what: "deadline" },
    ],
    scoreboard: false,
    reason: "The shedder keeps the queue short, so the calls it admits wait little.",
  },
  {
    id: "breaker-outage-reached",
    scenario: "breaker-outage",
    params: { spreadSeeds: 0 },
    title: "A backend down for 40 s: calls that still reach it",
    figure: {
      label: "outage calls that reached the dead backend",
      unit: "%",
      better: "lower",
      digits: 1,
      read: (r, id) => stated(r, `${id}.reachedDuringOutage`) * 100,
    },
    contenders: breakers.filter((c) => c.id !== "none"),
    nearby: [
      { knob: "rate", what: "load" },
      { knob: "outageTo", what: "outage length", from: "outageFrom" },
    ],
    scoreboard: true,
    reason:
      "The consecutive breaker sends one probe an open period: nothing lets fewer calls through to a dead backend. The guard's breaker keeps probing a little, to notice recovery sooner.",
  },
  {
    id: "breaker-outage-recovery",
    scenario: "breaker-outage",
    params: { spreadSeeds: 0 },
    title: "A backend down for 40 s: back after it recovers",
    figure: recoveryFigure("the outage"),
    contenders: breakers.filter((c) => c.id !== "none"),
    nearby: [
      { knob: "rate", what: "load" },
      { knob: "outageTo", what: "outage length", from: "outageFrom" },
    ],
    scoreboard: true,
    reason:
      "A fixed open time refuses a recovered backend until its next probe; the guard's breaker lets calls through again as soon as they succeed.",
  },
  {
    id: "slow-backend",
    scenario: "slow-backend",
    title: "A backend that slows down by itself",
    figure: goodputFigure,
    contenders: retriers(["guard", "budget", "sre", "retries", "none", "classic"]),
    nearby: [
      { knob: "rate", what: "load" },
      { knob: "peak", what: "slowest service time" },
      { knob: "deadline", what: "deadline" },
    ],
    scoreboard: true,
    reason:
      "When the slowness is the backend's own, a retry after a timeout asks it for the same slow work again: not retrying at all does best.",
  },
  {
    id: "retry-amplification-load",
    scenario: "retry-amplification",
    title: "A backend failing half its calls: the load retries add",
    figure: {
      label: "attempts a call costs the backend",
      unit: "×",
      better: "lower",
      digits: 2,
      read: (r, id) => stated(r, `${id}.amplification`),
    },
    contenders: [
      { id: "budget", label: "retry budget (a fifth of calls, no floor)", side: "tideward" },
      { id: "unbounded", label: "retries, no budget", side: "baseline" },
    ],
    nearby: [
      { knob: "rate", what: "load" },
      { knob: "failureRate", what: "failure rate" },
    ],
    scoreboard: true,
    reason:
      "A budget caps retries at a share of first attempts, whatever the failure rate. With the guard's default floor of 10 retries a second it does so only above 50 calls a second.",
  },
  {
    id: "retry-amplification-goodput",
    scenario: "retry-amplification",
    title: "A backend failing half its calls: what the budget costs",
    figure: goodputFigure,
    contenders: [
      { id: "budget", label: "retry budget (a fifth of calls, no floor)", side: "tideward" },
      { id: "unbounded", label: "retries, no budget", side: "baseline" },
    ],
    nearby: [
      { knob: "rate", what: "load" },
      { knob: "failureRate", what: "failure rate" },
    ],
    scoreboard: true,
    reason:
      "Failures here do not come from load, so every retry refused is a success lost: the budget pays in goodput for the load it spares.",
  },
  {
    id: "herd-recovery",
    scenario: "herd-recovery",
    title: "A herd retrying into a backend that just recovered",
    figure: recoveryFigure("the outage"),
    contenders: [
      { id: "budget", label: "full jitter with a retry budget", side: "tideward" },
      { id: "rigid", label: "rigid backoff, no budget", side: "baseline" },
      { id: "none", label: "no retries", side: "baseline" },
    ],
    nearby: [
      { knob: "rate", what: "load" },
      { knob: "outageTo", what: "outage length", from: "outageFrom" },
      { knob: "timeout", what: "attempt timeout" },
    ],
    scoreboard: true,
    reason:
      "Without a budget the retries hold a recovered backend past its capacity; with one, retrying costs no more than not retrying.",
  },
  {
    id: "herd-backoff",
    scenario: "herd-backoff",
    title: "A thousand clients failing together, then retrying",
    figure: {
      label: "seconds until every client is done",
      unit: "s",
      better: "lower",
      digits: 1,
      read: (r, id) => stated(r, `${id}.doneBy`),
    },
    contenders: [
      { id: "spread 0.2", label: "the guard's default (a wait spread by a fifth)", side: "tideward" },
      { id: "full", label: "full jitter", side: "tideward" },
      { id: "equal", label: "equal jitter", side: "tideward" },
      { id: "rigid", label: "no jitter (exponential-backoff's default)", side: "baseline" },
      { id: "decorrelated", label: "decorrelated jitter (cockatiel's default kind)", side: "baseline" },
    ],
    nearby: [
      { knob: "clients", what: "clients" },
      { knob: "recovery", what: "outage length" },
    ],
    scoreboard: true,
    reason:
      "Any jitter breaks the herd's lockstep; waits that stay near the schedule spend fewer attempts on a backend that is still down.",
  },
  {
    id: "contention-backoff",
    scenario: "contention-backoff",
    params: { seeds: 1 },
    title: "Clients contending for one optimistically locked resource",
    figure: {
      label: "calls each client made to write once",
      unit: "calls",
      better: "lower",
      digits: 1,
      read: (r, id) => stated(r, `${id}.callsPerClient`),
    },
    contenders: [
      { id: "spread", label: "the guard's default (a wait spread by a fifth)", side: "tideward" },
      { id: "full", label: "full jitter", side: "tideward" },
      { id: "equal", label: "equal jitter", side: "tideward" },
      { id: "rigid", label: "no jitter (exponential-backoff's default)", side: "baseline" },
      { id: "decorrelated", label: "decorrelated jitter (cockatiel's default kind)", side: "baseline" },
      { id: "nobackoff", label: "no backoff", side: "baseline" },
    ],
    nearby: [{ knob: "clients", what: "clients" }],
    scoreboard: true,
    reason:
      "Contenders collide again unless their waits spread widely; a spread of a fifth never waits under four fifths of the schedule, so set a full jitter here. No backoff at all costs the most calls.",
  },
  {
    id: "contention-backoff-time",
    scenario: "contention-backoff",
    params: { seeds: 1 },
    title: "Clients contending for one optimistically locked resource: how long",
    figure: {
      label: "seconds until every client has written once",
      unit: "s",
      better: "lower",
      digits: 1,
      read: (r, id) => stated(r, `${id}.completionTime`) / 1_000,
    },
    contenders: [
      { id: "spread", label: "the guard's default (a wait spread by a fifth)", side: "tideward" },
      { id: "full", label: "full jitter", side: "tideward" },
      { id: "equal", label: "equal jitter", side: "tideward" },
      { id: "rigid", label: "no jitter (exponential-backoff's default)", side: "baseline" },
      { id: "decorrelated", label: "decorrelated jitter (cockatiel's default kind)", side: "baseline" },
      { id: "nobackoff", label: "no backoff", side: "baseline" },
    ],
    nearby: [{ knob: "clients", what: "clients" }],
    scoreboard: false,
    reason:
      "No backoff finishes soonest, by trying again at once and paying for it in calls; of the backoffs, the widely spread waits finish first.",
  },
  {
    id: "quota-atomic",
    scenario: "quota-atomic",
    title: "Three budgets charged for one call",
    figure: {
      label: "model tokens charged for calls a later budget refused",
      unit: "tokens",
      better: "lower",
      digits: 0,
      read: (r, id) => stated(r, `${id}.wasted.model`),
    },
    contenders: [
      { id: "atomic", label: "one atomic charge (the quota engine)", side: "tideward" },
      { id: "sequential", label: "one charge after another (separate limiters)", side: "baseline" },
    ],
    nearby: [
      { knob: "rate", what: "load" },
      { knob: "tokens", what: "tokens a call" },
    ],
    scoreboard: true,
    reason:
      "An atomic charge set takes nothing unless every budget can pay; charged one by one, the first ones pay for calls the last refuses.",
  },
  {
    id: "quota-bursts",
    scenario: "quota-bursts",
    title: "A burst across a second boundary, quota 20 a second",
    figure: {
      label: "calls of one burst let through (the quota is 20 in any second)",
      unit: "calls",
      better: "lower",
      digits: 0,
      read: (r, id) => stated(r, `${id}.first`),
    },
    contenders: [
      { id: "sliding", label: "sliding window", side: "tideward" },
      { id: "bucket", label: "token bucket", side: "tideward" },
      { id: "period", label: "fixed window, aligned (express-rate-limit's kind)", side: "baseline" },
    ],
    nearby: [{ knob: "size", what: "calls in a burst" }],
    scoreboard: false,
    ranked: false,
    reason:
      "A fixed window starts a fresh quota when the second turns over, so a burst across the boundary gets two; a sliding window never passes its quota in any second.",
  },
];

/** The factors a main knob is moved by: 20 % either way. */
export const FACTORS = [0.8, 1.2] as const;
