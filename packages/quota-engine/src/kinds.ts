// The three algorithms behind one small dispatch, so that the engine, the slot tables and the
// snapshot code treat a key's state alike: two numbers per slot, read and written in place.
import { bucketDecide, bucketIdle } from "./bucket";
import type { ChargeKind } from "./charge";
import { windowDecide, windowIdle } from "./fixed-window";
import { gcraDecide, gcraIdle } from "./gcra";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

export const BUCKET = 0;
export const WINDOW = 1;
export const GCRA = 2;
/** A {@link ChargeKind} as an index. */
export type Kind = 0 | 1 | 2;

/** The names, by {@link Kind}. */
export const KIND_NAMES: readonly ChargeKind[] = ["bucket", "window", "gcra"];

/** Numbers of state per key, every kind alike: tokens+at, end+used, ahead+at. */
export const STRIDE = 2;

/** The {@link Kind} of a charge kind, or -1 for anything else. */
export function kindOf(kind: unknown): Kind | -1 {
  return kind === undefined || kind === "bucket" ? BUCKET : kind === "window" ? WINDOW : kind === "gcra" ? GCRA : -1;
}

/** A fresh key's state, first number: a full bucket, no window, a flow nothing ahead. */
export function freshA(kind: Kind, rule: Rule): number {
  return kind === BUCKET ? rule.capacity : kind === WINDOW ? -Infinity : 0;
}

/** A fresh key's state, second number: counted at `t`, nothing used, at rest at `t`. */
export function freshB(kind: Kind, t: number): number {
  return kind === WINDOW ? 0 : t;
}

/** Runs one step of `kind` on state (a, b); results in OUT. */
export function decide(kind: Kind, rule: Rule, a: number, b: number, t: number, cost: number): Code {
  return kind === BUCKET ? bucketDecide(rule, a, b, t, cost) : kind === WINDOW ? windowDecide(rule, a, b, t, cost) : gcraDecide(rule, a, b, t, cost);
}

/** Whether state (a, b) equals a fresh key's at `t` and every later instant. */
export function idle(kind: Kind, rule: Rule, a: number, b: number, t: number): boolean {
  return kind === BUCKET ? bucketIdle(rule, a, b, t) : kind === WINDOW ? windowIdle(a, t) : gcraIdle(a, b, t);
}
