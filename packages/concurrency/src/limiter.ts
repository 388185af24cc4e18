import { check, read } from "@tideward/time/internal";
import type { RestoreOptions } from "@tideward/time";
import { AimdLimit } from "./aimd";
import { ADOPT, STATE, STEP } from "./bounds";
import { FixedLimit } from "./fixed";
import { Gradient2Limit } from "./gradient2";
import { Priorities, SLACK, single } from "./priorities";
import type { Priority, Refusal } from "./priorities";
import { SNAPSHOT_VERSION, readSnapshot } from "./snapshot";
import type { LimiterSnapshot } from "./snapshot";
import { LAND, Token } from "./token";
import { VegasLimit } from "./vegas";
import { Samples, resolveWindow } from "./window";
import type { SampleWindow } from "./window";

/** A limit algorithm a {@link Limiter} runs: one of the four this package has. */
export type Limit = AimdLimit | VegasLimit | Gradient2Limit | FixedLimit;

/** Options of a {@link Limiter}. */
export interface LimiterOptions {
  /** The priority levels and the share of the limit each keeps. @defaultValue one level */
  readonly priorities?: Priorities;
  /** The clock reading the limiter starts at, in milliseconds. @defaultValue 0 */
  readonly now?: number;
  /**
   * Fold the calls that finish within a window into one sample (their mean round trip, the most
   * in flight, any drop), as Netflix's `WindowedLimit` does: fields laid over the
   * {@link sampleWindow} preset (`{}` for the preset itself). Left out, every call is a sample.
   * @defaultValue none: a sample a call
   */
  readonly window?: Partial<SampleWindow>;
}

const KNOWN = ["priorities", "now", "window"] as const;

// How a limiter steps its algorithm, chosen once from the algorithm's class. AIMD's step is small:
// the limiter calls it from a site that only ever sees an AimdLimit, so V8 inlines it into the rest
// of a call however many algorithms the process runs. Any other algorithm's step (Vegas's and
// Gradient2's are large; a FixedLimit's or a subclass's `sample`) is a function the limiter holds,
// made from one source a kind: once a process runs two such kinds, V8 calls them without inlining,
// so their size never pushes the rest of a call out of its inlining budget. A step takes one
// finished call (its round trip, NaN when unknown; the calls in flight it found; whether it was
// dropped; its finish reading, NaN when unknown) and answers the limit after it.
type Step = (rtt: number, inflight: number, dropped: boolean, end: number) => number;

function stepOf(algorithm: Limit): Step {
  const proto: unknown = Object.getPrototypeOf(algorithm);
  if (proto === VegasLimit.prototype)
    return (rtt, inflight, dropped) => (algorithm as VegasLimit)[STEP](rtt, inflight, dropped);
  if (proto === Gradient2Limit.prototype)
    return (rtt, inflight, dropped) => (algorithm as Gradient2Limit)[STEP](rtt, inflight, dropped);
  return (rtt, inflight, dropped) => {
    algorithm.sample(rtt, inflight, dropped);
    return algorithm.limit;
  };
}

// Which limits are in a limiter already: one algorithm learns from one stream of calls.
const owned = new WeakSet<object>();

/**
 * Holds the calls in flight under a limit that a limit algorithm moves, and lets calls in by
 * priority.
 *
 * `acquire(now, priority)` answers a {@link Token} (its place is held until the token settles)
 * or a {@link Refusal} saying why:
 * - `"limit"`: the calls in flight fill the limit;
 * - `"reserved"`: places are left, but they are kept for more important levels — a call at
 *   level `p` may fill the limit only up to {@link Priorities.places}`(p, limit)`.
 *
 * A token ends with `pass(now)` (its round trip is a sample), `drop(now)` (the limit learns of
 * the drop) or `ignore()` (no sample). The limit moves only on samples, never with time.
 *
 * Nothing is ever let in past the limit. The limit can fall below the calls already in flight
 * (a drop, a slower round trip); they finish normally, and nothing is let in until the count is
 * under the limit again.
 *
 * Gotchas: the hot path never throws. A priority that is not a level counts as the least
 * important level; a `now` that is NaN, infinite, not a number or earlier than a reading already
 * seen is treated as standing still at the latest reading.
 *
 * @example
 * const limiter = new Limiter(new AimdLimit({ initial: 10, min: 1 }), { priorities: criticality });
 * const held = [];
 * for (let i = 0; i < 10; i++) {
 *   const t = limiter.acquire(0, "critical");
 *   if (t.ok) held.push(t);
 * }
 * held.length; // 9 — critical may fill 90 % of the 10 places
 * const late = limiter.acquire(0, "sheddable");
 * late.ok ? "in" : late.reason; // "reserved"
 * limiter.acquire(0, "critical_plus").ok; // true
 * limiter.acquire(0, "critical_plus").ok ? "in" : "full"; // "full"
 */
export class Limiter {
  /** The algorithm that moves the limit. */
  readonly algorithm: Limit;
  /** The priority levels calls are judged by. */
  readonly priorities: Priorities;
  /** The sample window in force, or `undefined` when every call is a sample. */
  readonly window: SampleWindow | undefined;

  // The AIMD limit when the algorithm is exactly an AimdLimit and there is no window, stepped
  // inline (see `stepOf`).
  readonly #aimd: AimdLimit | undefined;
  // The step of any other algorithm (see `stepOf`).
  readonly #step: Step;
  // Calls in flight per level; none kept for a single level (the count is `#flying`).
  readonly #byLevel: Int32Array | undefined;
  // The priorities' fallback level, read on every call that gives none.
  readonly #fallback: number;
  // Each level's room (the part of the limit it may fill), copied: read as a double in place, it
  // is compared without ever being boxed.
  readonly #rooms: Float64Array;
  #flying = 0;
  // The limit in force, read from the algorithm after each sample.
  #limit: number;
  // The latest clock reading `acquire` (or `restore`) was given (ms); an earlier or nonsensical one
  // stands still at it.
  #now = 0;
  // The window being filled, when the limiter has one.
  readonly #samples: Samples | undefined;

  /**
   * A limiter with nothing in flight.
   *
   * @param algorithm - the limit algorithm: a {@link AimdLimit}, {@link VegasLimit},
   *   {@link Gradient2Limit} or {@link FixedLimit} that no other limiter has
   * @param options - the priorities and the starting clock reading; read once and checked
   * @throws TypeError when `algorithm` is not one of the four, or already in another limiter;
   *   `options` is not an object or names an option there is not (with the closest known one);
   *   `priorities` is not a {@link Priorities}, or `window` is not an object or names a field
   *   there is not; RangeError when `now` is not finite or a `window` field is out of its range
   */
  constructor(algorithm: Limit, options?: LimiterOptions) {
    if (!(
      algorithm instanceof AimdLimit ||
      algorithm instanceof VegasLimit ||
      algorithm instanceof Gradient2Limit ||
      algorithm instanceof FixedLimit
    ))
      throw new TypeError(
        `Limiter algorithm must be an AimdLimit, VegasLimit, Gradient2Limit or FixedLimit, got ${check.describe(algorithm)}`,
      );
    if (owned.has(algorithm))
      throw new TypeError("Limiter algorithm is already in another limiter: give each limiter an algorithm of its own");
    const o = check.options(options, KNOWN, "Limiter");
    const priorities: unknown = check.or(o.priorities, single);
    if (!(priorities instanceof Priorities))
      throw new TypeError(`Limiter priorities must be a Priorities, got ${check.describe(priorities)}`);
    const now = check.finite(check.or(o.now, 0), "Limiter now (ms)");
    const window = o.window === undefined ? undefined : resolveWindow(o.window);
    owned.add(algorithm);
    this.window = window;
    this.#samples = window === undefined ? undefined : new Samples(window);
    this.algorithm = algorithm;
    const samples = this.#samples;
    const step = stepOf(algorithm);
    this.#aimd =
      samples === undefined && Object.getPrototypeOf(algorithm) === AimdLimit.prototype
        ? (algorithm as AimdLimit)
        : undefined;
    // With a window, a call is folded into it, and the algorithm steps once a window closes (at
    // the finish reading, or at the latest reading when that is unknown); the limit stays between.
    this.#step =
      samples === undefined
        ? step
        : (rtt, inflight, dropped, end) =>
            samples.add(rtt, inflight, dropped, end === end ? end : this.#now)
              ? step(samples.rtt, samples.inflight, samples.dropped, end)
              : this.#limit;
    this.priorities = priorities;
    this.#byLevel = priorities.count > 1 ? new Int32Array(priorities.count) : undefined;
    this.#fallback = priorities.fallback;
    this.#rooms = Float64Array.from(priorities.names, (_, level) => priorities.room(level));
    this.#limit = algorithm.limit;
    this.#now = now;
  }

  /** The limit in force, in places. */
  get limit(): number {
    return this.#limit;
  }

  /** How many calls are in flight: let in and not yet settled. */
  get flying(): number {
    return this.#flying;
  }

  /** How many calls of `priority`'s level are in flight. */
  flyingAt(priority: Priority): number {
    const byLevel = this.#byLevel;
    return byLevel === undefined ? this.#flying : byLevel[this.priorities.level(priority)];
  }

  /**
   * How many more calls of `priority` would be let in now: the places its level may fill, less
   * the calls in flight (0 when none). Reads only.
   *
   * @param priority - a level's number or name; `undefined` for the fallback level
   */
  room(priority?: Priority): number {
    const places = this.priorities.places(this.priorities.level(priority), this.#limit);
    return places > this.#flying ? places - this.#flying : 0;
  }

  /**
   * Asks for a place for one call at `now`.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param priority - the call's level (a number, 0 the most important) or its name; left out,
   *   the priorities' fallback level
   * @returns a token to settle once the call has finished, or a refusal with its reason (one
   *   object per level and reason, made once: a refusal allocates nothing)
   */
  acquire(now: number, priority?: Priority): Token | Refusal {
    const t = this.#tick(now);
    const flying = this.#flying;
    if (this.#byLevel !== undefined) return this.#acquireAt(t, flying, priority);
    // One level: every priority is level 0, and only the limit refuses.
    if (flying >= this.#limit) return this.priorities.refusal(0, "limit");
    this.#flying = flying + 1;
    return new Token(this, t, flying + 1, 0);
  }

  // `acquire` with levels, kept apart so that a limiter of one level runs none of it.
  #acquireAt(t: number, flying: number, priority: Priority | undefined): Token | Refusal {
    const levels = this.priorities;
    const level = priority === undefined ? this.#fallback : levels.level(priority);
    const limit = this.#limit;
    // Past the limit, or `flying ≥ places(level, limit)`, that is `floor(limit × room + SLACK) ≤
    // flying`, written without the floor: for a whole `flying` it is `limit × room + SLACK <
    // flying + 1`.
    if (flying >= limit || (level !== 0 && limit * this.#rooms[level] + SLACK < flying + 1))
      return levels.refusal(level, flying >= limit ? "limit" : "reserved");
    this.#flying = flying + 1;
    (this.#byLevel as Int32Array)[level]++;
    return new Token(this, t, flying + 1, level);
  }

  /**
   * What the limiter has learned, as plain JSON-safe data: the algorithm's state and the latest
   * clock reading `acquire` was given. Calls in flight are not in it: they belong to this process.
   */
  snapshot(): LimiterSnapshot {
    return {
      version: SNAPSHOT_VERSION,
      kind: "limiter",
      clock: this.#now,
      algorithm: this.algorithm.kind,
      state: this.algorithm[STATE](),
    };
  }

  /**
   * Takes on learned state from a snapshot (another process's, read back from storage), checked
   * as untrusted input and refused whole when any of it is wrong.
   *
   * The state holds no instants — round trips are durations, the rest are counts — so it
   * carries over to a process whose clock has another origin unchanged; `now` is the restoring
   * clock's reading, which the limiter takes as its latest (the snapshot's `clock` is checked,
   * then only informative). Calls in flight here stay in flight.
   *
   * @param snapshot - what {@link Limiter.snapshot} returned, possibly through JSON
   * @param now - the restoring clock's reading, in milliseconds
   * @param options - checked as every restore's are, and otherwise without effect: nothing in
   *   the state ages
   * @throws SnapshotError naming the first bad field (a version, kind or algorithm other than
   *   this limiter's, a missing or extra field, a number out of the range this policy allows),
   *   leaving the limiter as it was; RangeError when `now` is not finite, TypeError or
   *   RangeError for `options` that are not valid
   */
  restore(snapshot: unknown, now: number, options?: RestoreOptions): void {
    read.restoring(now, options, "Limiter.restore");
    const state = readSnapshot(snapshot, this.algorithm);
    (this.algorithm[ADOPT] as (s: unknown) => void)(state);
    this.#limit = this.algorithm.limit;
    this.#tick(now);
  }

  /**
   * @internal A token of this limiter ended at `now`: its place is freed, and its round trip
   * (`now − start`) is a sample. A pass without a round trip (a `now` that is not a finite number,
   * or before the start; NaN for `ignore`) makes none; a drop still counts, its round trip unknown.
   */
  [LAND](token: Token, now: number, dropped: boolean): void {
    this.#flying--;
    const byLevel = this.#byLevel;
    if (byLevel !== undefined) byLevel[token.level]--;
    // The finish reading itself when it is a finite number, so a round trip is measured on the
    // caller's clock even if it stepped back since.
    const end = typeof now === "number" && now < Infinity ? now : Number.NaN;
    let rtt = end - token.start;
    if (!(rtt >= 0)) {
      if (!dropped) return;
      rtt = Number.NaN;
    }
    const aimd = this.#aimd;
    this.#limit =
      aimd !== undefined ? aimd[STEP](rtt, token.inflight, dropped) : this.#step(rtt, token.inflight, dropped, end);
  }

  #tick(now: number): number {
    // A reading that is not a number (a Symbol, a BigInt, a string) stands still, like NaN.
    if (typeof now === "number" && now > this.#now && now < Infinity) this.#now = now;
    return this.#now;
  }
}
