// The token bucket on flat state, in one of two forms (see ./one-number, and Rule.oneNumber):
// - one number, when the limit's tick is a whole number of 2^-7 ms: the instant F it is full
//   again (the amount unused, 0). At `t` it lacks `max(F − t, 0) / tick` tokens; a charge of
//   `cost` passes when `max(F, t) + cost · tick − t ≤ capacity · tick` (give or take the slack)
//   and moves F there, computed as `t + (lead + cost · tick)`. The formulas are @tideward/limiters' GCRA ones (`gcraLead(F, 0, t)` is
//   `max(F − t, 0)`), on the capacity and the tick: a token bucket and GCRA are one algorithm.
// - two numbers otherwise: tokens held and the instant they were counted. Refill is continuous,
//   `refill / window` tokens a millisecond up to `capacity`; the formulas are @tideward/limiters'
//   Bucket's (rate `refill · 1000 / window` a second, burst `capacity`).
// A fresh key holds `capacity` either way (F of `t`, or `capacity` tokens at `t`).
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
} from "@tideward/limiters/math";
import { EXHAUSTED, OK, TOO_LARGE, step, take } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/**
 * Takes `cost` tokens at `t` if the bucket holds them (give or take the rule's slack); the new
 * state is, in one number, the instant it is full again (`amount` 0), or else tokens (which that
 * slack can leave a hair below 0) and the instant they were counted.
 */
export function bucketDecide(rule: Rule, tokens: number, at: number, t: number, cost: number): Code {
  if (rule.oneNumber) return fullDecide(rule, at, t, cost);
  const { perMs, capacity, bucketSlack } = rule;
  const level = bucketLevel(tokens, at, t, perMs, capacity);
  if (bucketFits(level, cost, capacity, bucketSlack)) {
    const left = level - cost;
    const since = t > at ? t : at;
    step.amount = left;
    step.instant = since;
    step.remaining = bucketWhole(left, capacity, bucketSlack);
    step.passAt = t;
    step.resetAt = bucketFull(left, since, t, perMs, capacity, bucketSlack);
    return OK;
  }
  step.remaining = bucketWhole(level, capacity, bucketSlack);
  step.resetAt = bucketFull(tokens, at, t, perMs, capacity, bucketSlack);
  step.passAt = bucketReady(tokens, at, t, cost, perMs, capacity, bucketSlack);
  return cost > capacity ? TOO_LARGE : EXHAUSTED;
}

// A bucket of one number, full again at `full`.
function fullDecide(rule: Rule, full: number, t: number, cost: number): Code {
  const { tick, capacity, bucketSlackMs } = rule;
  const lead = gcraLead(full, 0, t);
  if (cost <= capacity && gcraFits(lead, cost, tick, rule.bucketReach)) {
    const next = t + (lead + cost * tick);
    step.amount = 0;
    step.instant = next;
    step.remaining = gcraWhole(gcraLead(next, 0, t), tick, capacity, bucketSlackMs);
    step.passAt = t;
    step.resetAt = gcraRest(next, 0, t);
    return OK;
  }
  step.remaining = gcraWhole(lead, tick, capacity, bucketSlackMs);
  step.resetAt = gcraRest(full, 0, t);
  if (cost > capacity) {
    step.passAt = Infinity;
    return TOO_LARGE;
  }
  step.passAt = gcraReady(full, 0, t, cost, tick, rule.bucketTau, rule.bucketReach);
  return EXHAUSTED;
}

/** Whether a bucket is exactly full at `t`, so that dropping it equals keeping it (a fresh bucket is full). */
export function bucketIdle(rule: Rule, tokens: number, at: number, t: number): boolean {
  if (rule.oneNumber) return at <= t;
  return bucketLevel(tokens, at, t, rule.perMs, rule.capacity) >= rule.capacity;
}

/**
 * Settles a bucket for `delta` units more (a top-up) or fewer (a refund, `delta` below 0) than
 * were charged, at `t`: a refund adds tokens back, never above the capacity; a top-up takes whole
 * tokens, never refused, down to `−capacity` with `debt` (the bucket then owes them, delaying
 * later charges until it has refilled) or down to what it holds without. The new state lands in
 * `step`; returns the units of a top-up it could not take (forgiven).
 */
export function bucketAdjust(rule: Rule, tokens: number, at: number, t: number, delta: number, debt: boolean): number {
  if (rule.oneNumber) return fullAdjust(rule, at, t, delta, debt);
  const { perMs, capacity, bucketSlack } = rule;
  const level = bucketLevel(tokens, at, t, perMs, capacity);
  step.instant = t > at ? t : at;
  if (delta <= 0) {
    const up = level - delta;
    step.amount = up < capacity ? up : capacity;
    return 0;
  }
  const taken = take(delta, Math.floor(level + bucketSlack) + (debt ? capacity : 0));
  step.amount = level - taken;
  return delta - taken;
}

// The same on a bucket of one number, full again at `full`: a refund moves that instant back by
// the refunded tokens' refill time, never before `t`; a top-up moves it on.
function fullAdjust(rule: Rule, full: number, t: number, delta: number, debt: boolean): number {
  const { tick, capacity, bucketSlackMs } = rule;
  const lead = gcraLead(full, 0, t);
  step.amount = 0;
  if (delta <= 0) {
    const back = lead + delta * tick;
    step.instant = lead === 0 ? full : back > 0 ? t + back : t;
    return 0;
  }
  const taken = take(delta, Math.floor(capacity - (lead - bucketSlackMs) / tick) + (debt ? capacity : 0));
  step.instant = taken === 0 ? full : t + (lead + taken * tick);
  return delta - taken;
}

/**
 * A bucket's state under `next` in place of `rule`, at `t`: it keeps its level (tokens held),
 * clamped to `next`'s capacity (and to `−capacity`, the most a bucket may owe). A full bucket is
 * full under `next`: it equals a key with no state, which a sweep may have dropped already (and a
 * key with no state is full under any limit). Into `step`.
 */
export function bucketRebase(rule: Rule, next: Rule, tokens: number, at: number, t: number): void {
  step.amount = tokens;
  step.instant = at;
  if (rule.capacity === next.capacity && rule.refill === next.refill && rule.window === next.window) return;
  const { capacity, tick } = next;
  if (bucketIdle(rule, tokens, at, t)) {
    step.amount = next.oneNumber ? 0 : capacity;
    step.instant = t;
    return;
  }
  if (rule.oneNumber && next.oneNumber && rule.tick === tick) {
    // Both in one number on one tick: the tokens lacking move by the capacity's change, exactly.
    const lack = gcraLead(at, 0, t) + (capacity - rule.capacity) * tick;
    step.instant = lack > 0 ? t + (lack < next.bucketMost ? lack : 2 * next.bucketTau) : t;
    return;
  }
  const held = rule.oneNumber
    ? rule.capacity - gcraLead(at, 0, t) / rule.tick
    : bucketLevel(tokens, at, t, rule.perMs, rule.capacity);
  const level = held > capacity ? capacity : held < -capacity ? -capacity : held;
  if (next.oneNumber) {
    step.amount = 0;
    step.instant = level < capacity ? t + (capacity - level) * tick : t;
  } else {
    step.amount = level;
    step.instant = t;
  }
}
