import type { Random } from "@tideward/time";
import { TAKEN, duration, share } from "./backend";
import type { BackendSpec, Host, Server } from "./backend";
import { fails, grow8 } from "./capacity";
import { EVENT_LIMIT, pastClock } from "./clock-range";

/**
 * The contention backend: one resource under optimistic concurrency control, as in Brooker's
 * "Exponential Backoff And Jitter" (AWS Architecture Blog, 2015). A call reads the resource's
 * version when it arrives, and its write arrives a read→write window later; the write succeeds,
 * and bumps the version, only if the version is still the one it read. So a call fails only
 * when another call's write succeeded within its window. Capacity is unlimited: the cost of
 * contention is the work wasted on conflicting writes, not a queue.
 */
export class ContentionServer implements Server {
  readonly spec: BackendSpec;
  readonly limited = false;
  readonly queued = 0;
  busy = 0;
  readonly #random: Random;
  readonly #start: number;
  readonly #host: Host;
  readonly #fails: boolean;
  #version = 0;
  // Per attempt slot: the version it read, and whether the failure schedule let it through.
  #read = new Float64Array(64);
  #outcome = new Uint8Array(64);

  constructor(spec: BackendSpec, random: Random, start: number, host: Host) {
    this.spec = spec;
    this.#random = random;
    this.#start = start;
    this.#host = host;
    this.#fails = fails(spec.failures);
  }

  /** Writes that succeeded so far. */
  get version(): number {
    return this.#version;
  }

  accept(slot: number, now: number): number {
    const ok = this.#fails ? this.#random() >= share(this.spec.failures, now - this.#start) : true;
    if (slot >= this.#outcome.length) {
      this.#outcome = grow8(this.#outcome, slot + 1);
      const read = new Float64Array(this.#outcome.length);
      read.set(this.#read);
      this.#read = read;
    }
    this.#outcome[slot] = ok ? 1 : 0;
    this.#read[slot] = this.#version;
    this.busy++;
    const window = this.spec.window as NonNullable<BackendSpec["window"]>;
    const d = duration(window, this.#random, "backend contention window");
    if (now + d > EVENT_LIMIT) throw pastClock("backend contention window", "window", d, now + d, this.#start);
    this.#host.serve(now + d, slot);
    return TAKEN;
  }

  finish(slot: number): boolean {
    this.busy--;
    if (this.#outcome[slot] !== 1 || this.#read[slot] !== this.#version) return false;
    this.#version++;
    return true;
  }

  wake(): void {}

  cpu(): number {
    return 0;
  }
}
