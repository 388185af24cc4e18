import type { Random } from "@tideward/time";
import { DROPPED, FULL, TAKEN, badDuration, duration, share } from "./backend";
import type { BackendSpec, Host, Server } from "./backend";
import { EVENT_LIMIT, pastClock, pastStretch } from "./clock-range";
import type { DipSchedule } from "./dips";
import { FailureSchedule } from "./failures";

/**
 * The capacity model: a backend of `workers` serving calls first come, first served, with a
 * queue. Each call is decided on arrival (it fails with the schedule's rate at that instant) and
 * takes a service time drawn when its service starts, from `latency` (or `failLatency`),
 * stretched by a dip and by the overload slowdown. Its latency is the wait plus the service: an
 * M/G/c queue. Without a number of workers, every call is served at once and nothing queues.
 *
 * The CPU reading is a moving average of the busy share of the workers available, thousandths.
 */
export class QueueServer implements Server {
  readonly spec: BackendSpec;
  readonly limited: boolean;
  readonly #random: Random;
  readonly #start: number;
  readonly #host: Host;
  readonly #room: number;
  readonly #tau: number;
  readonly #fails: boolean;
  readonly #dips: DipSchedule | undefined;
  readonly #stretch: boolean;
  readonly #overload: boolean;
  readonly #drop: boolean;
  // Workers available now (fewer during a capacity dip).
  #workers: number;
  // Waiting calls, a ring of slots, and each one's outcome decided on arrival.
  #ring = new Int32Array(64);
  #head = 0;
  #length = 0;
  busy = 0;
  // The smoothed busy share (0–1) and when it was last brought up to date (ms).
  #cpu = 0;
  #cpuAt: number;
  #outcome = new Uint8Array(64);

  constructor(spec: BackendSpec, random: Random, start: number, host: Host) {
    this.spec = spec;
    this.#random = random;
    this.#start = start;
    this.#host = host;
    this.limited = spec.workers !== Infinity;
    this.#workers = spec.workers;
    this.#room = spec.queue;
    this.#tau = spec.cpuSmoothing;
    this.#cpuAt = start;
    this.#fails = fails(spec.failures);
    this.#dips = spec.dips;
    this.#stretch = spec.dips?.stretches ?? false;
    this.#overload = spec.slowdown > 0 || spec.overloadFailures > 0;
    this.#drop = spec.drop;
    const dips = spec.dips;
    if (dips !== undefined && this.limited) {
      this.#workers = dips.workers(0);
      // Where the workers change, the queue is looked at again (and the CPU brought up to date).
      for (let i = 1; i < dips.edges.length; i++) host.wake(start + dips.edges[i], i);
    }
  }

  get queued(): number {
    return this.#length;
  }

  accept(slot: number, now: number): number {
    if (this.#drop && !this.#host.waiting(slot)) return DROPPED;
    // A backend that never fails draws nothing for it.
    const ok = this.#fails ? this.#random() >= share(this.spec.failures, now - this.#start) : true;
    if (slot >= this.#outcome.length) this.#outcome = grow8(this.#outcome, slot + 1);
    this.#outcome[slot] = ok ? 1 : 0;
    if (!this.limited) {
      this.busy++;
      this.#begin(slot, now);
      return TAKEN;
    }
    if (this.busy < this.#workers) {
      this.#smooth(now);
      this.busy++;
      this.#begin(slot, now);
      return TAKEN;
    }
    if (this.#length >= this.#room) return FULL;
    if (this.#length === this.#ring.length) this.#growRing();
    this.#ring[(this.#head + this.#length) & (this.#ring.length - 1)] = slot;
    this.#length++;
    return TAKEN;
  }

  finish(slot: number, now: number): boolean {
    const ok = this.#outcome[slot] === 1;
    if (!this.limited) {
      this.busy--;
      return ok;
    }
    this.#smooth(now);
    // The worker goes on to the next waiting call, unless a dip has taken it away.
    if (this.busy > this.#workers) this.busy--;
    else if (!this.#next(now)) this.busy--;
    return ok;
  }

  wake(now: number, edge: number): void {
    if (!this.limited) return;
    this.#smooth(now);
    // By the edge's index, not by the offset: `start + edge − start` need not round back to the edge.
    this.#workers = (this.#dips as DipSchedule).workersAt(edge);
    while (this.busy < this.#workers && this.#next(now)) this.busy++;
  }

  cpu(now: number): number {
    if (!this.limited) return 0;
    this.#smooth(now);
    return this.#cpu * 1_000;
  }

  /** Starts the next waiting call a worker should serve at `now`: false when none is left. */
  #next(now: number): boolean {
    while (this.#length > 0) {
      const next = this.#ring[this.#head];
      this.#head = (this.#head + 1) & (this.#ring.length - 1);
      this.#length--;
      if (this.#drop && !this.#host.waiting(next)) {
        this.#host.drop(next, now);
        continue;
      }
      this.#begin(next, now);
      return true;
    }
    return false;
  }

  /** Draws `slot`'s service time at `now` and schedules its end. */
  #begin(slot: number, now: number): void {
    if (!this.#overload && !this.#stretch) {
      // The plain model: one draw, checked inline.
      const ok = this.#outcome[slot] === 1;
      const dist = ok ? this.spec.latency : this.spec.failLatency;
      const d = dist.sample(this.#random);
      if (!(typeof d === "number" && d >= 0 && d < Infinity))
        badDuration(dist, d, ok ? "backend latency" : "backend failLatency");
      const end = now + d;
      if (end > EVENT_LIMIT)
        throw pastClock(ok ? "backend latency" : "backend failLatency", "service", d, end, this.#start);
      this.#host.serve(end, slot);
      return;
    }
    let ok = this.#outcome[slot] === 1;
    let stretch = 1;
    if (this.#overload) {
      const excess = (this.busy + this.#length) / this.#workers - 1;
      if (excess > 0) {
        stretch = 1 + this.spec.slowdown * excess;
        if (ok && this.spec.overloadFailures > 0 && this.#random() < this.spec.overloadFailures * excess) {
          ok = false;
          this.#outcome[slot] = 0;
        }
      }
    }
    if (this.#stretch) stretch *= (this.#dips as DipSchedule).factor(now - this.#start);
    const d = ok
      ? duration(this.spec.latency, this.#random, "backend latency")
      : duration(this.spec.failLatency, this.#random, "backend failLatency");
    const service = stretch === 1 ? d : d * stretch;
    if (!(service < Infinity))
      throw new RangeError(
        `backend overload and dips stretched a service of ${d} ms by ${stretch} to ${service}: lower the slowdown or the dip's latency factor`,
      );
    const end = now + service;
    if (end > EVENT_LIMIT)
      throw stretch === 1
        ? pastClock(ok ? "backend latency" : "backend failLatency", "service", d, end, this.#start)
        : pastStretch(d, stretch, end, this.#start);
    this.#host.serve(end, slot);
  }

  #smooth(now: number): void {
    const dt = now - this.#cpuAt;
    if (dt > 0) {
      const w = this.#workers;
      const level = w > 0 ? (this.busy < w ? this.busy / w : 1) : this.busy > 0 || this.#length > 0 ? 1 : 0;
      this.#cpu += (level - this.#cpu) * (1 - Math.exp(-dt / this.#tau));
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

/** Whether a schedule may fail a call: one of its own making (a subclass's `rate`) always may. */
export function fails(schedule: FailureSchedule): boolean {
  return (
    Object.getPrototypeOf(schedule) !== FailureSchedule.prototype ||
    schedule.base > 0 ||
    schedule.windows.some((w) => w.rate > 0)
  );
}

/** `a` grown (doubling) to hold at least `min` entries. */
export function grow8(a: Uint8Array, min: number): Uint8Array<ArrayBuffer> {
  let n = a.length;
  while (n < min) n *= 2;
  const b = new Uint8Array(n);
  b.set(a);
  return b;
}
