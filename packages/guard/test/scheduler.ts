// A simulated scheduler for the guard's timers: a ManualClock that moves only when the earliest
// timer is due, so a deadline of a minute or a hedge after 50 ms runs in microseconds and the
// same test gives the same answer at every clock scale.
import { setImmediate } from "node:timers/promises";
import { ManualClock } from "@tideward/time";
import type { Timers } from "@tideward/guard";

interface Entry {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

export class Scheduler implements Timers {
  readonly clock: ManualClock;
  readonly now: () => number;
  #queue: Entry[] = [];
  #seq = 0;
  /** Every delay a timer was set for, in order (ms). */
  readonly delays: number[] = [];

  constructor(start = 0) {
    this.clock = new ManualClock(start);
    this.now = this.clock.now;
  }

  readonly set = (fn: () => void, ms: number): unknown => {
    const entry = { at: this.clock.now() + ms, seq: this.#seq++, fn };
    this.delays.push(ms);
    this.#queue.push(entry);
    return entry;
  };

  readonly clear = (handle: unknown): void => {
    this.#queue = this.#queue.filter((e) => e !== handle);
  };

  /** Timers set and not yet fired or cleared. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Lets every promise chain that can move on do so (a macrotask turn flushes microtasks). */
  async settle(): Promise<void> {
    for (let i = 0; i < 5; i++) await setImmediate();
  }

  /** Fires due timers in time order, moving the clock, until none is due by `until` (ms). */
  async advance(span: number): Promise<void> {
    const until = this.clock.now() + span;
    await this.settle();
    for (let guard = 0; guard < 10_000; guard++) {
      const next = this.#earliest();
      if (next === undefined || next.at > until) break;
      this.#queue = this.#queue.filter((e) => e !== next);
      if (next.at > this.clock.now()) this.clock.set(next.at);
      next.fn();
      await this.settle();
    }
    if (until > this.clock.now()) this.clock.set(until);
  }

  /** Fires every timer, in time order, until none is left (bounded). */
  async run(): Promise<void> {
    await this.settle();
    for (let guard = 0; guard < 10_000; guard++) {
      const next = this.#earliest();
      if (next === undefined) return;
      this.#queue = this.#queue.filter((e) => e !== next);
      if (next.at > this.clock.now()) this.clock.set(next.at);
      next.fn();
      await this.settle();
    }
    throw new Error("scheduler: timers kept coming");
  }

  #earliest(): Entry | undefined {
    let best: Entry | undefined;
    for (const e of this.#queue)
      if (best === undefined || e.at < best.at || (e.at === best.at && e.seq < best.seq)) best = e;
    return best;
  }
}

/** A scheduler starting at `t0` (ms), and the guard options that run a guard on it (every draw 0.5). */
export function simulated(t0: number): {
  s: Scheduler;
  base: { clock: () => number; timers: Scheduler; random: () => number };
} {
  const s = new Scheduler(t0);
  return { s, base: { clock: s.now, timers: s, random: () => 0.5 } };
}
