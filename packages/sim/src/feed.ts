import { check } from "@tideward/time/internal";
import { SPAN } from "./calls";
import { formatCount } from "./memory";
import type { Arrivals, Traffic, TrafficContext } from "./traffic";
import { TICK } from "./watch";
import type { Watch } from "./watch";

/**
 * Arrivals at one instant in a row past which a traffic is taken not to advance: as many calls as
 * a run can hold at once (the scenarios' largest herd is 100 000), and about a second's work.
 */
export const MAX_SAME = SPAN;

/**
 * A run's traffic, opened, its every answer checked before the run uses it: a first time at or
 * after the start, then times that never go back, keys among the traffic's, finite costs, and
 * at most {@link MAX_SAME} arrivals at one instant. Each check throws naming what came.
 */
export class Feed {
  /** The key and cost of the arrival {@link Feed.take} was last asked for. */
  key = 0;
  cost = 1;
  /** The first arrival's time, ms. */
  readonly first: number;
  readonly #arrivals: Arrivals;
  readonly #keys: number;
  readonly #end: number;
  #last: number;
  #same = 0;
  readonly #watch: Watch | undefined;
  // Arrivals left before the watch is told: a small integer either way, so the count stays cheap
  // to keep (with no watch, it only starts over).
  #untilTick: number;

  /** @param watch - the running scenario's, told of the calls offered every {@link TICK} and at {@link Feed.finish} */
  constructor(traffic: Traffic, context: TrafficContext, keys: number, watch?: Watch) {
    this.#keys = keys;
    this.#watch = watch;
    this.#untilTick = TICK;
    this.#end = context.end;
    const arrivals = traffic.open(context);
    if (arrivals === null || typeof arrivals !== "object" || typeof arrivals.next !== "function")
      throw new TypeError(
        `the traffic's open must return arrivals (an object with next), got ${check.describe(arrivals)}`,
      );
    this.#arrivals = arrivals;
    const first = arrivals.next();
    if (!(typeof first === "number" && first >= context.start))
      throw new RangeError(
        `the traffic's first arrival must be a time at or after the run's start (${context.start} ms), got ${check.describe(first)}`,
      );
    this.first = first;
    this.#last = context.start;
  }

  /**
   * The arrival due at `now`: sets {@link Feed.key} and {@link Feed.cost}, and returns when the
   * next one is due (ms; at or past the run's end for none in the run).
   */
  take(now: number): number {
    const arrivals = this.#arrivals;
    const key = arrivals.key;
    const cost = arrivals.cost;
    if (!(key >>> 0 === key && key < this.#keys))
      throw new RangeError(
        `the traffic gave key ${check.describe(key)}; keys are whole numbers from 0 to ${this.#keys - 1}`,
      );
    if (!(typeof cost === "number" && cost >= 0 && cost < Infinity))
      throw new RangeError(`the traffic gave a cost of ${check.describe(cost)}; a cost is a finite number, 0 or more`);
    const next = arrivals.next();
    if (!(typeof next === "number" && next >= now))
      throw new RangeError(
        `the traffic's next arrival must be a time no earlier than the last (${now} ms), got ${check.describe(next)}`,
      );
    if (next < this.#end) {
      if (next !== this.#last) this.#same = 0;
      else if (++this.#same > MAX_SAME)
        throw new RangeError(
          `the traffic gave more than ${formatCount(MAX_SAME)} arrivals at one instant (${next} ms): it does not advance, or its spacing is below what the clock resolves there`,
        );
      this.#last = next;
    }
    this.key = key;
    this.cost = cost;
    if (--this.#untilTick === 0) {
      this.#untilTick = TICK;
      this.#watch?.add(TICK);
    }
    return next;
  }

  /** The run is over: the watch hears of the calls offered since it was last told. */
  finish(): void {
    this.#watch?.add(TICK - this.#untilTick);
  }
}
