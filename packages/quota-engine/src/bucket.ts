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
import { EXHAUSTED, OK, TOO_LARGE, step } from "./outcome";
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
