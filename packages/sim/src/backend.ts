import { check } from "@tideward/time/internal";
import type { Random, Span } from "@tideward/time";
import { DipSchedule } from "./dips";
import type { Dip } from "./dips";
import { distribution, fixed } from "./distribution";
import type { Distribution } from "./distribution";
import { FailureSchedule, constant, none } from "./failures";

/** How a backend degrades past its capacity (see {@link BackendOptions.overload}). */
export interface OverloadOptions {
  /**
   * How much each call's service time grows with the load: with `p` the calls at the backend
   * (busy workers and queue) over its workers, a service starting at `p` takes
   * `1 + slowdown · max(0, p − 1)` times as long: thrashing, garbage collection, lock
   * contention. 0 or more. @defaultValue 0
   */
  readonly slowdown?: number;
  /**
   * The share of calls that fail besides the failure schedule's, per unit of excess load: a
   * service starting at `p` fails with an added `failures · max(0, p − 1)`, capped at 1. 0 or
   * more. @defaultValue 0
   */
  readonly failures?: number;
}

/** A contention backend's options (see {@link BackendOptions.contention}). */
export interface ContentionOptions {
  /**
   * The read→write window, ms: from the moment the backend reads the resource's version for an
   * attempt to the moment that attempt's write arrives. A number or a distribution.
   */
  readonly window: number | Distribution;
}

/**
 * A backend: how long calls take, how often they fail, and optionally how much it can do at
 * once. Plain data (numbers, a distribution, a schedule), so one description serves every run.
 */
export interface BackendOptions {
  /** How long a successful call takes to serve, ms: a number or a distribution. @defaultValue 10 */
  readonly latency?: number | Distribution;
  /** How often calls fail: a share in [0, 1] or a schedule (`failures.outage(…)`). @defaultValue never */
  readonly failures?: number | FailureSchedule;
  /** How long a failing call takes, ms. @defaultValue the same as `latency` */
  readonly failLatency?: number | Distribution;
  /**
   * Workers serving calls at once; a call that finds them all busy waits in the queue (first
   * come, first served), so load turns into latency as queueing theory says. @defaultValue
   * Infinity: every call is served at once, nothing queues, and the CPU reads 0
   */
  readonly workers?: number;
  /** Calls that may wait for a worker; one more fails at once ("queue full"). @defaultValue Infinity */
  readonly queue?: number;
  /**
   * How the CPU reading follows the busy share of the workers: a moving average with this time
   * constant, ms. The default is what `@tideward/shedder/node`'s `LoadSampler` reads (an average
   * weighing the old value 0.95 every 250 ms, −250 / ln 0.95 ms) and what the shedder's preset
   * expects. @defaultValue 4 874
   */
  readonly cpuSmoothing?: Span;
  /** How service times and failures rise past capacity; needs `workers`. @defaultValue none */
  readonly overload?: OverloadOptions;
  /** Stretches of the run when the backend is degraded: slower service, or fewer workers. @defaultValue none */
  readonly dips?: readonly Dip[];
  /**
   * What the backend does with a call whose caller has stopped waiting (a timeout, a deadline)
   * when a worker would start on it: serve it anyway (`"serve"`: work done for nobody), or drop it
   * at no cost (`"drop"`: a server that checks the caller's deadline before it works). A call in
   * service is always finished. @defaultValue "serve"
   */
  readonly abandoned?: "serve" | "drop";
  /**
   * A contention backend instead of a latency and workers: every call reads one shared resource's
   * version when it arrives and writes it `window` ms later; the write succeeds (and bumps the
   * version) only if no other write succeeded in between, as optimistic concurrency control does.
   * Conflicts happen only within a read→write window. @defaultValue none
   */
  readonly contention?: ContentionOptions;
}

const FIELDS = [
  "latency",
  "failures",
  "failLatency",
  "workers",
  "queue",
  "cpuSmoothing",
  "overload",
  "dips",
  "abandoned",
  "contention",
] as const;

/** The time constant of `LoadSampler`'s average, ms: 0.95 kept every 250 ms. */
export const SAMPLER_SMOOTHING = Math.round(-250 / Math.log(0.95));

/** A checked copy of backend options. */
export interface BackendSpec {
  readonly latency: Distribution;
  readonly failLatency: Distribution;
  readonly failures: FailureSchedule;
  readonly workers: number;
  readonly queue: number;
  readonly cpuSmoothing: number;
  readonly slowdown: number;
  readonly overloadFailures: number;
  readonly dips: DipSchedule | undefined;
  readonly drop: boolean;
  /** The read→write window of a contention backend, or `undefined`. */
  readonly window: Distribution | undefined;
  readonly label: string;
}

/** Checks backend options once, naming any bad field; `start` is the run's (ms), where its dips' times count from. */
export function backendSpec(options: BackendOptions = {}, start = 0): BackendSpec {
  const o = check.options(options, [...FIELDS], "backend");
  const f = check.or<unknown>(o.failures, none);
  const failures = typeof f === "number" ? constant(f) : f;
  if (!(failures instanceof FailureSchedule))
    throw new TypeError(`backend failures must be a share in [0, 1] or a failure schedule, got ${check.describe(f)}`);
  const abandoned = check.or(o.abandoned, "serve");
  if (abandoned !== "serve" && abandoned !== "drop")
    throw new TypeError(`backend abandoned must be "serve" or "drop", got ${check.describe(abandoned)}`);
  if (o.contention !== undefined) {
    for (const field of ["latency", "failLatency", "workers", "queue", "overload", "dips", "abandoned"] as const) {
      if (o[field] !== undefined)
        throw new TypeError(
          `backend ${field} cannot be given with contention: a contention backend's time is its read→write window`,
        );
    }
    const c = check.options(o.contention, ["window"], "backend contention");
    const window = distribution(c.window, "backend contention window (ms)");
    return {
      latency: window,
      failLatency: window,
      failures,
      workers: Infinity,
      queue: Infinity,
      cpuSmoothing: SAMPLER_SMOOTHING,
      slowdown: 0,
      overloadFailures: 0,
      dips: undefined,
      drop: false,
      window,
      label: `contention on one resource, read→write window ${window.label}, failures ${failures.label}`,
    };
  }
  const latency = distribution(check.or(o.latency, 10), "backend latency (ms)");
  const failLatency = o.failLatency === undefined ? latency : distribution(o.failLatency, "backend failLatency (ms)");
  const workers =
    o.workers === undefined || o.workers === Infinity ? Infinity : check.integer(o.workers, "backend workers", 1);
  const queue = o.queue === undefined || o.queue === Infinity ? Infinity : check.integer(o.queue, "backend queue", 0);
  const cpuSmoothing = check.positive(check.or(o.cpuSmoothing, SAMPLER_SMOOTHING), "backend cpuSmoothing (ms)");
  const over = check.options(o.overload, ["slowdown", "failures"], "backend overload");
  if (o.overload !== undefined && workers === Infinity)
    throw new RangeError("backend overload needs a number of workers: load is measured against them");
  const slowdown = check.nonNegative(check.or(over.slowdown, 0), "backend overload slowdown");
  const overloadFailures = check.nonNegative(check.or(over.failures, 0), "backend overload failures");
  if (slowdown === Infinity || overloadFailures === Infinity)
    throw new RangeError(
      `backend overload ${slowdown === Infinity ? "slowdown" : "failures"} must be finite, got Infinity`,
    );
  const dips = o.dips === undefined ? undefined : new DipSchedule(o.dips, workers, "backend dips", start);
  const cap =
    workers === Infinity
      ? "no capacity limit"
      : `${workers} workers, queue ${queue === Infinity ? "unbounded" : queue}`;
  const extra = [
    slowdown > 0 || overloadFailures > 0 ? `overload slowdown ${slowdown}, failures ${overloadFailures}` : "",
    dips === undefined || dips.edges.length === 1 ? "" : `${(o.dips ?? []).length} dips`,
    abandoned === "drop" ? "drops abandoned calls" : "",
  ].filter((s) => s.length > 0);
  return {
    latency,
    failLatency,
    failures,
    workers,
    queue,
    cpuSmoothing,
    slowdown,
    overloadFailures,
    dips,
    drop: abandoned === "drop",
    window: undefined,
    label: `latency ${latency.label}, failures ${failures.label}, ${cap}${extra.length > 0 ? `, ${extra.join(", ")}` : ""}`,
  };
}

/** What the run does for a backend: its clock's events and what it knows of each call. */
export interface Host {
  /** Schedules the end of `slot`'s service at `time` (ms). */
  serve(time: number, slot: number): void;
  /** Schedules a look at the queue at `time` (ms), the dips' edge number `edge`: where the workers available change. */
  wake(time: number, edge: number): void;
  /** Whether `slot`'s caller is still waiting for its answer. */
  waiting(slot: number): boolean;
  /** The backend dropped `slot` at `now` (ms) without serving it, its caller having given up. */
  drop(slot: number, now: number): void;
}

/** What {@link Server.accept} did with a call. */
export const TAKEN = 0;
/** The queue was full: the call fails at once. */
export const FULL = 1;
/** Its caller had given up and the backend drops such calls. */
export const DROPPED = 2;

/** A backend of one run, as the run drives it. */
export interface Server {
  readonly spec: BackendSpec;
  /** Whether it has a capacity model: only then are its busy workers and queue levels. */
  readonly limited: boolean;
  /** Busy workers (or calls in service, without a limit). */
  readonly busy: number;
  /** Calls waiting for a worker. */
  readonly queued: number;
  /** Takes call `slot` at `now` (ms): {@link TAKEN}, {@link FULL} or {@link DROPPED}. */
  accept(slot: number, now: number): number;
  /** `slot`'s service ended at `now` (ms): whether it succeeded. Starts the next waiting call. */
  finish(slot: number, now: number): boolean;
  /** Looks at the queue at `now` (ms), the dips' edge number `edge`, starting what the workers available can take. */
  wake(now: number, edge: number): void;
  /** The CPU reading at `now` (ms), thousandths: 0 without a capacity model. */
  cpu(now: number): number;
}

/** A sample of `d` checked to be a duration, or a `RangeError` naming `what`. */
export function duration(d: Distribution, random: Random, what: string): number {
  const v = d.sample(random);
  if (typeof v === "number" && v >= 0 && v < Infinity) return v;
  return badDuration(d, v, what);
}

/** The `RangeError` for a distribution `d` that drew `value`, not a duration. */
export function badDuration(d: Distribution, value: unknown, what: string): never {
  throw new RangeError(
    `${what}: the distribution ${d.label} drew ${check.describe(value)}; a duration is a finite number of milliseconds, 0 or more`,
  );
}

/** The failure share the schedule gives `offset` ms after the start, checked to be a share. */
export function share(failures: FailureSchedule, offset: number): number {
  const r = failures.rate(offset);
  if (typeof r === "number" && r >= 0 && r <= 1) return r;
  throw new RangeError(
    `backend failures: the schedule's rate(${offset}) answered ${check.describe(r)}; a share is in [0, 1]`,
  );
}

/** A backend that answers every call at once, successfully: for replaying a log through a limit. */
export const instant: BackendOptions = Object.freeze({ latency: fixed(0) });

export type { Dip };
