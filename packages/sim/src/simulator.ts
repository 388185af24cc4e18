import { ManualClock } from "@tideward/time";
import { check } from "@tideward/time/internal";
import type { Random } from "@tideward/time";
import { EventQueue, badEvent, isChannel, isEvent, watchGrowth } from "./queue";
import type { Fire, Grow } from "./queue";
import { seedOf, stream } from "./streams";

/** Options of a {@link Simulator}. */
export interface SimulatorOptions {
  /** The seed every random stream of the run is derived from, a whole number from 0 to 4 294 967 295. @defaultValue 1 */
  readonly seed?: number;
  /**
   * The clock reading the run starts at, in milliseconds: 0, or a `Date.now()`-scale instant to
   * run the policies where production runs them. @defaultValue 0
   */
  readonly start?: number;
}

/**
 * A discrete-event simulator: a virtual clock, seeded random streams and a queue of events.
 *
 * Processes schedule events ({@link Simulator.at}, {@link Simulator.after}); {@link Simulator.run}
 * takes them out in time order (ties in the order they were scheduled), moves the clock to each
 * and fires it. Nothing reads the wall clock or `Math.random`, so the same seed and the same
 * processes give the same run, bit for bit.
 *
 * @example
 * const sim = new Simulator({ seed: 7 });
 * const coin = sim.random("coin");
 * let heads = 0;
 * const toss = (now: number) => {
 *   if (coin() < 0.5) heads++;
 *   sim.after(1_000, toss);
 * };
 * sim.at(0, toss);
 * sim.run(60_000); // sixty tosses, one a second (the one at 60 000 ms is left waiting)
 */
export class Simulator {
  /** The run's seed. */
  readonly seed: number;
  /** The clock reading the run started at, in milliseconds. */
  readonly start: number;
  /** The virtual clock: it reads the time of the event being fired. */
  readonly clock: ManualClock;
  readonly #queue = new EventQueue();
  #events = 0;
  #stopped = false;
  #now: number;

  /**
   * @throws RangeError (TypeError for a non-number) when `seed` is not a whole number from 0 to
   *   4 294 967 295 or `start` is not finite
   */
  constructor(options: SimulatorOptions = {}) {
    const o = check.options(options, ["seed", "start"], "Simulator");
    this.seed = seedOf(check.or(o.seed, 1), "Simulator seed");
    this.start = check.finite(check.or(o.start, 0), "Simulator start (ms)");
    this.clock = new ManualClock(this.start);
    this.#now = this.start;
    queues.set(this, this.#queue);
  }

  /** The current time on the virtual clock, in milliseconds. */
  now(): number {
    return this.#now;
  }

  /** How many events have been fired. */
  get events(): number {
    return this.#events;
  }

  /** How many events are waiting. */
  get pending(): number {
    return this.#queue.size;
  }

  /**
   * A random source of its own for the part of the run called `name`: draws in [0, 1), the
   * same for the same seed and name however many other streams the run uses.
   */
  random(name: string): Random {
    return stream(this.seed, name);
  }

  /**
   * Schedules `fire(time, arg)` at `time` (ms). A time before the current one fires at the
   * current one: the clock never runs backwards.
   *
   * @throws RangeError when `time` is NaN; TypeError when it is not a number, `fire` is not a
   *   function or `arg` is not a number
   */
  at(time: number, fire: Fire, arg = 0): void {
    if (!isEvent(time, fire, arg)) badEvent(time, fire, arg, "Simulator.at");
    this.#queue.push(time >= this.#now ? time : this.#now, fire, arg);
  }

  /**
   * Schedules the one event of the simulator's lane: `fire(time, arg)` at `time` (ms), replacing
   * the event waiting in the lane if there is one. For a process that always has exactly one
   * event waiting (a traffic source re-arming itself): it skips the event heap, and fires in the
   * same order as {@link Simulator.at} would have, so moving a process to the lane changes no run.
   *
   * @throws RangeError when `time` is NaN; TypeError when it is not a number, `fire` is not a
   *   function or `arg` is not a number
   */
  lane(time: number, fire: Fire, arg = 0): void {
    if (!isEvent(time, fire, arg)) badEvent(time, fire, arg, "Simulator.lane");
    this.#queue.lane(time >= this.#now ? time : this.#now, fire, arg);
  }

  /**
   * Schedules `fire(time, arg)` at `time` (ms), as {@link Simulator.at} does, on channel `channel`
   * (0 to 7): for a process whose events come in time order (a fixed timeout, a call's
   * deadline), kept in a queue of its own rather than the heap. It fires in exactly the order
   * `at` would have given it, so moving a process to a channel changes no run; an event earlier
   * than its channel's last goes to the heap.
   *
   * @throws RangeError when `time` is NaN or `channel` is not a whole number from 0 to 7;
   *   TypeError when `time` is not a number, `fire` is not a function or `arg` is not a number
   */
  channel(channel: number, time: number, fire: Fire, arg = 0): void {
    if (!isEvent(time, fire, arg)) badEvent(time, fire, arg, "Simulator.channel");
    if (!isChannel(channel))
      throw new RangeError(
        `Simulator.channel channel must be a whole number from 0 to 7, got ${check.describe(channel)}`,
      );
    this.#queue.channel(channel, time >= this.#now ? time : this.#now, fire, arg);
  }

  /**
   * Schedules `fire` `delay` milliseconds from now (a negative delay counts as 0).
   *
   * @throws RangeError when `delay` is NaN; TypeError when it is not a number, `fire` is not a
   *   function or `arg` is not a number
   */
  after(delay: number, fire: Fire, arg = 0): void {
    if (typeof delay !== "number" || delay !== delay)
      throw new (typeof delay === "number" ? RangeError : TypeError)(
        `Simulator.after delay must be a number of milliseconds, got ${check.describe(delay)}`,
      );
    if (typeof fire !== "function" || typeof arg !== "number") badEvent(0, fire, arg, "Simulator.after");
    this.at(this.#now + (delay > 0 ? delay : 0), fire, arg);
  }

  /**
   * Fires events in time order until none is left before `until` (ms, exclusive) or
   * {@link Simulator.stop} is called, then leaves the clock at `until` (or where it stopped).
   *
   * @param until - the instant to run to, in milliseconds; `Infinity` runs until the queue is empty
   * @param each - called after every event with its time (ms): where checks that must hold at
   *   every step go
   * @returns how many events this call fired
   * @throws whatever an event's function (or `each`) throws: the event is spent and the clock
   *   stays at its time, and a later `run` goes on from the next event; a RangeError or
   *   TypeError, before any event fires, when `until` is not a number of milliseconds or `each`
   *   is not a function
   */
  run(until = Infinity, each?: (now: number) => void): number {
    untilOf(until, "Simulator.run");
    if (each !== undefined) check.fn(each, "Simulator.run each");
    this.#stopped = false;
    let fired = 0;
    while (!this.#stopped) {
      const fire = this.take(until);
      if (fire === undefined) break;
      fired++;
      const t = this.#now;
      fire(t, this.#queue.arg);
      if (each !== undefined) each(t);
    }
    if (!this.#stopped && until !== Infinity && until > this.#now) {
      this.#now = until;
      this.clock.set(until);
    }
    return fired;
  }

  /**
   * Takes the earliest event out of the queue if it comes before `until` (ms, exclusive), moves
   * the clock to its time and counts it as fired, and returns its function without calling it:
   * for a driver that tells its own events apart and calls each directly. The caller calls it
   * (or what it stands for) with {@link Simulator.now} and {@link Simulator.arg}; `run` is this
   * in a loop. Returns `undefined`, taking nothing, when no event is left before `until`.
   *
   * @param until - the instant to take events before, in milliseconds
   * @throws RangeError or TypeError when `until` is not a number of milliseconds
   */
  take(until = Infinity): Fire | undefined {
    untilOf(until, "Simulator.take");
    const queue = this.#queue;
    // One look at the queue an event: the pop takes the earliest only if it is before `until`.
    const fire = queue.pop(until);
    if (fire === undefined) return undefined;
    const t = queue.time;
    if (t !== this.#now) {
      this.#now = t;
      this.clock.set(t);
    }
    this.#events++;
    return fire;
  }

  /** The argument of the event {@link Simulator.take} took last. */
  get arg(): number {
    return this.#queue.arg;
  }

  /** Stops {@link Simulator.run} after the event being fired. */
  stop(): void {
    this.#stopped = true;
  }
}

/** Checks an instant to run to: a number of milliseconds (`Infinity` for no end), not NaN. */
function untilOf(until: unknown, what: string): void {
  if (typeof until !== "number" || until !== until)
    throw new (typeof until === "number" ? RangeError : TypeError)(
      `${what} until must be a number of milliseconds (Infinity for no end), got ${check.describe(until)}`,
    );
}

// Each simulator's queue, for the run's own use: watching it is no part of the public API.
const queues = new WeakMap<Simulator, EventQueue>();

/** Has `grow` told before `sim`'s queue of events grows (see {@link watchGrowth}). */
export function watchEvents(sim: Simulator, grow: Grow): void {
  watchGrowth(queues.get(sim) as EventQueue, grow);
}
