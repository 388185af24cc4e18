import { slackOf } from "@tideward/limiters/math";
import { oneNumber } from "./one-number";
import type { LimitSpec } from "./limit";

/**
 * A limit's numbers as the algorithms read them on every check: the spec's own fields, and the
 * numbers derived from them once, the way `@tideward/limiters` derives its own (a `Bucket` of rate
 * `refill · 1000 / window` a second and burst `capacity`, a `Gcra` of that rate and `burst`).
 */
export class Rule {
  readonly name: string;
  readonly capacity: number;
  readonly refill: number;
  readonly window: number;
  readonly burst: number;
  readonly align: boolean;
  /** Units regained per millisecond (`refill / window`): the bucket's refill rate. */
  readonly perMs: number;
  /** GCRA's emission interval: ms per unit (`window / refill`). */
  readonly interval: number;
  /** GCRA's tolerance: `burst · interval`, in ms. */
  readonly tau: number;
  /** How far GCRA's TAT may run ahead of now after a charge, in ms: `tau` plus the slack. */
  readonly reach: number;
  /** Tokens a bucket forgives when comparing (`slackOf(capacity)`, as `@tideward/limiters` forgives). */
  readonly bucketSlack: number;
  /**
   * Whether a bucket of this limit keeps one number of state, the instant it is full again (see
   * `./one-number`): when `window / refill`, the ms a token, is a whole number of 2^-7 ms and
   * the bucket's depth in time is at most 2^44 ms. Otherwise it keeps tokens and the instant they
   * were counted.
   */
  readonly oneNumber: boolean;
  /** Milliseconds a token refills in, for a bucket of one number: `interval`, `window / refill`. */
  readonly tick: number;
  /** The bucket's depth in time, `capacity · tick` (ms): how far "full again at" may run ahead of now. */
  readonly bucketTau: number;
  /** How far "full again at" may run ahead of now after a charge (ms): `bucketTau` plus the slack. */
  readonly bucketReach: number;
  /** Milliseconds a bucket of one number forgives when comparing (`slackOf(capacity) · tick`). */
  readonly bucketSlackMs: number;
  /** Milliseconds GCRA forgives when comparing (`slackOf(burst) · interval`). */
  readonly gcraSlack: number;
  /**
   * How far "full again at" may run ahead of now with the bucket owing its whole capacity (ms):
   * `2 · bucketTau` plus the slack. A top-up in debt takes a bucket down to `−capacity` at most.
   */
  readonly bucketMost: number;
  /** How far GCRA's TAT may run ahead of now with the flow owing a whole burst (ms): `2 · tau` plus the slack. */
  readonly gcraMost: number;

  constructor(spec: LimitSpec) {
    this.name = spec.name;
    this.capacity = spec.capacity;
    this.refill = spec.refill;
    this.window = spec.window;
    this.burst = spec.burst;
    this.align = spec.align;
    this.perMs = spec.refill / spec.window;
    this.interval = spec.window / spec.refill;
    this.tau = spec.burst * this.interval;
    this.bucketSlack = slackOf(spec.capacity);
    this.tick = this.interval;
    this.oneNumber = oneNumber(this.tick, spec.capacity);
    this.bucketTau = spec.capacity * this.tick;
    this.bucketSlackMs = this.bucketSlack * this.tick;
    this.bucketReach = this.bucketTau + this.bucketSlackMs;
    this.gcraSlack = slackOf(spec.burst) * this.interval;
    this.reach = this.tau + this.gcraSlack;
    this.bucketMost = 2 * this.bucketTau + this.bucketSlackMs;
    this.gcraMost = 2 * this.tau + this.gcraSlack;
  }
}
