import { Backoff, RetryBudget } from "@tideward/backoff";
import type { BackoffPolicy, Budget } from "@tideward/backoff";
import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { backendSpec } from "./backend";
import type { BackendOptions, BackendSpec } from "./backend";
import { distribution } from "./distribution";
import type { Distribution } from "./distribution";
import { CLOCK_LIMIT } from "./clock-range";
import { flag } from "./flag";
import { formatCount, maxBytesOf } from "./memory";
import type { PolicySpec } from "./policy";
import { seedOf } from "./streams";
import type { Traffic } from "./traffic";

/** How the client retries a failed attempt. */
export interface RetryOptions {
  /** When to retry and how often (`attempts` counts the first one): a `Backoff` or its fields. @defaultValue the `backoff` preset: 3 attempts, 100 ms doubling to 1 s, spread by a fifth */
  readonly backoff?: Backoff | Partial<BackoffPolicy>;
  /**
   * How many attempts a call may make, the first counting, a whole number from 1 (at most
   * 10 000 without a `client.deadline` or a finite `drain`, which is all that could end the run
   * otherwise); `Infinity` retries until the call succeeds or its deadline passes, and needs a
   * `client.deadline`.
   * @defaultValue the backoff's `attempts`
   */
  readonly attempts?: number;
  /** A retry budget shared by every call (`@tideward/backoff`'s `RetryBudget`), or none. @defaultValue none */
  readonly budget?: Partial<Budget> | false;
  /** Retry attempts a policy refused, too (not only failures). @defaultValue false */
  readonly refusals?: boolean;
}

/** Options of {@link HedgeOptions}. */
export interface HedgeOptions {
  /** Milliseconds to wait for an answer before sending a second copy of the attempt, above 0. */
  readonly after: Span;
  /** Hedged copies a call may send, a whole number from 1. @defaultValue 1 */
  readonly max?: number;
}

/** How the calling side behaves. */
export interface ClientOptions {
  /** Milliseconds the client waits for an attempt before counting it failed; the backend keeps working on it. @defaultValue Infinity */
  readonly timeout?: Span;
  /**
   * The caller's deadline, ms after a call arrives: the client stops waiting then (every attempt
   * out counts as timed out), makes no retry that could not start before it, and only an answer
   * within it counts as goodput. @defaultValue Infinity
   */
  readonly deadline?: Span;
  /** Retries, or none. @defaultValue none */
  readonly retry?: RetryOptions | false;
  /** Hedging: a second copy after a delay, the first success winning. @defaultValue none */
  readonly hedge?: HedgeOptions | false;
}

/** The network between the client and the server: a latency on each leg of a call. */
export interface NetworkOptions {
  /** How long an attempt takes to reach the server, ms: a number or a distribution. @defaultValue 0 */
  readonly request?: number | Distribution;
  /** How long an answer (a result, a failure, a server-side refusal) takes to come back, ms. @defaultValue 0 */
  readonly response?: number | Distribution;
}

/** One run. */
export interface SimulationOptions {
  /** How results name the run. @defaultValue the policies' names, or "no policy" */
  readonly label?: string;
  /** The seed every random draw comes from, a whole number from 0 to 4 294 967 295: distinct seeds give distinct runs. @defaultValue 1 */
  readonly seed?: number;
  /** The clock reading the run starts at, ms: 0, or `Date.now()`-scale; within ±2^43 (about 278 years of the epoch), where the clock still resolves a microsecond. @defaultValue 0 */
  readonly start?: number;
  /** How long traffic is offered, ms, above 0. */
  readonly duration: Span;
  /** The series' resolution, ms per bucket. @defaultValue 1 000 for runs of ten seconds or more, a hundredth of the run otherwise */
  readonly step?: Span;
  readonly traffic: Traffic;
  /** @defaultValue 10 ms a call, never failing, no capacity limit */
  readonly backend?: BackendOptions;
  /** @defaultValue no timeout, no deadline, no retries, no hedging */
  readonly client?: ClientOptions;
  /** The network between the client and the server: a latency on each leg. @defaultValue no latency on either leg */
  readonly network?: NetworkOptions;
  /** The policies every attempt must pass: client-side ones when it is sent, server-side ones when it reaches the server, each in this order. @defaultValue none */
  readonly policies?: readonly PolicySpec[];
  /** Check every policy's envelopes and counts at every step, throwing an `InvariantError` on the first breach. @defaultValue false */
  readonly invariants?: boolean;
  /** How long after the traffic stops in-flight work may finish, ms. @defaultValue Infinity (until nothing is left) */
  readonly drain?: Span;
  /** Keep per-key totals in the result (`keys`). @defaultValue false */
  readonly perKey?: boolean;
  /**
   * The most memory the run may set aside, bytes: its series (about 600 B a bucket), per-key
   * totals (about 112 B a key), the calls and attempts in flight, the events waiting (a
   * timeout or deadline waits until it is due, even after its call ended), and its policies'
   * state. A run that would need more is refused before it allocates, naming the option that
   * makes it large; `Infinity` lifts the ceiling. @defaultValue 536 870 912 (512 MiB)
   */
  readonly maxBytes?: number;
}

const FIELDS = [
  "label",
  "seed",
  "start",
  "duration",
  "step",
  "traffic",
  "backend",
  "client",
  "network",
  "policies",
  "invariants",
  "drain",
  "perKey",
  "maxBytes",
] as const;

/** Attempts a call may make when nothing but their count ends it (no client deadline, no drain). */
export const MAX_ATTEMPTS = 10_000;

/** A run's options, read once, copied and checked. */
export interface RunSpec {
  readonly label: string | undefined;
  readonly seed: number;
  readonly start: number;
  readonly duration: number;
  readonly step: number;
  readonly drain: number;
  readonly traffic: Traffic;
  readonly backend: BackendSpec;
  readonly policies: readonly PolicySpec[];
  readonly invariants: boolean;
  readonly perKey: boolean;
  readonly maxBytes: number;
  readonly timeout: number;
  readonly deadline: number;
  readonly backoff: Backoff | undefined;
  readonly attempts: number;
  readonly budget: Partial<Budget> | undefined;
  readonly retryRefused: boolean;
  readonly hedgeAfter: number;
  readonly hedgeMax: number;
  /** A leg's latency, or `undefined` when it takes no time. */
  readonly request: Distribution | undefined;
  readonly response: Distribution | undefined;
}

/** Reads and checks `simulate`'s options, naming any bad field. */
export function readOptions(options: SimulationOptions): RunSpec {
  const o = check.options(options, [...FIELDS], "simulate");
  const seed = seedOf(check.or(o.seed, 1), "simulate seed");
  const start = check.finite(check.or(o.start, 0), "simulate start (ms)");
  if (Math.abs(start) > CLOCK_LIMIT)
    throw new RangeError(
      `simulate start (ms) must be within ±${CLOCK_LIMIT} (2^43 ms, about 278 years either side of the epoch, where the clock still resolves a microsecond), got ${start}`,
    );
  const duration = check.positive(o.duration, "simulate duration (ms)");
  if (!(Math.abs(start + duration) <= CLOCK_LIMIT))
    throw new RangeError(
      `simulate duration (ms) must end the run within ${CLOCK_LIMIT} ms of the epoch (2^43, where the clock still resolves a microsecond): start ${start} + duration ${duration} is past it`,
    );
  const step =
    o.step === undefined ? (duration >= 10_000 ? 1_000 : duration / 100) : check.positive(o.step, "simulate step (ms)");
  const drain = o.drain === undefined ? Infinity : check.nonNegative(o.drain, "simulate drain (ms)");
  const traffic = o.traffic;
  if (typeof traffic?.open !== "function")
    throw new TypeError(
      `simulate traffic must be a traffic model (traffic.poisson, …), got ${check.describe(traffic)}`,
    );
  const policies: readonly PolicySpec[] = check.or(o.policies, []);
  if (!Array.isArray(policies))
    throw new TypeError(`simulate policies must be an array of policies, got ${check.describe(policies)}`);
  const specs = [...(policies as readonly PolicySpec[])];
  specs.forEach((p: PolicySpec, i) => {
    if (typeof p?.create !== "function")
      throw new TypeError(`simulate policies[${i}] must be a policy (policy.breaker(), …), got ${check.describe(p)}`);
    if (typeof p.name !== "string")
      throw new TypeError(`simulate policies[${i}] name must be text, got ${check.describe(p.name)}`);
  });
  if (o.label !== undefined && typeof o.label !== "string")
    throw new TypeError(`simulate label must be text, got ${check.describe(o.label)}`);
  const maxBytes = maxBytesOf(o.maxBytes, "simulate maxBytes");

  const client = check.options(o.client, ["timeout", "deadline", "retry", "hedge"], "simulate client");
  const timeout =
    client.timeout === undefined ? Infinity : check.positive(client.timeout, "simulate client timeout (ms)");
  const deadline =
    client.deadline === undefined ? Infinity : check.positive(client.deadline, "simulate client deadline (ms)");
  const retry =
    client.retry === undefined || client.retry === false
      ? undefined
      : check.options(client.retry, ["backoff", "attempts", "budget", "refusals"], "simulate client retry");
  const given = retry?.backoff;
  if (given === null || (given !== undefined && typeof given !== "object"))
    throw new TypeError(`simulate client retry backoff must be a Backoff or its fields, got ${check.describe(given)}`);
  const backoff = retry === undefined ? undefined : given instanceof Backoff ? given : new Backoff(given ?? {});
  let attempts = backoff?.attempts ?? 1;
  if (retry?.attempts !== undefined) {
    if (retry.attempts === Infinity) {
      if (deadline === Infinity)
        throw new RangeError(
          "simulate client retry attempts Infinity needs a client deadline to bound it (for a job that must finish, a long one)",
        );
      attempts = Infinity;
    } else attempts = check.integer(retry.attempts, "simulate client retry attempts", 1);
  }
  // Without a deadline or a drain, the run lasts until every call ends: one that keeps failing
  // makes each of its attempts, so a count far past any real client's would never finish.
  if (attempts !== Infinity && attempts > MAX_ATTEMPTS && deadline === Infinity && drain === Infinity)
    throw new RangeError(
      `simulate client retry ${retry?.attempts === undefined ? "backoff attempts" : "attempts"} must be at most ${formatCount(MAX_ATTEMPTS)} without a client deadline or a finite drain to end the run (a call that keeps failing makes every one), got ${formatCount(attempts)}`,
    );
  const budget = retry?.budget === undefined || retry.budget === false ? undefined : retry.budget;
  // Checked here, so a bad budget fails before the run (each run makes its own).
  if (budget !== undefined) new RetryBudget(budget, start);
  const hedge =
    client.hedge === undefined || client.hedge === false
      ? undefined
      : check.options(client.hedge, ["after", "max"], "simulate client hedge");
  const hedgeAfter = hedge === undefined ? Infinity : check.positive(hedge.after, "simulate client hedge after (ms)");
  const hedgeMax = hedge === undefined ? 0 : check.integer(check.or(hedge.max, 1), "simulate client hedge max", 1);

  const network = check.options(o.network, ["request", "response"], "simulate network");
  return {
    label: o.label,
    seed,
    start,
    duration,
    step,
    drain,
    traffic,
    backend: backendSpec(o.backend, start),
    policies: specs,
    invariants: flag(o.invariants, "simulate invariants"),
    perKey: flag(o.perKey, "simulate perKey"),
    maxBytes,
    timeout,
    deadline,
    backoff,
    attempts,
    budget,
    retryRefused: flag(retry?.refusals, "simulate client retry refusals"),
    hedgeAfter,
    hedgeMax,
    request: leg(network.request, "simulate network request (ms)"),
    response: leg(network.response, "simulate network response (ms)"),
  };
}

/** A leg's latency, or `undefined` for one that takes no time at all. */
function leg(value: unknown, what: string): Distribution | undefined {
  if (value === undefined) return undefined;
  const d = distribution(value, what);
  return typeof value === "number" && value === 0 ? undefined : d;
}
