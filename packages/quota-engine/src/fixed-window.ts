// The fixed window on flat state: the units counted in the open window and the instant it ends
// (exclusive). A window covers [end − window, end); a fresh key has none open (end = -Infinity).
// A charge at or after the end opens a new window, ending where @tideward/limiters' Period would
// end it, for costs above one too: the formulas are the Period's own.
import { windowCount, windowEnd, windowFits } from "@tideward/limiters/math";
import { EXHAUSTED, OK, TOO_LARGE, step } from "./outcome";
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
  step.remaining = capacity - count;
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
