// The three algorithms behind one small dispatch, so that the engine, the slot tables and the
// snapshot code treat a key's state alike: an amount and an instant, two numbers a slot.
//
// | kind   | amount              | instant                          | a fresh key       |
// | ------ | ------------------- | -------------------------------- | ----------------- |
// | bucket | tokens held         | when they were counted           | capacity, now     |
// | bucket of one number | 0     | when it is full again            | 0, now            |
// | window | units used          | when the open window ends        | 0, -Infinity      |
// | gcra   | ms ahead of schedule | the latest admission            | 0, now            |
import { bucketAdjust, bucketDecide, bucketIdle, bucketRebase } from "./bucket";
import { windowAdjust, windowDecide, windowIdle, windowRebase } from "./fixed-window";
import { gcraAdjust, gcraDecide, gcraIdle, gcraRebase } from "./gcra";
import { BUCKET, WINDOW } from "./kinds";
import type { Kind } from "./kinds";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/** A fresh key's amount: a full bucket (of one number: nothing kept), an empty window, a flow nothing ahead. */
export function freshAmount(kind: Kind, rule: Rule): number {
  return kind === BUCKET && !rule.oneNumber ? rule.capacity : 0;
}

/** A fresh key's instant at `t`: counted at `t` (of one number: full at `t`), no window open, at rest at `t`. */
export function freshInstant(kind: Kind, t: number): number {
  return kind === WINDOW ? -Infinity : t;
}

/** Runs one step of `kind` on the state (`amount`, `instant`) at `t`; the results land in `step`. */
export function decide(kind: Kind, rule: Rule, amount: number, instant: number, t: number, cost: number): Code {
  return kind === BUCKET
    ? bucketDecide(rule, amount, instant, t, cost)
    : kind === WINDOW
      ? windowDecide(rule, amount, instant, t, cost)
      : gcraDecide(rule, amount, instant, t, cost);
}

/** Whether the state (`amount`, `instant`) equals a fresh key's at `t` and every later instant. */
export function idle(kind: Kind, rule: Rule, amount: number, instant: number, t: number): boolean {
  return kind === BUCKET
    ? bucketIdle(rule, amount, instant, t)
    : kind === WINDOW
      ? windowIdle(instant, t)
      : gcraIdle(amount, instant, t);
}

/**
 * Settles the state (`amount`, `instant`) of `kind` at `t` for `delta` units more than a
 * reservation charged (a top-up), or fewer (a refund: `delta` below 0). `debt` lets a top-up take
 * a bucket below empty, a window past its capacity and a flow past its tolerance, by one limit's
 * worth at most; `opened` is, for a window, the end of the window the reservation was counted in.
 * The new state lands in `step.amount` and `step.instant`; returns the units of a top-up not taken.
 */
export function adjust(
  kind: Kind,
  rule: Rule,
  amount: number,
  instant: number,
  t: number,
  delta: number,
  debt: boolean,
  opened: number,
): number {
  return kind === BUCKET
    ? bucketAdjust(rule, amount, instant, t, delta, debt)
    : kind === WINDOW
      ? windowAdjust(rule, amount, instant, t, delta, debt, opened)
      : gcraAdjust(rule, amount, instant, t, delta, debt);
}

/**
 * The state (`amount`, `instant`) of `kind` under the limit `next` in place of `rule`, at `t`: a
 * bucket keeps its level, clamped to the new capacity; a window keeps its count; a flow keeps
 * its theoretical arrival time, re-based onto `t`. Into `step.amount` and `step.instant`.
 */
export function rebase(kind: Kind, rule: Rule, next: Rule, amount: number, instant: number, t: number): void {
  if (kind === BUCKET) bucketRebase(rule, next, amount, instant, t);
  else if (kind === WINDOW) windowRebase(rule, next, amount, instant, t);
  else gcraRebase(rule, next, amount, instant, t);
}
