// The situations the scoreboard and the READMEs make claims about, in the scoreboard's order: the
// ones tideward's defaults exist for first, then the others, wins and losses alike. `pnpm claims`
// runs every one over seeds and nearby settings (scripts/claims.ts).
import { alsoOf, breakers, goodputFigure, offered, recoveryFigure, retriers, stated } from "./situation.ts";
import type { Contender, Situation } from "./situation.ts";

export { FACTORS } from "./situation.ts";
export type { Better, Contender, FigureDef, Nearby, Situation } from "./situation.ts";

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

const brownoutCapacity: Situation = {
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
};

const brownoutFree: Situation = {
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
};

const shedderRamp: Situation = {
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
};

const outageReached: Situation = {
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
};

const slowBackend: Situation = {
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
};

const herdBackoff: Situation = {
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
};

/** The token-budget situations, in the order the quota engine's README sets them side by side. */
export const TOKEN_BUDGET_SITUATIONS = [
  "token-budget-served",
  "token-budget-refused",
  "token-budget-overrun",
  "token-budget-model-use",
] as const;

/** The token-budget scenario's ways: reserving first, the oracle a reference no caller can be. */
const tokenWays: readonly Contender[] = [
  { id: "reserve", label: "reserve the bound, settle the actual (the quota engine)", side: "tideward" },
  { id: "bound", label: "charge the bound", side: "baseline" },
  { id: "after", label: "charge the actual after the response", side: "baseline" },
  { id: "oracle", label: "oracle: the actual known at admission", side: "reference" },
];

const tokensServed: Situation = {
  id: "token-budget-served",
  scenario: "token-budget",
  title: "Token budgets, a request's cost known only with its response",
  figure: {
    label: "tokens served, of what the oracle served",
    unit: "%",
    better: "higher",
    digits: 1,
    read: (r, id) => stated(r, `${id}.ofOracle`) * 100,
  },
  contenders: tokenWays,
  nearby: [
    { knob: "rate", what: "load" },
    { knob: "latency", what: "response time" },
    { knob: "tokens", what: "tokens a response" },
  ],
  scoreboard: true,
  reason:
    "Charged at the bound, budgets drain at the worst case. Reserving gives back what a response did not use, but only once it has come; charging afterwards serves as much or more by overrunning a budget.",
};

/** Every situation, in the scoreboard's order: the ones tideward's defaults exist for first, then the others, wins and losses alike. */
export const situations: readonly Situation[] = [
  metastable("serve"),
  metastable("drop"),
  brownoutCapacity,
  brownoutFree,
  alsoOf(brownoutCapacity, {
    id: "brownout-capacity-retried",
    title: "Brownout where a failing call holds a worker, with three retries",
    figure: {
      ...brownoutCapacity.figure,
      label: "goodput: calls answered within the deadline, of those offered (three retries, full jitter)",
      read: (r, id) => (stated(r, `capacity.${id}.goodputRetried`) / offered(r)) * 100,
    },
    reason:
      "Retries spend the workers a failure holds too: the breaker that refuses early keeps them for calls that succeed.",
  }),
  alsoOf(brownoutFree, {
    id: "brownout-free-retried",
    title: "Brownout where a failure costs nothing, with three retries",
    figure: {
      ...brownoutFree.figure,
      label: "goodput: calls answered within the deadline, of those offered (three retries, full jitter)",
      read: (r, id) => (stated(r, `nothing.${id}.goodputRetried`) / offered(r)) * 100,
    },
    reason: "A retry of a call that failed for free is a second chance at no cost: every refusal loses it.",
  }),
  shedderRamp,
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
  alsoOf(shedderRamp, {
    id: "shedder-first-refusal",
    title: "Where the shedder starts refusing",
    figure: {
      label: "calls offered a second when the shedder first refused (the capacity is 400)",
      unit: "calls/s",
      better: "higher",
      digits: 0,
      read: (r, id) => stated(r, `${id}.firstRefusalLoad`),
    },
    contenders: [{ id: "shedder", label: "the shedder", side: "tideward" }],
    ranked: false,
    reason: "The shedder refuses only when the server is hot and full: near its capacity, not before.",
  }),
  outageReached,
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
  alsoOf(outageReached, {
    id: "breaker-outage-refused",
    title: "A backend down for 40 s: calls refused while it was up",
    figure: {
      label: "calls refused while the backend was up",
      unit: "calls",
      better: "lower",
      digits: 0,
      read: (r, id) => stated(r, `${id}.refusedWhileUp`),
    },
    reason:
      "A fixed open time refuses a recovered backend until its next probe: how many it refuses hangs on where the outage ends within an open period.",
  }),
  alsoOf(outageReached, {
    id: "breaker-outage-goodput",
    title: "A backend down for 40 s: goodput",
    figure: goodputFigure,
    contenders: breakers,
    reason:
      "A failure costs the caller nothing here, so no breaker gives the most goodput; what a breaker buys in an outage is the backend's load.",
  }),
  slowBackend,
  alsoOf(slowBackend, {
    id: "slow-backend-load",
    title: "A backend that slows down by itself: what the callers ask of it",
    figure: {
      label: "calls a second the backend was asked while slow",
      unit: "calls/s",
      better: "lower",
      digits: 0,
      read: (r, id) => stated(r, `${id}.backendWhileSlow`),
    },
    reason:
      "Retries without a policy pile onto a backend that has just lost capacity; a breaker or a budget holds them back.",
  }),
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
  herdBackoff,
  alsoOf(herdBackoff, {
    id: "herd-backoff-attempts",
    title: "A thousand clients failing together: attempts each",
    figure: {
      label: "attempts each client made",
      unit: "",
      better: "lower",
      digits: 2,
      read: (r, id) => stated(r, `${id}.attemptsPerClient`),
    },
    reason:
      "While the backend is down, full jitter's waits average half the schedule's, so it spends more attempts on it than waits that stay near the schedule.",
  }),
  alsoOf(herdBackoff, {
    id: "herd-backoff-gave-up",
    title: "A thousand clients failing together: clients that gave up",
    figure: {
      label: "clients that ran out of attempts",
      unit: "clients",
      better: "lower",
      digits: 0,
      read: (r, id) => stated(r, `${id}.gaveUp`),
    },
    reason: "Without jitter the herd stays in step, each wave turned away together, until some run out of attempts.",
  }),
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
  tokensServed,
  alsoOf(tokensServed, {
    id: "token-budget-refused",
    title: "Token budgets: tenants refused while under their quota",
    figure: {
      label: "tenants refused while under their quota by the actual count",
      unit: "tenants",
      better: "lower",
      digits: 0,
      read: (r, id) => stated(r, `${id}.underRefused`),
    },
    scoreboard: true,
    reason:
      "Charged at the bound, a tenant whose responses use a third of it is refused at a third of its quota. A tenant right at its quota can be refused by reserving, for the unused bounds of its requests in flight.",
  }),
  alsoOf(tokensServed, {
    id: "token-budget-overrun",
    title: "Token budgets: how far past a budget",
    figure: {
      label: "worst overrun of any budget, in requests' max_tokens",
      unit: "max_tokens",
      better: "lower",
      digits: 1,
      read: (r, id) => stated(r, `${id}.overrun`),
    },
    scoreboard: true,
    reason:
      "Charged after the response, every request admitted while a budget still had tokens is charged when done, all at once; charged or reserved up front, nothing passes a budget.",
  }),
  alsoOf(tokensServed, {
    id: "token-budget-model-use",
    title: "Token budgets: the model's budget used",
    figure: {
      label: "tokens served, of what the model's budget could give over the run",
      unit: "%",
      better: "higher",
      digits: 1,
      read: (r, id) => stated(r, `${id}.modelUse`) * 100,
    },
    ranked: false,
    reason: "Charged at the bound, the model's budget is spent at the worst case; past 100 % is an overrun.",
  }),
  {
    ...tokensServed,
    id: "token-budget-estimate",
    params: { reserved: 0.3 },
    title: "Token budgets: reserving an estimate below the bound",
    figure: {
      label: "worst overrun of any budget, in the largest top-up one request can make (700 tokens)",
      unit: "×",
      better: "lower",
      digits: 1,
      read: (r, id) => stated(r, `${id}.overrunTopUps`),
    },
    contenders: [
      { id: "reserve", label: "reserve 300 tokens, settle the actual (the quota engine)", side: "tideward" },
    ],
    scoreboard: false,
    ranked: false,
    reason:
      "A response past its estimate tops up, never refused: requests in flight together can top up a budget past one request's largest top-up.",
  },
];
