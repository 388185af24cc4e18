// The in-process engine's three algorithm steps (quota-engine's bucket.ts, fixed-window.ts and
// gcra.ts), on the two numbers a Redis key holds, an amount and an instant as the engine's slots
// hold them: a bucket's tokens and when they were counted, a window's units used and when it
// ends, a GCRA flow's lead and its latest admission. The scripts decide and write, and reply with
// the state they read; the figures of each decision are computed here from that state, with the
// same @tideward/limiters/math formulas the in-process engine calls, so they are its figures bit
// for bit (test/engine-crosscheck.test.ts pins it at both clock scales).
import {
  bucketFits,
  bucketFull,
  bucketLevel,
  bucketReady,
  bucketWhole,
  gcraFits,
  gcraLead,
  gcraReady,
  gcraRest,
  gcraWhole,
  slackOf,
  windowCount,
  windowEnd,
  windowFits,
} from "@tideward/limiters/math";
import type { LimitSpec } from "@tideward/quota-engine";

export const BUCKET = 0;
export const WINDOW = 1;
export const GCRA = 2;

export const OK = 0;
export const EXHAUSTED = 1;
export const TOO_LARGE = 2;
export const UNKNOWN_LIMIT = 3;
export const NOT_COMMITTED = 4;

/**
 * A step's results: `[0]`, `[1]` the key's new state, `[2]` whole units remaining, `[3]` the
 * instant (ms) at which the same charge would pass (`Infinity`: never), `[4]` the instant at
 * which the key is back to a fresh key's state. Read right after the step that wrote them.
 */
export const OUT = new Float64Array(5);

/** A limit's numbers as the in-process engine derives them from its spec (quota-engine's Rule). */
export class Numbers {
  readonly capacity: number;
  readonly window: number;
  readonly burst: number;
  readonly align: boolean;
  /** Units regained per millisecond: `refill / window`. */
  readonly perMs: number;
  /** Milliseconds per unit: `window / refill`. */
  readonly interval: number;
  /** GCRA's tolerance, `burst · interval`, in ms. */
  readonly tau: number;
  /** How far GCRA may run ahead after a charge, in ms: `tau` plus the slack. */
  readonly reach: number;
  /** Tokens a bucket forgives. */
  readonly bucketSlack: number;
  /** Milliseconds GCRA forgives. */
  readonly gcraSlack: number;

  constructor(spec: LimitSpec) {
    this.capacity = spec.capacity;
    this.window = spec.window;
    this.burst = spec.burst;
    this.align = spec.align;
    this.perMs = spec.refill / spec.window;
    this.interval = spec.window / spec.refill;
    this.tau = spec.burst * this.interval;
    this.bucketSlack = slackOf(spec.capacity);
    this.gcraSlack = slackOf(spec.burst) * this.interval;
    this.reach = this.tau + this.gcraSlack;
  }
}

/** A fresh key's amount: a full bucket, an empty window, a flow nothing ahead. */
export function freshA(kind: number, r: Numbers): number {
  return kind === BUCKET ? r.capacity : 0;
}

/** A fresh key's instant at `t`: counted at t, no window open, at rest at t. */
export function freshB(kind: number, t: number): number {
  return kind === WINDOW ? -Infinity : t;
}

/** One step of `kind` on state (amount `a`, instant `b`) at `t` for `cost`; results in {@link OUT}. */
export function decide(kind: number, r: Numbers, a: number, b: number, t: number, cost: number): number {
  return kind === BUCKET
    ? bucketStep(r, a, b, t, cost)
    : kind === WINDOW
      ? windowStep(r, a, b, t, cost)
      : gcraStep(r, a, b, t, cost);
}

function bucketStep(r: Numbers, tokens: number, at: number, t: number, cost: number): number {
  const { perMs, capacity, bucketSlack } = r;
  const level = bucketLevel(tokens, at, t, perMs, capacity);
  if (bucketFits(level, cost, capacity, bucketSlack)) {
    const left = level - cost;
    const since = t > at ? t : at;
    OUT[0] = left;
    OUT[1] = since;
    OUT[2] = bucketWhole(left, capacity, bucketSlack);
    OUT[3] = t;
    OUT[4] = bucketFull(left, since, t, perMs, capacity, bucketSlack);
    return OK;
  }
  OUT[2] = bucketWhole(level, capacity, bucketSlack);
  OUT[4] = bucketFull(tokens, at, t, perMs, capacity, bucketSlack);
  OUT[3] = bucketReady(tokens, at, t, cost, perMs, capacity, bucketSlack);
  return cost > capacity ? TOO_LARGE : EXHAUSTED;
}

function windowStep(r: Numbers, used: number, end: number, t: number, cost: number): number {
  const capacity = r.capacity;
  const open = t < end;
  const count = windowCount(used, end, t);
  if (windowFits(count, cost, capacity)) {
    const until = open ? end : windowEnd(t, r.window, r.align);
    OUT[0] = count + cost;
    OUT[1] = until;
    OUT[2] = capacity - count - cost;
    OUT[3] = t;
    OUT[4] = until;
    return OK;
  }
  OUT[2] = capacity - count;
  OUT[4] = open ? end : t;
  if (cost > capacity) {
    OUT[3] = Infinity;
    return TOO_LARGE;
  }
  OUT[3] = end;
  return EXHAUSTED;
}

function gcraStep(r: Numbers, ahead: number, at: number, t: number, cost: number): number {
  const { interval, burst, gcraSlack } = r;
  const lead = gcraLead(at, ahead, t);
  if (cost <= burst && gcraFits(lead, cost, interval, r.reach)) {
    const next = lead + cost * interval;
    OUT[0] = next;
    OUT[1] = t;
    OUT[2] = gcraWhole(next, interval, burst, gcraSlack);
    OUT[3] = t;
    OUT[4] = gcraRest(t, next, t);
    return OK;
  }
  OUT[2] = gcraWhole(lead, interval, burst, gcraSlack);
  OUT[4] = gcraRest(at, ahead, t);
  if (cost > burst) {
    OUT[3] = Infinity;
    return TOO_LARGE;
  }
  OUT[3] = gcraReady(at, ahead, t, cost, interval, r.tau, r.reach);
  return EXHAUSTED;
}

/**
 * A script's reply as bytes. Clients answer bulk strings as a `Buffer` (ioredis's `…Buffer`
 * commands, node-redis with a type mapping); any other `Uint8Array` is viewed as one.
 *
 * @throws TypeError when the client answered text: the state would have been decoded as UTF-8
 */
export function bytes(reply: unknown): Buffer {
  if (Buffer.isBuffer(reply)) return reply;
  if (reply instanceof Uint8Array) return Buffer.from(reply.buffer, reply.byteOffset, reply.byteLength);
  throw new TypeError(
    `[tideward] [redis] a ScriptClient must answer a script's bulk-string reply as bytes (a Buffer or Uint8Array), got ${typeof reply}: see ioredisClient and nodeRedisClient`,
  );
}
