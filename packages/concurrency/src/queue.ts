import { check } from "@tideward/time/internal";
import { resolveCoDel } from "./codel";
import type { CoDel } from "./codel";
import { Priorities, single } from "./priorities";
import type { Priority } from "./priorities";

/** Why a queue gave up on a waiter: its wait ran out (`"codel"`), or a more important one took its place in a full queue (`"evicted"`). */
export type DropReason = "codel" | "evicted";

/** A caller waiting in a {@link Queue} for a place. It holds nothing while it waits. */
export interface Waiter<T> {
  /** What the caller put in with it (for an async wrapper, how to resume the caller). */
  readonly value: T;
  /** The clock reading it joined at, in milliseconds. */
  readonly since: number;
  /** Its level (its priority, resolved). */
  readonly level: number;
  /** Why the queue gave up on it; `undefined` while it waits, and once served or removed. */
  readonly reason: DropReason | undefined;
  /** Whether it is still in the queue. */
  readonly waiting: boolean;
}

/** Options of a {@link Queue}. */
export interface QueueOptions {
  /** The priority levels waiters are served by. @defaultValue one level */
  readonly priorities?: Priorities;
  /** The clock reading the queue starts at, in milliseconds. @defaultValue 0 */
  readonly now?: number;
}

// A waiter and its places in two lists: all waiters by arrival (`older`/`newer`), and its own
// level's lane by arrival (`prev`/`next`). An evicted waiter waiting to be reported is on the
// evicted list through `next`.
class Node<T> implements Waiter<T> {
  readonly value: T;
  readonly since: number;
  readonly level: number;
  reason: DropReason | undefined = undefined;
  owner: Queue<T> | undefined;
  older: Node<T> | undefined = undefined;
  newer: Node<T> | undefined = undefined;
  prev: Node<T> | undefined = undefined;
  next: Node<T> | undefined = undefined;

  constructor(owner: Queue<T>, value: T, since: number, level: number) {
    this.owner = owner;
    this.value = value;
    this.since = since;
    this.level = level;
  }

  get waiting(): boolean {
    return this.owner !== undefined;
  }
}

const KNOWN = ["priorities", "now"] as const;

/**
 * A short, fair queue for callers waiting for a place: CoDel with adaptive LIFO, clock-free.
 *
 * The queue never decides on its own: each call carries `now`, and the caller (an async wrapper,
 * a simulator) asks it what to do.
 * - **Standing.** The queue's sojourn is how long its oldest waiter has waited (0 when it is
 *   empty). Once the sojourn has stayed above `target` for a whole `interval`, the queue is
 *   standing, and it stays standing until it empties.
 * - **Dropping (CoDel).** A waiter may wait `interval` while the queue is not standing and
 *   `target` once it is; past that, {@link Queue.dropped} hands it back with reason `"codel"`
 *   for the caller to refuse. So a burst may wait a little, a queue that stands is kept short.
 * - **Serving (adaptive LIFO).** {@link Queue.next} names the waiter to give the next place to:
 *   from the most important level that has waiters, its oldest while the queue is not standing
 *   and its newest while it is (with `lifo`), since under overload the newest are the ones whose
 *   callers are still waiting.
 * - **Full.** At `capacity` a newcomer takes the place of the oldest waiter of a less important
 *   level (handed back by `dropped` with reason `"evicted"`), or is refused when there is none.
 *
 * A waiter holds no place anywhere while it waits, and {@link Queue.remove} takes it out at any
 * time (its caller gave up). A waiter served is removed the same way once the caller has its
 * place.
 *
 * Gotchas: call `dropped(now)` until it answers `undefined` before `next(now)`, so the waiter
 * served is one still allowed to wait; `due(now)` says when to look again. A clock that steps
 * back, or a `now` that is not a finite number, stands still at the latest reading.
 *
 * @example
 * const queue = new Queue<string>(); // the codel preset: 5 ms target, 100 ms interval
 * queue.push(0, "a");
 * queue.push(2, "b");
 * queue.next(3)?.value; // "a" — not standing: oldest first
 * queue.dropped(50); // undefined — a wait of 50 ms is allowed while it is not standing
 * queue.due(50); // 100
 * queue.dropped(100)?.reason; // "codel"
 */
export class Queue<T> {
  /** The policy in force: the `codel` preset with the fields given at construction laid over it. */
  readonly policy: CoDel;
  /** The priority levels waiters are served by. */
  readonly priorities: Priorities;

  readonly #target: number;
  readonly #interval: number;
  readonly #lifo: boolean;
  readonly #capacity: number;
  readonly #heads: (Node<T> | undefined)[];
  readonly #tails: (Node<T> | undefined)[];
  #oldest: Node<T> | undefined = undefined;
  #newest: Node<T> | undefined = undefined;
  #length = 0;
  // The most and the least important levels that have waiters (count and -1 when empty).
  #top: number;
  #bottom = -1;
  // Evicted waiters not yet handed back by `dropped`, oldest first.
  #evictedHead: Node<T> | undefined = undefined;
  #evictedTail: Node<T> | undefined = undefined;
  #evicted = 0;
  // The latest clock reading seen (ms).
  #now: number;
  #standing = false;
  // Since when the sojourn has been above target (ms), NaN while it is not.
  #above = Number.NaN;

  /**
   * An empty queue.
   *
   * @param policy - fields laid over the {@link codel} preset; checked here, once
   * @param options - the priorities and the starting clock reading; read once and checked
   * @throws TypeError when `policy` or `options` is not an object or names a field there is not
   *   (with the closest known one), a field has the wrong type, or `priorities` is not a
   *   {@link Priorities}; RangeError when `target` or `interval` is not above 0, `target` is over
   *   `interval`, `capacity` is not a whole number from 1 to 2^24, or `now` is not finite
   */
  constructor(policy?: Partial<CoDel>, options?: QueueOptions) {
    const p = resolveCoDel(policy);
    const o = check.options(options, KNOWN, "Queue");
    const priorities: unknown = check.or(o.priorities, single);
    if (!(priorities instanceof Priorities))
      throw new TypeError(`Queue priorities must be a Priorities, got ${check.describe(priorities)}`);
    this.policy = p;
    this.priorities = priorities;
    this.#target = p.target;
    this.#interval = p.interval;
    this.#lifo = p.lifo;
    this.#capacity = p.capacity;
    this.#heads = Array.from({ length: priorities.count }, () => undefined);
    this.#tails = Array.from({ length: priorities.count }, () => undefined);
    this.#top = priorities.count;
    this.#now = check.finite(check.or(o.now, 0), "Queue now (ms)");
  }

  /** How many callers are waiting (not counting dropped ones not yet handed back). */
  get length(): number {
    return this.#length;
  }

  /** Whether the queue is standing at `now`: its sojourn has stayed above `target` for an `interval`. */
  standing(now: number): boolean {
    this.#refresh(now);
    return this.#standing;
  }

  /** How long the oldest waiter has waited at `now`, in milliseconds; 0 when nobody waits. */
  sojourn(now: number): number {
    const t = this.#refresh(now);
    return this.#oldest === undefined ? 0 : t - this.#oldest.since;
  }

  /**
   * Puts a caller in the queue at `now`.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param value - what to keep with it (how to resume the caller)
   * @param priority - its level (0 the most important) or name; left out, the fallback level
   * @returns its waiter, or `undefined` when the queue is full of waiters at least as important
   *   (or holds `capacity` dropped waiters not yet handed back by `dropped`)
   */
  push(now: number, value: T, priority?: Priority): Waiter<T> | undefined {
    const t = this.#refresh(now);
    const level = this.priorities.level(priority);
    if (this.#length >= this.#capacity) {
      const bottom = this.#bottom;
      if (bottom <= level || this.#evicted >= this.#capacity) return undefined;
      const victim = this.#heads[bottom] as Node<T>;
      this.#unlink(victim);
      victim.reason = "evicted";
      if (this.#evictedTail === undefined) this.#evictedHead = victim;
      else this.#evictedTail.next = victim;
      this.#evictedTail = victim;
      this.#evicted++;
    }
    const node = new Node(this, value, t, level);
    const newest = this.#newest;
    if (newest === undefined) this.#oldest = node;
    else {
      newest.newer = node;
      node.older = newest;
    }
    this.#newest = node;
    const tail = this.#tails[level];
    if (tail === undefined) this.#heads[level] = node;
    else {
      tail.next = node;
      node.prev = tail;
    }
    this.#tails[level] = node;
    this.#length++;
    if (level < this.#top) this.#top = level;
    if (level > this.#bottom) this.#bottom = level;
    return node;
  }

  /**
   * The waiter to give the next free place to, left in the queue (take it out with
   * {@link Queue.remove} once it has the place): from the most important level that has
   * waiters, its oldest, or its newest while the queue is standing (with `lifo`).
   *
   * @param now - the caller's clock reading, in milliseconds
   */
  next(now: number): Waiter<T> | undefined {
    this.#refresh(now);
    if (this.#length === 0) return undefined;
    return this.#standing && this.#lifo ? this.#tails[this.#top] : this.#heads[this.#top];
  }

  /**
   * Takes a waiter out: served, or its caller gave up. Nothing else changes.
   *
   * @param waiter - a waiter this queue's `push` answered
   * @param now - the caller's clock reading, in milliseconds; left out, the latest reading
   * @returns whether it was waiting here (false for one already out, or another queue's)
   */
  remove(waiter: Waiter<T>, now?: number): boolean {
    if (!(waiter instanceof Node) || (waiter as Node<T>).owner !== this) return false;
    this.#refresh(now);
    this.#unlink(waiter as Node<T>);
    return true;
  }

  /**
   * The next waiter the queue has given up on, taken out, for the caller to refuse: first those
   * evicted from a full queue, then the oldest if its wait has run out at `now` (`interval`, or
   * `target` once the queue is standing). Call it until it answers `undefined`.
   *
   * @param now - the caller's clock reading, in milliseconds
   */
  dropped(now: number): Waiter<T> | undefined {
    const t = this.#refresh(now);
    const evicted = this.#evictedHead;
    if (evicted !== undefined) {
      this.#evictedHead = evicted.next;
      if (this.#evictedHead === undefined) this.#evictedTail = undefined;
      evicted.next = undefined;
      this.#evicted--;
      return evicted;
    }
    const oldest = this.#oldest;
    if (oldest === undefined) return undefined;
    if (t < oldest.since + (this.#standing ? this.#target : this.#interval)) return undefined;
    this.#unlink(oldest);
    oldest.reason = "codel";
    return oldest;
  }

  /**
   * When `dropped` will next have a waiter to hand back if nothing else happens, in
   * milliseconds: `now` when it has one already, `Infinity` when nobody waits. Where an async
   * wrapper sets its one timer.
   *
   * @param now - the caller's clock reading, in milliseconds
   */
  due(now: number): number {
    const t = this.#refresh(now);
    if (this.#evictedHead !== undefined) return t;
    const oldest = this.#oldest;
    if (oldest === undefined) return Infinity;
    if (this.#standing) return Math.max(t, oldest.since + this.#target);
    // Its own wait runs out at `since + interval`, unless the queue stands before that, and the
    // wait shrinks to `target` (long past, by then).
    const above = this.#above === this.#above ? this.#above : oldest.since + this.#target;
    return Math.max(t, Math.min(oldest.since + this.#interval, above + this.#interval));
  }

  // Moves the clock on and updates whether the queue is standing. Every method that takes `now`
  // calls it first, so a change to the queue is seen at the reading it happens at.
  #refresh(now: number | undefined): number {
    const last = this.#now;
    if (typeof now === "number" && now > last && now < Infinity) this.#now = now;
    const t = this.#now;
    const oldest = this.#oldest;
    if (oldest === undefined || this.#standing) return t;
    const cross = oldest.since + this.#target;
    if (t <= cross) this.#above = Number.NaN;
    else {
      // Above since `cross`, unless the oldest changed after it (then since that change, no
      // earlier than the last reading).
      if (this.#above !== this.#above || cross > last) this.#above = cross > last ? cross : last;
      if (t >= this.#above + this.#interval) this.#standing = true;
    }
    return t;
  }

  #unlink(node: Node<T>): void {
    if (node.older === undefined) this.#oldest = node.newer;
    else node.older.newer = node.newer;
    if (node.newer === undefined) this.#newest = node.older;
    else node.newer.older = node.older;
    const level = node.level;
    if (node.prev === undefined) this.#heads[level] = node.next;
    else node.prev.next = node.next;
    if (node.next === undefined) this.#tails[level] = node.prev;
    else node.next.prev = node.prev;
    node.older = node.newer = node.prev = node.next = undefined;
    node.owner = undefined;
    if (--this.#length === 0) {
      this.#standing = false;
      this.#above = Number.NaN;
      this.#top = this.priorities.count;
      this.#bottom = -1;
      return;
    }
    if (this.#heads[level] !== undefined) return;
    const heads = this.#heads;
    if (level === this.#top) {
      let top = level + 1;
      while (heads[top] === undefined) top++;
      this.#top = top;
    }
    if (level === this.#bottom) {
      let bottom = level - 1;
      while (heads[bottom] === undefined) bottom--;
      this.#bottom = bottom;
    }
  }
}
