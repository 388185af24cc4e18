// The fixed window on flat state: two numbers per key, the instant the open window started and
// the units counted in it. A window covers [start, start + window); a fresh key has no window
// open (start = -Infinity). A charge at or after the end opens a new window: at that instant, or
// with `align` at the last multiple of `window`.
import { EXHAUSTED, OK, OUT, TOO_LARGE } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/** Counts `cost` units at `t` if the window has room; the new state lands in OUT[0] (start), OUT[1] (used). */
export function windowDecide(rule: Rule, start: number, used: number, t: number, cost: number): Code {
  const width = rule.window;
  const capacity = rule.capacity;
  const open = t < start + width;
  const count = open ? used : 0;
  if (count + cost <= capacity) {
    const from = open ? start : rule.align ? Math.floor(t / width) * width : t;
    OUT[0] = from;
    OUT[1] = count + cost;
    OUT[2] = capacity - count - cost;
    OUT[3] = 0;
    OUT[4] = from + width - t;
    return OK;
  }
  OUT[2] = capacity - count;
  OUT[4] = open ? start + width - t : 0;
  if (cost > capacity) {
    OUT[3] = Infinity;
    return TOO_LARGE;
  }
  OUT[3] = start + width - t; // the window is open here: a closed one would have had room
  return EXHAUSTED;
}

/** Whether the window has closed at `t`, so that dropping it equals keeping it. */
export function windowIdle(rule: Rule, start: number, t: number): boolean {
  return t >= start + rule.window;
}
