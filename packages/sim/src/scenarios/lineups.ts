// The policies the scenarios set side by side, each defined once with its label: the breakers
// an outage or a brownout compares, and the retrying clients an overload compares, tideward's as
// the guard ships it first in both, so every tab names and builds a contender alike.
import { Jitter } from "@tideward/backoff";
import { client, sre } from "@tideward/breaker";
import { sampleWindow } from "@tideward/concurrency";
import type { SampleWindow } from "@tideward/concurrency";
import type { RetryOptions } from "../options";
import { breaker } from "../policies/breaker";
import { classicBreaker, samplingBreaker } from "../policies/classic";
import { opossumBreaker } from "../policies/opossum";
import { shedder } from "../policies/shedder";
import type { PolicySpec } from "../policy";
import { FLOOR } from "./adaptive-lineup";
import { adaptiveLimit } from "./adaptive-policies";

/**
 * The sample window of the adaptive limits in every scenario: the limiter's preset, Netflix
 * `WindowedLimit`'s, folding the calls that finish within a second into one sample (their mean
 * round trip), as Netflix runs its limits. Sampled a call at a time, the ordinary spread of service
 * times reads as queueing, and Vegas refuses calls at steady load for it.
 */
export const SAMPLE_WINDOW: SampleWindow = sampleWindow;

/** The baseline breakers' settings where a scenario does not set them: five failures in a row open the consecutive breaker, and they stay open five seconds (ms). */
export const BASELINE = Object.freeze({ threshold: 5, openFor: 5_000 });

/** One breaker of {@link breakerLineup}: an id for its figures, its label, and its policy (none for no breaker). */
export interface BreakerContender {
  readonly id: string;
  readonly label: string;
  readonly spec: PolicySpec | undefined;
}

/**
 * The breakers compared, tideward's as the guard ships it first: its `sre` preset, cockatiel's
 * consecutive (`threshold` failures in a row) and sampling breakers, opossum's rolling-percentage
 * breaker, each baseline open for `openFor` ms, and no breaker.
 */
export function breakerLineup(o: { readonly threshold: number; readonly openFor: number }): BreakerContender[] {
  return [
    { id: "tideward", label: "tideward breaker (guard default)", spec: breaker(client) },
    { id: "sre", label: "tideward breaker, sre preset", spec: breaker(sre) },
    {
      id: "classic",
      label: "consecutive breaker (cockatiel)",
      spec: classicBreaker({ threshold: o.threshold, openFor: o.openFor }),
    },
    {
      id: "sampling",
      label: "sampling breaker (cockatiel)",
      spec: samplingBreaker({ threshold: 0.2, duration: 10_000, openFor: o.openFor }),
    },
    { id: "opossum", label: "rolling-percentage breaker (opossum)", spec: opossumBreaker({ resetTimeout: o.openFor }) },
    { id: "none", label: "no breaker", spec: undefined },
  ];
}

/** One client of {@link retryLineup}. */
export interface RetryContender {
  readonly id: RetryId;
  readonly label: string;
  readonly policies: readonly PolicySpec[];
  /** Whether it retries at all. */
  readonly retry: boolean;
  /** Whether its retries are held to a retry budget (Finagle's defaults, as the guard's). */
  readonly budget: boolean;
}

/** The retrying clients {@link retryLineup} knows. */
export type RetryId =
  | "guard"
  | "retries"
  | "none"
  | "budget"
  | "sre"
  | "client"
  | "classic"
  | "shedder"
  | "guard+gradient2"
  | "guard+vegas";

const RETRIERS: Readonly<Record<RetryId, RetryContender>> = {
  guard: {
    id: "guard",
    label: "guard default (client breaker, budgeted retries)",
    policies: [breaker(client)],
    retry: true,
    budget: true,
  },
  retries: { id: "retries", label: "retries, no policy", policies: [], retry: true, budget: false },
  none: { id: "none", label: "no retries, no policy", policies: [], retry: false, budget: false },
  budget: { id: "budget", label: "retries with a budget", policies: [], retry: true, budget: true },
  sre: { id: "sre", label: "retries, sre breaker", policies: [breaker(sre)], retry: true, budget: false },
  client: { id: "client", label: "retries, client breaker", policies: [breaker(client)], retry: true, budget: false },
  classic: {
    id: "classic",
    label: "retries, consecutive breaker",
    policies: [classicBreaker(BASELINE)],
    retry: true,
    budget: false,
  },
  shedder: { id: "shedder", label: "retries, shedder", policies: [shedder()], retry: true, budget: false },
  "guard+gradient2": {
    id: "guard+gradient2",
    label: "guard default, Gradient2",
    policies: [breaker(client), limit("gradient2")],
    retry: true,
    budget: true,
  },
  "guard+vegas": {
    id: "guard+vegas",
    label: "guard default, Vegas",
    policies: [breaker(client), limit("vegas")],
    retry: true,
    budget: true,
  },
};

/**
 * An adaptive limit on the server at its preset, with a floor of one place (see `FLOOR`), its
 * calls folded into 1 s sample windows as the adaptive scenarios run them (see `SAMPLE_WINDOW`).
 */
function limit(kind: "gradient2" | "vegas"): PolicySpec {
  return adaptiveLimit({ kind, policy: FLOOR, window: SAMPLE_WINDOW });
}

/** The retrying clients named, in that order: the guard's default, retries with no policy, without retries, a budget alone, and retries behind each breaker or the shedder. */
export function retryLineup(ids: readonly RetryId[]): readonly RetryContender[] {
  return Object.freeze(ids.map((id) => RETRIERS[id]));
}

/**
 * A contender's retries: `attempts` in all (the first included), full jitter from 100 ms
 * doubling to 1 s, held to a retry budget (the guard's default one) where it has one; `false`
 * where it does not retry or may make one attempt only.
 */
export function retriesOf(c: Pick<RetryContender, "retry" | "budget">, attempts: number): RetryOptions | false {
  return c.retry && attempts > 1
    ? { backoff: { attempts, base: 100, factor: 2, cap: 1_000, jitter: Jitter.full }, budget: c.budget ? {} : false }
    : false;
}
