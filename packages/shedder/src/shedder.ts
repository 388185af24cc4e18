import { check, read } from "@tideward/time/internal";
import type { RestoreOptions } from "@tideward/time";
import { Total, Window, checkReading, layAt, saveWindow } from "@tideward/window";
import { roomOf } from "./levels";
import type { Levels } from "./levels";
import { resolveShed } from "./shed";
import type { Shed } from "./shed";
import { VERSION, laySnapshot, readSnapshot } from "./snapshot";
import type { SavedTotal, ShedderSnapshot } from "./snapshot";
import { Ticket } from "./ticket";
import type { Flight } from "./ticket";

/** Leaves the partial current bucket out: a busiest or fastest reading compares whole buckets. */
const FINISHED = Object.freeze({ current: false });

/**
 * Load shedding that refuses work only when the server is both **hot** and **full**.
 *
 * - Hot: `cpu` is at or over the policy's threshold (the shedder remembers when), or the
 *   shedder has refused a call since it last cooled and the CPU last read hot less than `cool`
 *   ago. It cools once a reading finds `cool` gone by since the last hot one.
 * - Full: both the moving average of calls in flight and the current count exceed
 *   `maxFlight × factor`, where `maxFlight = max(1, passes per ms of the busiest bucket ×
 *   mean response time in ms of the fastest bucket)` over the finished buckets of the window
 *   (`latency` assumed while none has a pass), and `factor = clamp((1000 − cpu) / (1000 −
 *   threshold), floor, 1)` shrinks that capacity as the CPU nears 1000‰.
 * - The moving average is updated each time a call leaves flight:
 *   `average = average·beta + flying·(1 − beta)`, with `flying` counted after it left.
 *
 * - Priority: given levels (a `Priorities` of `@tideward/concurrency`), a call at level `p` is
 *   full at `room(p)` of that capacity, so as a hot server fills up the least important calls are
 *   refused first. Level 0, and every call of a shedder given no levels, is judged at the whole
 *   capacity: without levels nothing changes.
 *
 * So a CPU spike with nothing queued refuses nothing, and neither does a long queue on an idle
 * CPU. The shedder never reads a clock or the CPU itself: every call carries `now` (ms) and the
 * caller's CPU reading in thousandths (`@tideward/shedder/node` has a sampler for Node.js).
 *
 * Gotchas: `cpu` is clamped, never rejected, on the hot path — NaN, anything under 0 and
 * anything that is not a number read as 0 (a broken signal never sheds), anything over 1000 as
 * 1000. A clock that steps back, or a `now` that is NaN, infinite or not a number, is treated as
 * standing still at the latest reading.
 *
 * @example
 * const shedder = new Shedder({ cpu: 800 }, performance.now());
 * const cpu = 350; // thousandths; a LoadSampler's `load` in a Node.js server
 * const handle = async () => "done"; // the request's work
 * const ticket = shedder.allow(performance.now(), cpu);
 * if (ticket === undefined) throw new Error("503: shed");
 * try { await handle(); ticket.pass(performance.now()); } catch (e) { ticket.fail(); throw e; }
 * shedder.flying; // 0
 */
export class Shedder {
  /** The policy in force: the `shed` preset with the fields given at construction laid over it. */
  readonly policy: Shed;
  /** The priority levels calls are judged by; `undefined` when none were given (every call alike). */
  readonly priorities: Levels | undefined;

  // Per bucket, `count` is the passes that finished in it and `sum` their response times (ms):
  // a pass records both at once, so one window serves for both. Replaced by a restore.
  #window: Window<Total>;
  #flying = 0;
  #average = 0;
  // The latest clock reading seen (ms); an earlier or nonsensical one stands still at it.
  // Initialised here, not only in the constructor: a field that starts out `undefined` is
  // stored as a tagged value, and every write of a fractional number then allocates.
  #now = 0;
  // The last reading at which the CPU was at or over the threshold (ms).
  #hotAt = -Infinity;
  // Whether the shedder has refused a call since it last cooled.
  #refused = false;

  // Scratch for one scan of the window, kept on the instance so a scan allocates nothing.
  #busiest = 0;
  #fastest = Infinity;
  readonly #visit = (bucket: Total): void => {
    const n = bucket.count;
    if (n === 0) return;
    if (n > this.#busiest) this.#busiest = n;
    const mean = bucket.sum / n;
    if (mean < this.#fastest) this.#fastest = mean;
  };

  readonly #flight: Flight = {
    land: (start, now) => {
      const t = this.#tick(now);
      const rt = t - start;
      this.#window.slot(t).add(rt > 0 ? rt : 0);
      this.#leave();
    },
    leave: () => this.#leave(),
  };

  /**
   * A shedder with an empty window opening at `now`, nothing in flight and a cold CPU.
   *
   * @param policy - fields laid over the {@link shed} preset; checked here, once
   * @param now - the clock reading the window opens at, in milliseconds
   * @param priorities - the priority levels calls are judged by (`criticality` of
   *   `@tideward/concurrency`, say); left out, every call is judged alike, at the whole capacity
   * @throws TypeError when `policy` is not an object, names an unknown field (with the closest
   *   known one) or a field is not a number, or `priorities` has no `level` and `room` methods;
   *   RangeError when a field is out of range (a size over 1 000 000 buckets or buckets under
   *   0.01 ms included) or `now` is not finite (the message names the field, the value and the
   *   bound)
   */
  constructor(policy?: Partial<Shed>, now = 0, priorities?: Levels) {
    this.policy = resolveShed(policy);
    check.finite(now, "Shedder now (ms)");
    const p = priorities as Partial<Levels> | null | undefined;
    if (p !== undefined && (typeof p?.level !== "function" || typeof p.room !== "function"))
      throw new TypeError(
        `Shedder priorities must have level() and room() methods (a Priorities of @tideward/concurrency), got ${check.describe(p)}`,
      );
    this.priorities = priorities;
    const { size, window } = this.policy;
    this.#window = new Window(() => new Total(), { size, window, now });
    this.#now = now;
  }

  /** How many calls are in flight: let through and not yet settled. */
  get flying(): number {
    return this.#flying;
  }

  /** The moving average of calls in flight, as last updated when a call left flight. */
  get average(): number {
    return this.#average;
  }

  /**
   * Asks to start one call at `now`, with the CPU at `cpu` thousandths.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param cpu - CPU use in thousandths (0–1000), read by the caller; NaN, under 0 or not a
   *   number reads as 0 and over 1000 as 1000
   * @param priority - the call's level (0 the most important) or name, read against
   *   {@link Shedder.priorities} (for a `Priorities`: left out, the fallback level; not a level,
   *   the least important). Ignored by a shedder given no levels, and read as the whole capacity
   *   when the levels throw or answer what is not a share
   * @returns a ticket to settle once the call has finished, or `undefined` when the call is
   *   refused (reply 503 / `RESOURCE_EXHAUSTED` and let the client back off)
   */
  allow(now: number, cpu: number, priority?: number | string): Ticket | undefined {
    const t = this.#tick(now);
    const load = clamp(cpu);
    const p = this.policy;
    // Cooled: a whole `cool` since the last hot reading forgets the refusals before it.
    if (this.#refused && !(t - this.#hotAt < p.cool)) this.#refused = false;
    if (load >= p.cpu) this.#hotAt = t;
    else if (!this.#refused) return this.#admit(t);
    if (this.#full(t, load, roomOf(this.priorities, priority))) {
      this.#refused = true;
      return undefined;
    }
    return this.#admit(t);
  }

  /**
   * How many calls may be in flight at `now` with the CPU at `cpu` thousandths before a hot
   * server counts as full for a call of `priority`: `maxFlight × factor × room`, as in the class
   * summary. Reads only.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param cpu - CPU use in thousandths, clamped as in {@link Shedder.allow}
   * @param priority - read as in {@link Shedder.allow}
   * @returns a number of calls, at least `floor × room` (fractions are normal)
   */
  capacity(now: number, cpu: number, priority?: number | string): number {
    const t = typeof now === "number" && now > this.#now && now < Infinity ? now : this.#now;
    return this.#maxFlight(t) * this.#factor(clamp(cpu)) * roomOf(this.priorities, priority);
  }

  /**
   * What the shedder knows, as plain JSON-safe data: its window's live buckets of passes and
   * response times, the moving average of calls in flight, how long since the CPU last read hot
   * and whether it has refused since it last cooled, every instant relative to the latest clock
   * reading it was given. Calls in flight are left out: they belong to this process.
   *
   * @example
   * const before = new Shedder({ cpu: 800 }, 1_700_000_000_000); // Date.now() in one process
   * before.allow(1_700_000_000_000, 950)?.pass(1_700_000_000_020); // hot, one 20 ms pass
   * const saved = JSON.stringify(before.snapshot());
   * const after = new Shedder({ cpu: 800 }, 0); // another process, its clock near 0
   * after.restore(JSON.parse(saved), 0);
   * after.snapshot().buckets; // [[1, 20]]
   * after.snapshot().hot; // 20 — the CPU read hot 20 ms before the snapshot's clock
   */
  snapshot(): ShedderSnapshot {
    const clock = this.#now;
    const saved = saveWindow(
      this.#window,
      clock,
      (b): SavedTotal => [b.count, b.sum],
      (b) => b.count === 0,
    );
    const hotAt = this.#hotAt;
    return {
      version: VERSION,
      kind: "shedder",
      clock,
      size: this.policy.size,
      window: this.policy.window,
      into: saved.into,
      buckets: saved.buckets,
      average: this.#average,
      hot: hotAt === -Infinity ? null : clock - hotAt,
      refused: this.#refused,
    };
  }

  /**
   * Takes on what a snapshot (another process's, read back from storage) knew, checked as
   * untrusted input and refused whole when any of it is wrong. Its window is laid onto this
   * shedder's clock, the snapshot's `clock` becoming `now` (or `now − age`, when `options` say
   * how long ago it was taken, so what aged out since is gone), and the shedder acts at `now`.
   *
   * A warm start: the restored shedder knows what the server has shown it can finish and whether
   * it was hot, and goes on from there on its own calls. Calls in flight here stay in flight. The
   * policy is this shedder's own; a snapshot of another `size` or `window` is refused.
   *
   * @param snapshot - what {@link Shedder.snapshot} returned, possibly through JSON
   * @param now - the restoring clock's reading, in milliseconds
   * @param options - how long ago the snapshot was taken (`age`), or that its clock is this one
   *   (`sameClock`, for `Date.now()` on every machine); left out, it was taken just now
   * @throws SnapshotError naming the first bad field (a version or kind other than a shedder's,
   *   a missing or extra field, a window of another shape, a pass count that is not whole, a
   *   response time below 0 or without a pass, a refusal with no hot reading), leaving the
   *   shedder as it was; TypeError or RangeError for a `now` or `options` that are not valid,
   *   naming them
   */
  restore(snapshot: unknown, now: number, options?: RestoreOptions): void {
    const r = read.restoring(now, options, "Shedder.restore");
    const { size, window } = this.policy;
    checkReading(now, size, window, "Shedder.restore");
    const s = readSnapshot(snapshot, this.policy);
    const age = read.ageOf(r, now, s.clock);
    this.#window = laySnapshot(s.window, size, window, layAt(now, age, size, window));
    this.#average = s.average;
    this.#hotAt = s.hot === null ? -Infinity : now - (age + s.hot);
    this.#refused = s.refused;
    this.#now = now;
  }

  #admit(t: number): Ticket {
    this.#flying++;
    return new Ticket(this.#flight, t);
  }

  #leave(): void {
    const flying = --this.#flying;
    const beta = this.policy.beta;
    this.#average = this.#average * beta + flying * (1 - beta);
  }

  #tick(now: number): number {
    // A reading that is not a number (a Symbol, a BigInt, a string) stands still, like NaN.
    if (typeof now === "number" && now > this.#now && now < Infinity) this.#now = now;
    return this.#now;
  }

  #factor(load: number): number {
    const p = this.policy;
    const f = (1000 - load) / (1000 - p.cpu);
    return f < p.floor ? p.floor : f > 1 ? 1 : f;
  }

  #full(t: number, load: number, room: number): boolean {
    const factor = this.#factor(load) * room;
    const flying = this.#flying;
    const average = this.#average;
    // maxFlight is at least 1, so a queue no longer than `factor` is never full: no scan needed.
    if (!(flying > factor && average > factor)) return false;
    const limit = this.#maxFlight(t) * factor;
    return flying > limit && average > limit;
  }

  #maxFlight(t: number): number {
    this.#busiest = 0;
    this.#fastest = Infinity;
    this.#window.each(t, this.#visit, FINISHED);
    const rt = this.#fastest === Infinity ? this.policy.latency : this.#fastest;
    const max = (this.#busiest / this.#window.width) * rt;
    return max > 1 ? max : 1;
  }
}

/**
 * CPU thousandths clamped to [0, 1000]; NaN, and anything that is not a number, reads as 0 so
 * that a broken signal never sheds (and a Symbol is never compared, so it cannot throw).
 */
function clamp(cpu: number): number {
  return typeof cpu === "number" && cpu > 0 ? (cpu < 1000 ? cpu : 1000) : 0;
}
