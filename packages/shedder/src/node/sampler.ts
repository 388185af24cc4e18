import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { cgroupCores, readText, usableCores } from "./cores";
import type { ReadText } from "./cores";

/**
 * Everything a {@link LoadSampler} reads from the process and the system, so that a test can
 * replace it (TanStack's timeoutManager makes the same point: a hard reference to
 * `setInterval` or the file system defeats tests).
 */
export interface SamplerSystem {
  /** A monotonic clock, in milliseconds: `performance.now()`. */
  now(): number;
  /** CPU time this process has used since it started, in microseconds: `process.cpuUsage()`. */
  cpuUsage(): { readonly user: number; readonly system: number };
  /**
   * How long the event loop has been active and idle since it started, in milliseconds:
   * `performance.eventLoopUtilization()`.
   */
  eventLoopUtilization(): { readonly active: number; readonly idle: number };
  /** Reads a file as text, `undefined` when it cannot (for the cgroup `cpu.max`). */
  readText: ReadText;
  /** How many CPUs the process may run on: `os.availableParallelism()`. */
  availableParallelism(): number;
  /** Starts a repeating timer; the handle's `unref()` is called when it has one. */
  setInterval(tick: () => void, ms: number): unknown;
  /** Stops a timer started by `setInterval`. */
  clearInterval(handle: unknown): void;
}

/** The real process: `performance`, `process.cpuUsage`, `node:fs`, `node:os` and Node's timers. */
export const nodeSystem: SamplerSystem = {
  now: () => performance.now(),
  cpuUsage: () => process.cpuUsage(),
  eventLoopUtilization: () => performance.eventLoopUtilization(),
  readText,
  availableParallelism: () => availableParallelism(),
  setInterval: (tick, ms) => setInterval(tick, ms),
  clearInterval: (handle) => clearInterval(handle as ReturnType<typeof setInterval>),
};

const KNOWN = ["interval", "beta", "cores", "system"] as const;
const SYSTEM = [
  "now",
  "cpuUsage",
  "eventLoopUtilization",
  "readText",
  "availableParallelism",
  "setInterval",
  "clearInterval",
] as const;
/** The longest delay Node's timers take as given: 2^31 − 1 ms, some 24.8 days. */
const LONGEST = 2_147_483_647;

/** Options of a {@link LoadSampler}. */
export interface LoadSamplerOptions {
  /**
   * How often the timer takes a reading, in milliseconds: from 1 to 2^31 − 1, the delays Node's
   * timers honour (outside them Node fires every millisecond). @defaultValue 250
   */
  readonly interval?: Span;
  /**
   * Weight of the old value in the smoothed readings after one `interval`, in `[0, 1)`; a
   * reading `k` intervals after the last weighs the old value `beta^k`, so a late timer (a
   * blocked event loop) does not slow the average down. 0 keeps only the latest reading.
   * @defaultValue 0.95 (go-zero's CPU sampler: 250 ms and 0.95 average about five seconds)
   */
  readonly beta?: number;
  /**
   * How many cores' worth of CPU time count as 1000‰; by default `os.availableParallelism()`
   * lowered to the cgroup v2 `cpu.max` quota when one applies.
   */
  readonly cores?: number;
  /** The process and system calls read, replaceable for tests. @defaultValue {@link nodeSystem} */
  readonly system?: Partial<SamplerSystem>;
}

/**
 * Samples this process's load for {@link Shedder.allow}, in thousandths, on a timer.
 *
 * Two signals, each smoothed by an exponential moving average:
 * - `cpu`: CPU time this process used (`process.cpuUsage`, every thread) over the wall time
 *   and the cores it may use (`os.availableParallelism`, lowered to a cgroup v2 `cpu.max`
 *   quota, as in a container);
 * - `loop`: event-loop utilization (`performance.eventLoopUtilization`): the share of time the
 *   event loop was busy running JavaScript rather than waiting. A Node.js server dies of a
 *   saturated event loop long before the CPU of a many-core host reads high, so this is often
 *   the better signal;
 * - `load` is the larger of the two: pass it to `allow` unless you mean one signal only.
 *
 * The timer is `unref`'d, so a sampler alone never keeps a process alive; `stop()` clears it.
 * Readings start at 0 and every sample, the first too, is folded into the average as any other:
 * one quarter-second of a busy process is noise, and taken as it is it could read hot (at three
 * quarters load a single worker's first reading is often past 900‰) and shed a healthy server.
 * So a server under load reads its load only after a few seconds — about 11 s to read 900‰ at
 * full load with the defaults — as go-zero's sampler does.
 *
 * @example
 * import { once } from "node:events";
 * import { createServer } from "node:http";
 * const sampler = new LoadSampler();
 * const shedder = new Shedder();
 * const server = createServer((req, res) => {
 *   const ticket = shedder.allow(performance.now(), sampler.load);
 *   if (ticket === undefined) return void res.writeHead(503).end();
 *   res.end("ok"); // … handle, then ticket.pass(performance.now()) or ticket.fail()
 *   ticket.pass(performance.now());
 * });
 * server.on("close", () => sampler.stop());
 * server.close(); // a real server would listen(port) first
 * await once(server, "close");
 * sampler.running; // false
 */
export class LoadSampler {
  /** How often the timer takes a reading, in milliseconds. */
  readonly interval: Span;
  /** Weight of the old value after one interval, in `[0, 1)`. */
  readonly beta: number;
  /** How many cores' worth of CPU time count as 1000‰. */
  readonly cores: number;

  readonly #system: SamplerSystem;
  #cpu = 0;
  #loop = 0;
  #at: number;
  #used: number;
  #active: number;
  #idle: number;
  #timer: unknown;
  #running = true;
  #failure: unknown = undefined;
  #warned = false;

  /**
   * Takes the first readings of the process and starts the timer.
   *
   * The options are read once, into a copy, before anything is checked.
   *
   * @throws TypeError when `options` or `system` is not an object or names an option there is
   *   not (with the closest there is), or a replaced system call is not a function; RangeError
   *   when `interval` is outside 1 to 2^31 − 1 ms, `beta` is outside `[0, 1)` or `cores` is not
   *   above 0 (the message names the field, the value and the bound)
   */
  constructor(options?: LoadSamplerOptions) {
    const o = check.options(options, KNOWN, "LoadSampler");
    const interval = check.finite(o.interval ?? 250, "LoadSampler interval (ms)");
    // Node fires a timer of under 1 ms, or over 2^31 − 1 ms, after 1 ms: either would sample
    // every millisecond, whatever was asked.
    if (!(interval >= 1 && interval <= LONGEST)) {
      throw new RangeError(
        `LoadSampler interval (ms) must be between 1 and ${LONGEST} (what Node's timers honour), got ${interval}`,
      );
    }
    this.interval = interval;
    const beta = check.finite(o.beta ?? 0.95, "LoadSampler beta");
    if (beta < 0 || beta >= 1) throw new RangeError(`LoadSampler beta must be 0 or more and under 1, got ${beta}`);
    this.beta = beta;
    const replaced = check.options(o.system, SYSTEM, "LoadSampler", "system");
    for (const name of SYSTEM) if (replaced[name] !== undefined) check.fn(replaced[name], `LoadSampler system.${name}`);
    const system: SamplerSystem = { ...nodeSystem, ...replaced };
    this.#system = system;
    this.cores =
      o.cores === undefined
        ? usableCores(
            check.positive(system.availableParallelism(), "LoadSampler system.availableParallelism()"),
            cgroupCores(system.readText, "LoadSampler system.readText"),
          )
        : check.positive(o.cores, "LoadSampler cores");
    const first = read(system);
    this.#at = first.at;
    this.#used = first.used;
    this.#active = first.active;
    this.#idle = first.idle;
    const timer = system.setInterval(() => this.#tick(), this.interval);
    (timer as { unref?: () => void } | undefined)?.unref?.();
    this.#timer = timer;
  }

  // A reading that throws on the timer would otherwise be an uncaught exception, ending the
  // process: the readings keep their last values, and the first failure is said once.
  #tick(): void {
    try {
      this.sample();
      this.#failure = undefined;
    } catch (e) {
      if (!this.#warned) {
        this.#warned = true;
        process.emitWarning(`a reading failed; the load keeps its last value: ${String(e)}`, {
          type: "LoadSamplerWarning",
        });
      }
      this.#failure = e;
    }
  }

  /** What the timer's last reading threw, or `undefined` when it answered; while set, the readings keep their last values. */
  get failure(): unknown {
    return this.#failure;
  }

  /** Smoothed CPU use of this process, in thousandths of the cores it may use (0–1000). */
  get cpu(): number {
    return this.#cpu;
  }

  /** Smoothed event-loop utilization, in thousandths of the wall time (0–1000). */
  get loop(): number {
    return this.#loop;
  }

  /** The larger of {@link LoadSampler.cpu} and {@link LoadSampler.loop}, in thousandths (0–1000). */
  get load(): number {
    return this.#cpu > this.#loop ? this.#cpu : this.#loop;
  }

  /** Whether the timer is still running (until {@link LoadSampler.stop}). */
  get running(): boolean {
    return this.#running;
  }

  /**
   * Takes a reading now and folds it into the averages: what the timer calls every
   * `interval`. Call it yourself for a reading between ticks. A call with no time gone by
   * since the last changes nothing.
   *
   * @throws TypeError when a replaced {@link SamplerSystem} call answers what is not a reading
   */
  sample(): void {
    const r = read(this.#system);
    const wall = r.at - this.#at;
    if (!(wall > 0)) return;
    const active = r.active - this.#active;
    const busy = active + (r.idle - this.#idle);
    // µs of CPU over ms of wall time on `cores` cores: ×1000 for thousandths, ÷1000 for µs.
    const cpu = clamp((r.used - this.#used) / (wall * this.cores));
    const loop = busy > 0 ? clamp((1000 * active) / busy) : this.#loop;
    this.#at = r.at;
    this.#used = r.used;
    this.#active = r.active;
    this.#idle = r.idle;
    const old = this.beta ** (wall / this.interval);
    // Clamped again: 1000·w + 1000·(1 − w) can round to just over 1000.
    this.#cpu = clamp(this.#cpu * old + cpu * (1 - old));
    this.#loop = clamp(this.#loop * old + loop * (1 - old));
  }

  /** Stops the timer; the readings keep their last values. Calling it again does nothing. */
  stop(): void {
    if (!this.#running) return;
    this.#running = false;
    this.#system.clearInterval(this.#timer);
  }
}

/** One reading of the process: when (ms), CPU time used (µs), the loop's active and idle time (ms). */
interface Reading {
  readonly at: number;
  readonly used: number;
  readonly active: number;
  readonly idle: number;
}

function read(system: SamplerSystem): Reading {
  const at = system.now();
  if (typeof at !== "number" || !Number.isFinite(at))
    throw new TypeError(`LoadSampler system.now() must answer milliseconds, got ${typeof at} ${check.describe(at)}`);
  const [user, sys] = pair(system.cpuUsage(), "cpuUsage", "user", "system", "microseconds");
  const [active, idle] = pair(system.eventLoopUtilization(), "eventLoopUtilization", "active", "idle", "milliseconds");
  return { at, used: user + sys, active, idle };
}

/** The finite numbers `a` and `b` of what `call` answered, or a TypeError naming the call and the answer. */
function pair(answer: unknown, call: string, a: string, b: string, unit: string): [number, number] {
  const x = field(answer, a);
  const y = field(answer, b);
  if (x === undefined || y === undefined)
    throw new TypeError(`LoadSampler system.${call}() must answer { ${a}, ${b} } in ${unit}, got ${shape(answer)}`);
  return [x, y];
}

/** `value[name]` when it is a finite number, else `undefined`. */
function field(value: unknown, name: string): number | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const x: unknown = (value as Record<string, unknown>)[name];
  return typeof x === "number" && Number.isFinite(x) ? x : undefined;
}

/** An answer as a message shows it: an object's own fields, or the value. */
function shape(value: unknown): string {
  if (typeof value !== "object" || value === null)
    return value == null ? String(value) : `${typeof value} ${check.describe(value)}`;
  const entries = Object.entries(value).slice(0, 4);
  return `{ ${entries.map(([k, v]) => `${k}: ${check.describe(v)}`).join(", ")} }`;
}

/** Thousandths clamped to [0, 1000]; a NaN (a broken counter) reads as 0. */
function clamp(x: number): number {
  return x > 0 ? (x < 1000 ? x : 1000) : 0;
}
