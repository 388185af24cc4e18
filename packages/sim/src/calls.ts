// The run's two tables, as parallel typed arrays with free lists: the calls being made, and the
// attempts in flight. A row is named by a reference, its generation times SPAN plus its index,
// so an event that outlived its row (a timeout after the answer) is recognised and ignored.
import { ATTEMPT_BYTES, CALL_BYTES, formatCount, own } from "./memory";
import type { Budget } from "./memory";

/** Rows a table may hold at once: references must stay exact integers. */
export const SPAN = 4_194_304;

/** An attempt's flags: the client has heard (or stopped waiting), the server has finished with it. */
export const CLIENT_DONE = 1;
export const SERVER_DONE = 2;

const FIRST_SIZE = 256;

/** The calls being made: each call's key, cost, attempts and when it arrived. */
export class Calls {
  key = new Int32Array(FIRST_SIZE);
  cost = new Float64Array(FIRST_SIZE);
  /** Attempts made (hedges not counted). */
  made = new Int32Array(FIRST_SIZE);
  hedges = new Int32Array(FIRST_SIZE);
  /** Attempts out (sent, not yet heard). */
  out = new Int32Array(FIRST_SIZE);
  /** 1 once the call has ended (see {@link Calls.end}). */
  done = new Uint8Array(FIRST_SIZE);
  /** The last backoff wait, ms (for decorrelated jitter). */
  prev = new Float64Array(FIRST_SIZE);
  /** Retries made in a row at one instant, each after an attempt answered at once (see `RetryRule`, which writes it from a call's first retry on). */
  same = new Uint16Array(FIRST_SIZE);
  /** When the call arrived, ms. */
  start = new Float64Array(FIRST_SIZE);
  /** The reference of its latest attempt that is not a hedge (what its deadline times out). */
  current = new Float64Array(FIRST_SIZE);
  gen = new Float64Array(FIRST_SIZE);
  /** Rows in use: calls not yet ended, and ended ones with an attempt still out (a hedged copy). */
  live = 0;
  /** Calls not yet ended (in a success, or given up): what a run that stops short leaves unfinished. */
  pending = 0;
  #free = new Int32Array(FIRST_SIZE);
  #freeN = 0;
  #used = 0;
  readonly #budget: Budget;

  constructor(budget: Budget) {
    this.#budget = budget;
    budget.reserve(FIRST_SIZE * CALL_BYTES, "simulate: the call table");
  }

  /** A new call from `key` weighing `cost`, arriving at `now` (ms). */
  open(key: number, cost: number, now: number): number {
    let c: number;
    if (this.#freeN > 0) c = this.#free[--this.#freeN];
    else {
      c = this.#used++;
      if (c >= this.key.length) this.#grow();
    }
    this.key[c] = key;
    this.cost[c] = cost;
    this.made[c] = 0;
    this.hedges[c] = 0;
    this.out[c] = 0;
    this.done[c] = 0;
    this.prev[c] = 0;
    this.start[c] = now;
    this.live++;
    this.pending++;
    return c;
  }

  /** Call `c` has ended, in a success or given up; its row stays until every attempt of it is heard. */
  end(c: number): void {
    this.done[c] = 1;
    this.pending--;
  }

  /** Call `c` has ended and every attempt of it is heard: its row is free again. */
  close(c: number): void {
    this.gen[c]++;
    this.#free[this.#freeN++] = c;
    this.live--;
  }

  /** The reference of call `c` for an event. */
  ref(c: number): number {
    return this.gen[c] * SPAN + c;
  }

  /** The call a reference names, or -1 when it has ended since. */
  of(ref: number): number {
    const c = index(ref);
    return this.gen[c] * SPAN + c === ref ? c : -1;
  }

  #grow(): void {
    const n = this.key.length;
    if (2 * n > SPAN) throw own(new RangeError(`simulate: more than ${formatCount(SPAN)} calls being made at once`));
    this.#budget.reserve(
      n * CALL_BYTES,
      `simulate: ${formatCount(2 * n)} calls being made at once (the traffic outruns the backend, or retries wait long)`,
    );
    this.key = growI32(this.key, 2 * n);
    this.cost = growF64(this.cost, 2 * n);
    this.made = growI32(this.made, 2 * n);
    this.hedges = growI32(this.hedges, 2 * n);
    this.out = growI32(this.out, 2 * n);
    this.done = growU8(this.done, 2 * n);
    this.prev = growF64(this.prev, 2 * n);
    this.same = growU16(this.same, 2 * n);
    this.start = growF64(this.start, 2 * n);
    this.current = growF64(this.current, 2 * n);
    this.gen = growF64(this.gen, 2 * n);
    this.#free = growI32(this.#free, 2 * n);
  }
}

/** The attempts in flight: each one's call, key, start and flags. */
export class Attempts {
  /** Attempts not yet closed: sent, and not yet done with on both sides. */
  live = 0;
  call = new Int32Array(FIRST_SIZE);
  key = new Int32Array(FIRST_SIZE);
  /** Its call's cost (the call's row may be reused before the server sees the attempt). */
  cost = new Float64Array(FIRST_SIZE);
  /** When the client sent it, ms. */
  start = new Float64Array(FIRST_SIZE);
  flags = new Uint8Array(FIRST_SIZE);
  gen = new Float64Array(FIRST_SIZE);
  #free = new Int32Array(FIRST_SIZE);
  #freeN = 0;
  #used = 0;
  readonly #budget: Budget;
  readonly #rowBytes: number;
  readonly #grown: (n: number) => void;

  /** @param tokens - bytes each attempt holds besides its row (its policies' tokens); `grown` hears every new size */
  constructor(budget: Budget, tokens: number, grown: (n: number) => void) {
    this.#budget = budget;
    this.#rowBytes = ATTEMPT_BYTES + tokens;
    this.#grown = grown;
    budget.reserve(FIRST_SIZE * this.#rowBytes, "simulate: the attempt table");
  }

  /** A new attempt of call `c` from `key` weighing `cost`, sent at `now` (ms). */
  open(c: number, key: number, cost: number, now: number): number {
    let a: number;
    if (this.#freeN > 0) a = this.#free[--this.#freeN];
    else {
      a = this.#used++;
      if (a >= this.call.length) this.#grow();
    }
    this.live++;
    this.call[a] = c;
    this.key[a] = key;
    this.cost[a] = cost;
    this.start[a] = now;
    this.flags[a] = 0;
    return a;
  }

  close(a: number): void {
    this.gen[a]++;
    this.#free[this.#freeN++] = a;
    this.live--;
  }

  ref(a: number): number {
    return this.gen[a] * SPAN + a;
  }

  /** The attempt a reference names, or -1 when it has been closed since. */
  of(ref: number): number {
    const a = index(ref);
    return this.gen[a] * SPAN + a === ref ? a : -1;
  }

  #grow(): void {
    const n = this.call.length;
    if (2 * n > SPAN) throw own(new RangeError(`simulate: more than ${formatCount(SPAN)} attempts in flight at once`));
    this.#budget.reserve(
      n * this.#rowBytes,
      `simulate: ${formatCount(2 * n)} attempts in flight at once (the backend cannot keep up: its queue or its latency grows without end)`,
    );
    this.call = growI32(this.call, 2 * n);
    this.key = growI32(this.key, 2 * n);
    this.cost = growF64(this.cost, 2 * n);
    this.start = growF64(this.start, 2 * n);
    this.flags = growU8(this.flags, 2 * n);
    this.gen = growF64(this.gen, 2 * n);
    this.#free = growI32(this.#free, 2 * n);
    this.#grown(2 * n);
  }
}

/**
 * The row a reference names: `ref % SPAN`, by its low bits. A reference is a whole number below
 * 2^53 and SPAN a power of two dividing 2^32, so the low 32 bits `&` reads (past 2^31 a float's
 * modulo would be a slow division) hold the same remainder; and a reference names row `i` of
 * generation `g` exactly when `g · SPAN + i` is it, every step exact in a double.
 */
function index(ref: number): number {
  return ref & (SPAN - 1);
}

function growI32(a: Int32Array, n: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}

function growF64(a: Float64Array, n: number): Float64Array<ArrayBuffer> {
  const b = new Float64Array(n);
  b.set(a);
  return b;
}

function growU16(a: Uint16Array, n: number): Uint16Array<ArrayBuffer> {
  const b = new Uint16Array(n);
  b.set(a);
  return b;
}

function growU8(a: Uint8Array, n: number): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(n);
  b.set(a);
  return b;
}
