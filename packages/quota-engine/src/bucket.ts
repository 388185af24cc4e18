// The token bucket on flat state: two numbers per key, the tokens held and the instant they were
// counted. Refill is continuous, `refill / window` tokens a millisecond up to `capacity`; a fresh
// key holds `capacity`. Refill is computed as `elapsed · refill / window` (the multiplication is
// exact for whole milliseconds and whole refills, so whole-token arithmetic stays whole).
import { EXHAUSTED, OK, OUT, TOO_LARGE } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/** Tokens held at `t` by a bucket that held `tokens` at `at` (never above capacity). */
export function bucketLevel(rule: Rule, tokens: number, at: number, t: number): number {
  if (t > at) {
    tokens += ((t - at) * rule.refill) / rule.window;
    if (tokens > rule.capacity) tokens = rule.capacity;
  }
  return tokens;
}

/** Takes `cost` tokens at `t` if the bucket holds them; the new state lands in OUT[0] (tokens), OUT[1] (at). */
export function bucketDecide(rule: Rule, tokens: number, at: number, t: number, cost: number): Code {
  const capacity = rule.capacity;
  tokens = bucketLevel(rule, tokens, at, t);
  if (cost <= tokens) {
    const left = tokens - cost;
    OUT[0] = left;
    OUT[1] = t > at ? t : at;
    OUT[2] = Math.floor(left);
    OUT[3] = 0;
    OUT[4] = ((capacity - left) * rule.window) / rule.refill;
    return OK;
  }
  OUT[2] = Math.floor(tokens);
  OUT[4] = ((capacity - tokens) * rule.window) / rule.refill;
  if (cost > capacity) {
    OUT[3] = Infinity;
    return TOO_LARGE;
  }
  OUT[3] = ((cost - tokens) * rule.window) / rule.refill;
  return EXHAUSTED;
}

/** Whether a bucket is full at `t`, so that dropping it equals keeping it (a fresh bucket is full). */
export function bucketIdle(rule: Rule, tokens: number, at: number, t: number): boolean {
  return bucketLevel(rule, tokens, at, t) >= rule.capacity;
}
