// The fixed window on flat state: the units counted in the open window and the instant it ends
// (exclusive). A window covers [end − window, end); a fresh key has none open (end = -Infinity).
// A charge at or after the end opens a new window, ending where @tideward/limiters' Period would
// end it, for costs above one too: the formulas are the Period's own.
import { windowCount, windowEnd, windowFits } from "@tideward/limiters/math";
import { EXHAUSTED, OK, TOO_LARGE, step, take } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/** Counts `cost` units at `t` if the window has room; the new state is the units used and the window's end. */
export function windowDecide(rule: Rule, used: number, end: number, t: number, cost: number): Code {
  const capacity = rule.capacity;
  const count = windowCount(used, end, t);
  if (windowFits(count, cost, capacity)) {
    const until = t < end ? end : windowEnd(t, rule.window, rule.align);
    step.amount = count + cost;
    step.instant = until;
    step.remaining = capacity - count - cost;
    step.passAt = t;
    step.resetAt = until;
    return OK;
  }
  // A window settled in debt may count more than its capacity: none remaining, not fewer.
  step.remaining = count < capacity ? capacity - count : 0;
  step.resetAt = t < end ? end : t;
  if (cost > capacity) {
    step.passAt = Infinity;
    return TOO_LARGE;
  }
  step.passAt = end; // the window is open here: a closed one would have had room
  return EXHAUSTED;
}

/** Whether the window has closed at `t`, so that dropping it equals keeping it. */
export function windowIdle(end: number, t: number): boolean {
  return t >= end;
}

/**
 * Settles a window for `delta` units more (a top-up) or fewer (a refund, below 0) than were
 * counted in the window that ended at `opened`, at `t`. While that window is open, a refund lowers
 * its count and a top-up raises it (up to twice the capacity with `debt`, up to the capacity
 * without); once it has closed there is nothing to give back, and a top-up is counted in the
 * window open at `t` (opening one, as a charge would). The new state lands in `step`; returns the
 * units of a top-up not taken.
 */
export function windowAdjust(
  rule: Rule,
  used: number,
  end: number,
  t: number,
  delta: number,
  debt: boolean,
  opened: number,
): number {
  step.amount = used;
  step.instant = end;
  const most = debt ? 2 * rule.capacity : rule.capacity;
  if (t < end && end === opened) {
    if (delta <= 0) step.amount = used + delta > 0 ? used + delta : 0;
    else {
      const taken = take(delta, most - used);
      step.amount = used + taken;
      return delta - taken;
    }
    return 0;
  }
  if (delta <= 0) return 0;
  const count = windowCount(used, end, t);
  const taken = take(delta, most - count);
  if (taken > 0) {
    step.amount = count + taken;
    step.instant = t < end ? end : windowEnd(t, rule.window, rule.align);
  }
  return delta - taken;
}

/**
 * A window's state under `next` in place of `rule`, at `t`: it keeps its count (at most twice
 * `next`'s capacity, the most it may owe) and ends when it would have, or a window of `next`'s
 * length after `t` if that is sooner. Into `step`.
 */
export function windowRebase(rule: Rule, next: Rule, used: number, end: number, t: number): void {
  step.amount = used;
  step.instant = end;
  if (rule.capacity === next.capacity && rule.window === next.window && rule.align === next.align) return;
  if (!(t < end)) {
    step.amount = 0; // closed: nothing carries over
    return;
  }
  const most = 2 * next.capacity;
  if (used > most) step.amount = most;
  const latest = windowEnd(t, next.window, next.align);
  if (latest < end) step.instant = latest;
}
