// The token bucket on flat state: tokens held and the instant they were counted. Refill is
// continuous, `refill / window` tokens a millisecond up to `capacity`; a fresh key holds
// `capacity`. The formulas are @tideward/limiters' own (the Bucket of rate `refill · 1000 / window`
// a second and burst `capacity`), called here on the slot's numbers.
import { bucketFits, bucketFull, bucketLevel, bucketReady, bucketWhole } from "@tideward/limiters/math";
import { EXHAUSTED, OK, TOO_LARGE, step } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/**
 * Takes `cost` tokens at `t` if the bucket holds them (give or take the rule's slack); the new
 * state is tokens (which that slack can leave a hair below 0) and the instant they were counted.
 */
export function bucketDecide(rule: Rule, tokens: number, at: number, t: number, cost: number): Code {
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

/** Whether a bucket is exactly full at `t`, so that dropping it equals keeping it (a fresh bucket is full). */
export function bucketIdle(rule: Rule, tokens: number, at: number, t: number): boolean {
  return bucketLevel(tokens, at, t, rule.perMs, rule.capacity) >= rule.capacity;
}
