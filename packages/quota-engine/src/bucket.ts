// The token bucket on flat state: two numbers per key, the tokens held and the instant they were
// counted. Refill is continuous, `refill / window` tokens a millisecond up to `capacity`; a fresh
// key holds `capacity`. The same definitions as `@tideward/limiters`' Bucket (rate
// `refill · 1000 / window` a second, burst `capacity`), the billionth of slack included, which
// absorbs the rounding of multiplying by a precomputed rate.
import { EXHAUSTED, OK, OUT, TOO_LARGE } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/** Tokens held at `t` by a bucket that held `tokens` at `at` (never above capacity). */
export function bucketLevel(rule: Rule, tokens: number, at: number, t: number): number {
  if (t > at) {
    tokens += (t - at) * rule.perMs;
    if (tokens > rule.capacity) tokens = rule.capacity;
  }
  return tokens;
}

/** Whole tokens held, from 0 to capacity, forgiving the slack. */
export function bucketWhole(rule: Rule, tokens: number): number {
  const n = Math.floor(tokens + rule.bucketSlack);
  return n < 0 ? 0 : n > rule.capacity ? rule.capacity : n;
}

/** Milliseconds until a bucket holding `tokens` is full (0 within the slack). */
export function bucketUntilFull(rule: Rule, tokens: number): number {
  const missing = rule.capacity - tokens;
  return missing > rule.bucketSlack ? missing * rule.interval : 0;
}

/** Whether a bucket holding `tokens` can give `cost` (give or take a billionth of its capacity). */
export function bucketFits(rule: Rule, tokens: number, cost: number): boolean {
  return cost <= rule.capacity && tokens + rule.bucketSlack >= cost;
}

/**
 * Takes `cost` tokens at `t` if the bucket holds them (give or take a billionth of its
 * capacity); the new state lands in OUT[0] (tokens, which that slack can leave a hair below 0)
 * and OUT[1] (at).
 */
export function bucketDecide(rule: Rule, tokens: number, at: number, t: number, cost: number): Code {
  tokens = bucketLevel(rule, tokens, at, t);
  if (bucketFits(rule, tokens, cost)) {
    const left = tokens - cost;
    OUT[0] = left;
    OUT[1] = t > at ? t : at;
    OUT[2] = bucketWhole(rule, left);
    OUT[3] = 0;
    OUT[4] = bucketUntilFull(rule, left);
    return OK;
  }
  OUT[2] = bucketWhole(rule, tokens);
  OUT[4] = bucketUntilFull(rule, tokens);
  if (cost > rule.capacity) {
    OUT[3] = Infinity;
    return TOO_LARGE;
  }
  OUT[3] = (cost - tokens) * rule.interval;
  return EXHAUSTED;
}

/** Whether a bucket is full at `t`, so that dropping it equals keeping it (a fresh bucket is full). */
export function bucketIdle(rule: Rule, tokens: number, at: number, t: number): boolean {
  return bucketLevel(rule, tokens, at, t) >= rule.capacity;
}
