// The runs the breaker sweep judges a policy by, through @tideward/sim's public API: the page's
// outage (its figures computed as the page computes them), a brownout and a metastable overload.
import { failures, latency, simulate, traffic } from "@tideward/sim";
import type { ClientOptions, PolicySpec, RunResult } from "@tideward/sim";
import { Jitter } from "@tideward/backoff";

/** The page's "Breaker under an outage" at its defaults: calls a second, mean latency (ms), outage start and run length (ms). */
export const PAGE = Object.freeze({ rate: 100, latency: 20, from: 40_000, duration: 180_000 });

/** What the page's table shows for one breaker on one run of the outage. */
export interface OutageFigures {
  /** Attempts that reached the backend over attempts made, in the outage's one-second buckets (a share). */
  readonly reached: number;
  /** Seconds from the outage's end to the first one-second bucket with 90 % of its calls succeeding. */
  readonly recovery: number;
  /** Calls refused outside the outage's buckets. */
  readonly refusedUp: number;
  /** Calls that ended in a success, over calls offered (a share). */
  readonly success: number;
}

function sum(values: readonly number[], from: number, to: number): number {
  let s = 0;
  for (let i = from; i < to && i < values.length; i++) s += values[i];
  return s;
}

/** The page's figures of `run`, for an outage over `[from, to)` ms (its buckets as the page takes them). */
export function outageFigures(run: RunResult, from: number, to: number): OutageFigures {
  const s = run.series;
  const first = Math.floor(from / 1_000);
  const last = Math.ceil(to / 1_000);
  const attempts = sum(s.attempts, first, last);
  let recovery = (run.duration - to) / 1_000;
  for (let i = 0; i < s.t.length; i++) {
    if (s.t[i] >= to && s.offered[i] > 0 && s.completed[i] >= 0.9 * s.offered[i]) {
      recovery = (s.t[i] - to) / 1_000;
      break;
    }
  }
  return {
    reached: attempts > 0 ? sum(s.backendLoad, first, last) / attempts : 0,
    recovery,
    refusedUp: run.summary.refused - sum(s.refused, first, last),
    success: run.summary.successRate ?? 0,
  };
}

/** One run of the page's outage, every call failing from 40 s to `to` ms, behind `spec` (or nothing). */
export function outage(spec: PolicySpec | undefined, seed: number, to: number): OutageFigures {
  const run = simulate({
    seed,
    duration: PAGE.duration,
    step: 1_000,
    traffic: traffic.poisson({ rate: PAGE.rate }),
    backend: {
      latency: latency.exponential(PAGE.latency),
      failures: failures.schedule([{ from: PAGE.from, to, rate: 1 }], 0),
    },
    policies: spec === undefined ? [] : [spec],
  });
  return outageFigures(run, PAGE.from, to);
}

/**
 * The share of calls refused over ten minutes of light Poisson traffic (`rate` calls a second) to
 * a backend failing a steady share `failing` of them, over three seeds: what a breaker costs a
 * quiet client of a flaky but working backend.
 */
export function light(make: (() => PolicySpec) | undefined, rate: number, failing: number): number {
  let refused = 0;
  let calls = 0;
  for (const seed of [1, 2, 3]) {
    const run = simulate({
      seed,
      duration: 600_000,
      traffic: traffic.poisson({ rate }),
      backend: { latency: latency.exponential(PAGE.latency), failures: failing },
      policies: make === undefined ? [] : [make()],
    });
    refused += run.summary.refused;
    calls += run.summary.calls;
  }
  return calls > 0 ? refused / calls : 0;
}

/** What a brownout run shows: calls that ended in a success, and what the backend was asked. */
export interface BrownoutFigures {
  /** Calls that ended in a success (with no deadline in the model, every success is in time). */
  readonly goodput: number;
  /** Attempts that reached the backend. */
  readonly backendCalls: number;
  /** Calls refused by the breaker. */
  readonly refused: number;
}

/** Three attempts a call, 100 ms doubling to 1 s, fully jittered: the retries of the brownout's second column. */
export const RETRIES: ClientOptions = Object.freeze({
  retry: { backoff: { attempts: 3, base: 100, cap: 1_000, jitter: Jitter.full } },
});

/** The page's traffic with 40 % of calls failing from 40 s to 100 s, behind `spec`, with or without retries. */
export function brownout(spec: PolicySpec | undefined, seed: number, retry: boolean): BrownoutFigures {
  const run = simulate({
    seed,
    duration: PAGE.duration,
    step: 1_000,
    traffic: traffic.poisson({ rate: PAGE.rate }),
    backend: {
      latency: latency.exponential(PAGE.latency),
      failures: failures.brownout({ from: 40_000, to: 100_000, rate: 0.4 }),
    },
    client: retry ? RETRIES : {},
    policies: spec === undefined ? [] : [spec],
  });
  return { goodput: run.summary.completed, backendCalls: run.summary.backendLoad, refused: run.summary.refused };
}

/** The metastable overload: a server and the load and trigger that tip it. */
export const OVERLOAD = Object.freeze({
  /** Workers, each serving a call in an exponential 20 ms: 200 calls a second of capacity. */
  workers: 4,
  /** Calls offered a second outside the trigger: 75 % of capacity. */
  rate: 150,
  /** Calls offered a second during the trigger. */
  spike: 300,
  /** The trigger, ms after the start. */
  from: 30_000,
  to: 35_000,
  /** How long a client waits for an attempt, ms; the server goes on serving what it gave up on. */
  timeout: 1_000,
  duration: 120_000,
});

/** What a metastable run shows. */
export interface OverloadFigures {
  /** Seconds after the trigger ends until a one-second bucket has 90 % of its calls succeeding, or the rest of the run. */
  readonly recovery: number;
  /** Whether any bucket after the trigger did. */
  readonly recovered: boolean;
  /** Calls that ended in a success over calls offered, in the 30 s after the trigger (a share). */
  readonly goodputAfter: number;
}

/**
 * 150 calls a second to four workers (200 a second of capacity, an unbounded queue), a spike to
 * 300 for five seconds, clients that give up after a second and retry three attempts with full
 * jitter: without a policy the queue of work nobody waits for keeps every attempt late, the
 * retries keep the load above capacity, and it never recovers.
 */
export function overload(spec: PolicySpec | undefined, seed: number): OverloadFigures {
  const o = OVERLOAD;
  const run = simulate({
    seed,
    duration: o.duration,
    step: 1_000,
    traffic: traffic.shaped({
      rate: (t) => (t >= o.from && t < o.to ? o.spike : o.rate),
      peak: o.spike,
      label: "150/s, 300/s for 5 s",
    }),
    backend: { latency: latency.exponential(20), workers: o.workers },
    client: { timeout: o.timeout, ...RETRIES },
    policies: spec === undefined ? [] : [spec],
    drain: 0,
  });
  const s = run.series;
  let recovery = (o.duration - o.to) / 1_000;
  let recovered = false;
  for (let i = 0; i < s.t.length; i++) {
    if (s.t[i] >= o.to && s.offered[i] > 0 && s.completed[i] >= 0.9 * s.offered[i]) {
      recovery = (s.t[i] - o.to) / 1_000;
      recovered = true;
      break;
    }
  }
  const first = o.to / 1_000;
  const offered = sum(s.offered, first, first + 30);
  return { recovery, recovered, goodputAfter: offered > 0 ? sum(s.completed, first, first + 30) / offered : 0 };
}
