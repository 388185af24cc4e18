import { check } from "@tideward/time/internal";

/** What an event does when its time comes: called with the event's time (ms) and its argument. */
export type Fire = (now: number, arg: number) => void;

/** Whether an event can be queued: a time of milliseconds (not NaN), a handler, a number argument. */
export function isEvent(time: unknown, fire: unknown, arg: unknown): boolean {
  return typeof time === "number" && time === time && typeof fire === "function" && typeof arg === "number";
}

/**
 * Refuses an event `what` (`"EventQueue.push"`) was handed that it cannot hold, naming the part:
 * a time that is not a number of milliseconds (NaN, a BigInt…), a handler that is not a function,
 * an argument that is not a number. A queue that took them would throw from deep inside, or
 * never fire the event and whatever waits behind it.
 */
export function badEvent(time: unknown, fire: unknown, arg: unknown, what: string): never {
  if (typeof time !== "number" || Number.isNaN(time))
    throw new (typeof time === "number" ? RangeError : TypeError)(
      `${what} time must be a number of milliseconds, got ${check.describe(time)}`,
    );
  check.fn(fire, `${what} fire`);
  throw new TypeError(`${what} arg must be a number, got ${check.describe(arg)}`);
}

/** Told before a queue grows: the bytes its new room takes, and how many events wait with the one being added. */
export type Grow = (bytes: number, events: number) => void;

// What a waiting event's room costs, bytes: in the heap its time, slot, sequence, argument,
// handler and free-list entry; in a channel its time, sequence, argument and handler.
const HEAP_EVENT_BYTES = 40;
const CHANNEL_EVENT_BYTES = 32;

// Kept outside the class so that watching a queue is no part of its public shape.
const watchers = new WeakMap<EventQueue, Grow>();

/**
 * Has `grow` told before `queue` (its heap or a channel) grows, so an owner can charge the
 * growth to a memory ceiling, or refuse it by throwing: the queue is left as it was then.
 */
export function watchGrowth(queue: EventQueue, grow: Grow): void {
  watchers.set(queue, grow);
}

/**
 * A priority queue of events ordered by time, ties broken by the order they were scheduled in,
 * so a run never depends on how a heap happens to break a tie.
 *
 * A four-ary heap of times and record slots over typed arrays, the records (sequence, argument,
 * handler) in slots of their own: pushing and popping allocate nothing once the arrays have
 * grown to the run's peak, a heap half as deep as a binary one moves each event half as often,
 * and a move is two numbers, not four. Which of several correct heaps is used changes no run:
 * no two events share a time and a sequence, so the order they come out in is the same.
 */
export class EventQueue {
  // The heap: each entry's time and its record's slot. A record (sequence, argument, handler)
  // stays in its slot from push to pop; free slots are a stack.
  #time = new Float64Array(64);
  #slot = new Int32Array(64);
  #seq = new Float64Array(64);
  #arg = new Float64Array(64);
  #fire: (Fire | undefined)[] = new Array<Fire | undefined>(64).fill(undefined);
  #free = new Int32Array(64).map((_, i) => 63 - i);
  #freeN = 64;
  #size = 0;
  #next = 0;
  // The lane: one event kept beside the heap (Infinity when none), for a process that always has
  // exactly one waiting, so its events skip the heap's sifting. Ordered with the heap's events
  // by the same time and sequence, so using it changes no run.
  #laneTime = Infinity;
  #laneSeq = 0;
  #laneArg = 0;
  #laneFire: Fire | undefined;
  // Channels: queues of events pushed in time order (a fixed timeout's, a call's deadline), each
  // a ring beside the heap, so they cost no sifting. Ordered with the heap's events by the same
  // time and sequence, so using one changes no run.
  readonly #channels: Channel[] = [];
  // The channel whose head comes first (-1 when all are empty), and that head's time and
  // sequence: kept up to date as heads change, so a pop compares three candidates, not every
  // channel. A channel's head changes only when it is taken or the channel was empty.
  #first = -1;
  #firstTime = Infinity;
  #firstSeq = Infinity;
  // The event popped last, read by the simulator right after `pop`.
  /** The argument of the event {@link EventQueue.pop} returned last. */
  arg = 0;
  /** The time (ms) of the event {@link EventQueue.pop} returned last. */
  time = 0;

  /** How many events are waiting, the lane's and the channels' included. */
  get size(): number {
    let n = this.#size + (this.#laneTime === Infinity ? 0 : 1);
    for (const c of this.#channels) n += c.length;
    return n;
  }

  /** The time (ms) of the earliest waiting event, or `Infinity` when none is. */
  peek(): number {
    let t = this.#size > 0 ? this.#time[0] : Infinity;
    if (this.#firstTime < t) t = this.#firstTime;
    return this.#laneTime < t ? this.#laneTime : t;
  }

  /**
   * Adds an event at `time` (ms) to channel `channel` (0 to 7): for a process whose events come
   * in time order, such as a timeout of fixed length. An event earlier than the channel's last
   * goes to the heap instead, so the order is always right; it fires exactly when
   * {@link EventQueue.push} would have made it fire.
   */
  channel(channel: number, time: number, fire: Fire, arg: number): void {
    if (!isEvent(time, fire, arg)) badEvent(time, fire, arg, "EventQueue.channel");
    let c = this.#channels[channel];
    if (c === undefined) {
      if (!isChannel(channel))
        throw new RangeError(`EventQueue channel must be a whole number from 0 to 7, got ${check.describe(channel)}`);
      while (this.#channels.length <= channel) this.#channels.push(new Channel());
      c = this.#channels[channel];
    }
    if (time < c.last) {
      this.push(time, fire, arg);
      return;
    }
    if (c.length === c.time.length) watchers.get(this)?.(c.length * CHANNEL_EVENT_BYTES, this.size + 1);
    const seq = this.#next++;
    c.add(time, seq, fire, arg);
    // A new head only if the channel was empty; its sequence is the newest, so a tie loses.
    if (c.length === 1 && (this.#first < 0 || time < this.#firstTime)) {
      this.#first = channel;
      this.#firstTime = time;
      this.#firstSeq = seq;
    }
  }

  /**
   * Sets the lane's one event at `time` (ms), replacing the one waiting there if any: for a
   * process that always has exactly one event waiting (a traffic source). It fires in the same
   * order it would have from the heap. A `time` of `Infinity` empties the lane.
   */
  lane(time: number, fire: Fire, arg: number): void {
    if (!isEvent(time, fire, arg)) badEvent(time, fire, arg, "EventQueue.lane");
    this.#laneTime = time;
    this.#laneSeq = this.#next++;
    this.#laneArg = arg;
    this.#laneFire = fire;
  }

  /** Adds an event at `time` (ms). */
  push(time: number, fire: Fire, arg: number): void {
    if (!isEvent(time, fire, arg)) badEvent(time, fire, arg, "EventQueue.push");
    if (this.#size === this.#time.length) this.#grow();
    const seq = this.#next++;
    const slot = this.#free[--this.#freeN];
    const seqs = this.#seq;
    seqs[slot] = seq;
    this.#arg[slot] = arg;
    this.#fire[slot] = fire;
    const times = this.#time;
    const slots = this.#slot;
    let i = this.#size++;
    while (i > 0) {
      const parent = (i - 1) >> 2;
      const pt = times[parent];
      if (pt < time || (pt === time && seqs[slots[parent]] < seq)) break;
      times[i] = pt;
      slots[i] = slots[parent];
      i = parent;
    }
    times[i] = time;
    slots[i] = slot;
  }

  /**
   * Takes the earliest event out and returns its handler, leaving its time and argument in
   * {@link EventQueue.time} and {@link EventQueue.arg}; `undefined` when the queue is empty, or
   * when `before` is given and the earliest event is not before it (then nothing is taken).
   *
   * @param before - take an event only if its time is earlier than this, ms
   */
  pop(before?: number): Fire | undefined {
    if (before !== undefined && (typeof before !== "number" || before !== before))
      throw new (typeof before === "number" ? RangeError : TypeError)(
        `EventQueue.pop before must be a number of milliseconds, got ${check.describe(before)}`,
      );
    const n = this.#size;
    // The earliest of three candidates by time, then sequence: the heap's top, the lane's event
    // and the first channel head.
    let from = n > 0 ? HEAP : NONE;
    let bt = n > 0 ? this.#time[0] : Infinity;
    let bs = n > 0 ? this.#seq[this.#slot[0]] : Infinity;
    const lt = this.#laneTime;
    if (lt !== Infinity && (lt < bt || (lt === bt && this.#laneSeq < bs))) {
      from = LANE;
      bt = lt;
      bs = this.#laneSeq;
    }
    if (this.#first >= 0) {
      const ct = this.#firstTime;
      if (ct < bt || (ct === bt && this.#firstSeq < bs)) {
        from = CHANNEL;
        bt = ct;
      }
    }
    if (from === NONE || (before !== undefined && !(bt < before))) return undefined;
    if (from === LANE) {
      this.time = lt;
      this.arg = this.#laneArg;
      this.#laneTime = Infinity;
      return this.#laneFire;
    }
    if (from === CHANNEL) {
      const c = this.#channels[this.#first];
      this.time = bt;
      this.arg = c.arg[c.head];
      const fire = c.take();
      this.#rescan();
      return fire;
    }
    const times = this.#time;
    const slots = this.#slot;
    const seqs = this.#seq;
    const top = slots[0];
    const fire = this.#fire[top];
    this.#fire[top] = undefined;
    this.#free[this.#freeN++] = top;
    this.time = bt;
    this.arg = this.#arg[top];
    const last = n - 1;
    this.#size = last;
    if (last > 0) {
      const t = times[last];
      const sl = slots[last];
      const s = seqs[sl];
      let i = 0;
      for (;;) {
        const first = 4 * i + 1;
        if (first >= last) break;
        let child = first;
        let ct = times[first];
        const end = first + 4 < last ? first + 4 : last;
        for (let k = first + 1; k < end; k++) {
          const kt = times[k];
          if (kt < ct || (kt === ct && seqs[slots[k]] < seqs[slots[child]])) {
            child = k;
            ct = kt;
          }
        }
        if (t < ct || (t === ct && s < seqs[slots[child]])) break;
        times[i] = ct;
        slots[i] = slots[child];
        i = child;
      }
      times[i] = t;
      slots[i] = sl;
    }
    return fire;
  }

  /** Forgets every waiting event. */
  clear(): void {
    for (const c of this.#channels) c.clear();
    this.#first = -1;
    this.#firstTime = Infinity;
    this.#firstSeq = Infinity;
    this.#fire.fill(undefined);
    this.#free = new Int32Array(this.#time.length).map((_, i) => this.#time.length - 1 - i);
    this.#freeN = this.#time.length;
    this.#size = 0;
    this.#laneTime = Infinity;
    this.#laneFire = undefined;
  }

  /** Finds the channel whose head comes first, after a head was taken. */
  #rescan(): void {
    const channels = this.#channels;
    let first = -1;
    let ft = Infinity;
    let fs = Infinity;
    for (let i = 0; i < channels.length; i++) {
      const c = channels[i];
      if (c.length === 0) continue;
      const t = c.time[c.head];
      const q = c.seq[c.head];
      if (first < 0 || t < ft || (t === ft && q < fs)) {
        first = i;
        ft = t;
        fs = q;
      }
    }
    this.#first = first;
    this.#firstTime = ft;
    this.#firstSeq = fs;
  }

  #grow(): void {
    const old = this.#time.length;
    const n = old * 2;
    watchers.get(this)?.(old * HEAP_EVENT_BYTES, this.size + 1);
    const time = new Float64Array(n);
    time.set(this.#time);
    const slot = new Int32Array(n);
    slot.set(this.#slot);
    const seq = new Float64Array(n);
    seq.set(this.#seq);
    const arg = new Float64Array(n);
    arg.set(this.#arg);
    this.#time = time;
    this.#slot = slot;
    this.#seq = seq;
    this.#arg = arg;
    const fire = this.#fire;
    for (let i = fire.length; i < n; i++) fire.push(undefined);
    // Every slot is taken when the heap is full: the new ones are all free.
    const free = new Int32Array(n);
    for (let i = 0; i < old; i++) free[i] = n - 1 - i;
    this.#free = free;
    this.#freeN = old;
  }
}

// Where the event a pop takes comes from.
const NONE = 0;
const HEAP = 1;
const LANE = 2;
const CHANNEL = 3;

/** Whether `channel` names one of the eight channels, 0 to 7. */
export function isChannel(channel: unknown): boolean {
  return typeof channel === "number" && channel >= 0 && channel < 8 && (channel | 0) === channel;
}

/** One channel: a ring of events in time order. */
class Channel {
  time = new Float64Array(64);
  seq = new Float64Array(64);
  arg = new Float64Array(64);
  fire: (Fire | undefined)[] = new Array<Fire | undefined>(64).fill(undefined);
  head = 0;
  length = 0;
  /** The time of the last event added (ms). */
  last = -Infinity;

  add(time: number, seq: number, fire: Fire, arg: number): void {
    if (this.length === this.time.length) this.#grow();
    const i = (this.head + this.length) & (this.time.length - 1);
    this.time[i] = time;
    this.seq[i] = seq;
    this.arg[i] = arg;
    this.fire[i] = fire;
    this.length++;
    this.last = time;
  }

  /** Takes the head out and returns its handler. */
  take(): Fire {
    const i = this.head;
    const fire = this.fire[i] as Fire;
    this.fire[i] = undefined;
    this.head = (i + 1) & (this.time.length - 1);
    this.length--;
    return fire;
  }

  clear(): void {
    this.fire.fill(undefined);
    this.head = 0;
    this.length = 0;
    this.last = -Infinity;
  }

  #grow(): void {
    const n = this.time.length;
    const time = new Float64Array(2 * n);
    const seq = new Float64Array(2 * n);
    const arg = new Float64Array(2 * n);
    const fire = new Array<Fire | undefined>(2 * n).fill(undefined);
    for (let k = 0; k < this.length; k++) {
      const i = (this.head + k) & (n - 1);
      time[k] = this.time[i];
      seq[k] = this.seq[i];
      arg[k] = this.arg[i];
      fire[k] = this.fire[i];
    }
    this.time = time;
    this.seq = seq;
    this.arg = arg;
    this.fire = fire;
    this.head = 0;
  }
}
