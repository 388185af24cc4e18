// Backends users reason with, as plain backend options: the capacity model tipped into a
// metastable overload, and one resource under optimistic concurrency control.
import { check } from "@tideward/time/internal";
import type { BackendOptions, OverloadOptions } from "./backend";
import type { Dip } from "./dips";
import { distribution, exponential, normal, sum } from "./distribution";
import type { Distribution } from "./distribution";

/** Options of {@link metastable}. */
export interface MetastableOptions {
  /** Calls a second it serves at full speed, above 0. @defaultValue 200 */
  readonly capacity?: number;
  /** Workers, a whole number from 1; each call takes `workers / capacity` s on average (exponential). @defaultValue 4 */
  readonly workers?: number;
  /** Calls that may wait for a worker. @defaultValue Infinity */
  readonly queue?: number;
  /** The trigger: a latency spike or a capacity dip. @defaultValue service twice as slow from 20 s to 30 s */
  readonly trigger?: Dip;
  /** What it does with a call whose caller has given up (see `BackendOptions.abandoned`). @defaultValue "serve" */
  readonly abandoned?: "serve" | "drop";
  /** How it degrades past capacity. @defaultValue none */
  readonly overload?: OverloadOptions;
}

/**
 * A backend with a capacity and a queue, tipped into overload by a trigger (a latency spike or a
 * capacity dip). With callers that time out and retry, the overload can outlast the trigger:
 * the queue holds work its callers have given up on, their retries keep the load above capacity,
 * and every answer comes too late: a metastable failure (Bronson et al., HotOS 2021; Huang et
 * al., OSDI 2022). Whether the backend serves or drops abandoned work decides whether it comes
 * back by itself.
 *
 * @example
 * const run = simulate({
 *   duration: 120_000,
 *   traffic: traffic.poisson({ rate: 150 }),
 *   backend: backends.metastable({ abandoned: "drop" }),
 *   client: { timeout: 1_000, retry: { backoff: { attempts: 4 }, budget: {} } },
 * });
 * (run.summary.goodputRate ?? 0) > 0.9; // true: the budget and the drops let it recover
 */
export function metastable(options: MetastableOptions = {}): BackendOptions {
  const o = check.options(
    options,
    ["capacity", "workers", "queue", "trigger", "abandoned", "overload"],
    "backends.metastable",
  );
  const capacity = check.positive(check.or(o.capacity, 200), "backends.metastable capacity (calls per second)");
  const workers = check.integer(check.or(o.workers, 4), "backends.metastable workers", 1);
  // Left out, the defaults; given, checked with the backend's other options when a run reads them.
  const trigger: unknown = check.or<unknown>(o.trigger, { from: 20_000, to: 30_000, latency: 2 });
  if (trigger === null || typeof trigger !== "object")
    throw new TypeError(
      `backends.metastable trigger must be a dip such as { from: 20000, to: 30000, latency: 2 }, got ${check.describe(trigger)}`,
    );
  const abandoned = check.or(o.abandoned, "serve");
  if (abandoned !== "serve" && abandoned !== "drop")
    throw new TypeError(`backends.metastable abandoned must be "serve" or "drop", got ${check.describe(abandoned)}`);
  return Object.freeze({
    latency: exponential((workers * 1_000) / capacity),
    workers,
    ...(o.queue === undefined ? {} : { queue: o.queue }),
    dips: Object.freeze([trigger as Dip]),
    abandoned,
    ...(o.overload === undefined ? {} : { overload: o.overload }),
  });
}

/** Options of {@link contention}. */
export interface ContentionBackendOptions {
  /** The read→write window, ms. @defaultValue two network legs of `normal({ mean: 10, sd: 2 })`, as in Brooker's study */
  readonly window?: number | Distribution;
}

/** A network leg as Brooker's backoff study models one: `|N(10 ms, 2 ms)|`. */
export const brookerLeg: Distribution = normal({ mean: 10, sd: 2 });

/**
 * One resource under optimistic concurrency control, as in Brooker's "Exponential Backoff And
 * Jitter" (AWS Architecture Blog, 2015): each call reads the version and writes a window later,
 * and fails if another write succeeded in between. Pair it with `network: { request: brookerLeg,
 * response: brookerLeg }` and a herd of clients retrying until they succeed to replay the study.
 */
export function contention(options: ContentionBackendOptions = {}): BackendOptions {
  const o = check.options(options, ["window"], "backends.contention");
  const window =
    o.window === undefined ? sum(brookerLeg, brookerLeg) : distribution(o.window, "backends.contention window (ms)");
  return Object.freeze({ contention: Object.freeze({ window }) });
}
