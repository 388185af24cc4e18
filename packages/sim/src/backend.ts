import { check } from "@tideward/time/internal";
import type { Random, Span } from "@tideward/time";
import { distribution, fixed } from "./distribution";
import type { Distribution } from "./distribution";
import { FailureSchedule, constant, none } from "./failures";

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
   * constant, ms, as a sampler over an interval reads it. @defaultValue 250
   */
  readonly cpuSmoothing?: Span;
}

/** Schedules `done(slot, …)` at a time: the simulation's event queue, narrowed. */
export type At = (time: number, slot: number) => void;

const FIELDS = ["latency", "failures", "failLatency", "workers", "queue", "cpuSmoothing"] as const;

/** A checked copy of backend options. */
export interface BackendSpec {
  readonly latency: Distribution;
  readonly failLatency: Distribution;
  readonly failures: FailureSchedule;
  readonly workers: number;
  readonly queue: number;
  readonly cpuSmoothing: number;
  readonly label: string;
}

/** Checks backend options once, naming any bad field. */
export function backendSpec(options: BackendOptions = {}): BackendSpec {
  const o = check.options(options, [...FIELDS], "backend");
  const latency = distribution(o.latency ?? 10, "backend latency (ms)");
  const failLatency = o.failLatency === undefined ? latency : distribution(o.failLatency, "backend failLatency (ms)");
  const f = o.failures ?? none;
  const failures = typeof f === "number" ? constant(f) : f;
  if (!(failures instanceof FailureSchedule))
    throw new TypeError(`backend failures must be a share in [0, 1] or a failure schedule, got ${check.describe(f)}`);
  const workers =
    o.workers === undefined || o.workers === Infinity ? Infinity : check.integer(o.workers, "backend workers", 1);
  const queue = o.queue === undefined || o.queue === Infinity ? Infinity : check.integer(o.queue, "backend queue", 0);
  const cpuSmoothing = check.positive(o.cpuSmoothing ?? 250, "backend cpuSmoothing (ms)");
  const cap =
    workers === Infinity
      ? "no capacity limit"
      : `${workers} workers, queue ${queue === Infinity ? "unbounded" : queue}`;
  return {
    latency,
    failLatency,
    failures,
    workers,
    queue,
    cpuSmoothing,
    label: `latency ${latency.label}, failures ${failures.label}, ${cap}`,
  };
}

/**
 * The backend of one run. Each attempt that reaches it is decided on arrival (fails with the
 * schedule's rate at that instant) and takes a service time drawn from `latency` (or
 * `failLatency`). With a number of workers it is an M/G/c queue: an attempt waits for a free
 * worker in arrival order, its latency is the wait plus the service, and the CPU reading is a
 * moving average of the busy share of the workers, in thousandths.
 */
export class Backend {
  readonly spec: BackendSpec;
  readonly #random: Random;
  readonly #start: number;
  readonly #at: At;
  readonly #limited: boolean;
  readonly #workers: number;
  readonly #room: number;
  readonly #tau: number;
  readonly #fails: boolean;
  // Waiting attempts, a ring of slots, and each one's outcome decided on arrival.
  #ring = new Int32Array(64);
  #head = 0;
  #length = 0;
  /** Busy workers (or attempts in service, without a limit). */
  busy = 0;
  // The smoothed busy share (0–1) and when it was last brought up to date (ms).
  #cpu = 0;
  #cpuAt: number;
  #outcome = new Uint8Array(64);

  constructor(spec: BackendSpec, random: Random, start: number, at: At) {
    this.spec = spec;
    this.#random = random;
    this.#start = start;
    this.#at = at;
    this.#limited = spec.workers !== Infinity;
    this.#workers = spec.workers;
    this.#room = spec.queue;
    this.#tau = spec.cpuSmoothing;
    this.#cpuAt = start;
    this.#fails = spec.failures.base > 0 || spec.failures.windows.some((w) => w.rate > 0);
  }

  /** Calls waiting for a worker. */
  get queued(): number {
    return this.#length;
  }

  /** Whether attempt `slot`'s service succeeded; read by the simulation when it finishes. */
  outcome(slot: number): boolean {
    return this.#outcome[slot] === 1;
  }

  /**
   * Takes attempt `slot` at `now` (ms). Returns false when the queue is full: the attempt fails
   * at once and nothing is scheduled.
   */
  accept(slot: number, now: number): boolean {
    // A backend that never fails draws nothing for it.
    const ok = this.#fails ? this.#random() >= this.spec.failures.rate(now - this.#start) : true;
    if (slot >= this.#outcome.length) this.#outcome = grow8(this.#outcome, slot + 1);
    this.#outcome[slot] = ok ? 1 : 0;
    if (!this.#limited) {
      this.busy++;
      this.#at(now + (ok ? this.spec.latency : this.spec.failLatency).sample(this.#random), slot);
      return true;
    }
    if (this.busy < this.#workers) {
      this.#smooth(now);
      this.busy++;
      this.#at(now + (ok ? this.spec.latency : this.spec.failLatency).sample(this.#random), slot);
      return true;
    }
    if (this.#length >= this.#room) return false;
    if (this.#length === this.#ring.length) this.#growRing();
    this.#ring[(this.#head + this.#length) & (this.#ring.length - 1)] = slot;
    this.#length++;
    return true;
  }

  /** Attempt `slot`'s service ended at `now` (ms): frees its worker for the next in the queue. */
  finish(now: number): void {
    if (!this.#limited) {
      this.busy--;
      return;
    }
    this.#smooth(now);
    if (this.#length > 0) {
      const next = this.#ring[this.#head];
      this.#head = (this.#head + 1) & (this.#ring.length - 1);
      this.#length--;
      const ok = this.#outcome[next] === 1;
      this.#at(now + (ok ? this.spec.latency : this.spec.failLatency).sample(this.#random), next);
    } else {
      this.busy--;
    }
  }

  /** The CPU reading at `now` (ms), thousandths: 0 without a capacity model. */
  cpu(now: number): number {
    if (!this.#limited) return 0;
    this.#smooth(now);
    return this.#cpu * 1_000;
  }

  #smooth(now: number): void {
    const dt = now - this.#cpuAt;
    if (dt > 0) {
      this.#cpu += (this.busy / this.#workers - this.#cpu) * (1 - Math.exp(-dt / this.#tau));
      this.#cpuAt = now;
    }
  }

  #growRing(): void {
    const n = this.#ring.length;
    const ring = new Int32Array(n * 2);
    for (let i = 0; i < this.#length; i++) ring[i] = this.#ring[(this.#head + i) & (n - 1)];
    this.#ring = ring;
    this.#head = 0;
  }
}

function grow8(a: Uint8Array, min: number): Uint8Array<ArrayBuffer> {
  let n = a.length;
  while (n < min) n *= 2;
  const b = new Uint8Array(n);
  b.set(a);
  return b;
}

/** A backend that answers every call at once, successfully: for replaying a log through a limit. */
export const instant: BackendOptions = Object.freeze({ latency: fixed(0) });
