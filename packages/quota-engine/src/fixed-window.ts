// The fixed window on flat state: two numbers per key, the end of the open window (exclusive)
// and the units counted in it. A window covers [end − window, end); a fresh key has none open
// (end = -Infinity). A charge at or after the end opens a new window, ending where
// @tideward/limiters' Period would end it (`windowEnd`), for costs above one too.
import { windowEnd } from "@tideward/limiters/math";
import { EXHAUSTED, OK, OUT, TOO_LARGE } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/** Counts `cost` units at `t` if the window has room; the new state lands in OUT[0] (end), OUT[1] (used). */
export function windowDecide(rule: Rule, end: number, used: number, t: number, cost: number): Code {
  const capacity = rule.capacity;
  const open = t < end;
  const count = open ? used : 0;
  if (count + cost <= capacity) {
    const until = open ? end : windowEnd(t, rule.window, rule.align);
    OUT[0] = until;
    OUT[1] = count + cost;
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
  OUT[3] = end; // the window is open here: a closed one would have had room
  return EXHAUSTED;
}

/** Whether the window has closed at `t`, so that dropping it equals keeping it. */
export function windowIdle(end: number, t: number): boolean {
  return t >= end;
}
