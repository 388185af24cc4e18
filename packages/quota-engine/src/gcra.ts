// GCRA (the generic cell rate algorithm, virtual scheduling form) on flat state: one number per
// key, the theoretical arrival time (TAT), the instant the key is fully caught up. Each unit is
// due `T = window / refill` ms after the last; a charge of `cost` at `t` passes when
// `max(TAT, t) + cost·T − t ≤ burst·T`, forgiving a billionth of `burst·T`. The same definitions
// as `@tideward/limiters`' Gcra (rate `refill · 1000 / window` a second, the same burst).
//
// TAT is an absolute instant in ms, so near Date.now() magnitudes it resolves about a quarter of
// a microsecond: a charge landing exactly on a boundary can go either way by that much.
import { EXHAUSTED, OK, OUT, TOO_LARGE } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

// Whole units that would pass back to back with the key `behind` ms behind its TAT.
function whole(rule: Rule, behind: number): number {
  const n = Math.floor(rule.burst - (behind - rule.gcraSlack) / rule.interval);
  return n < 0 ? 0 : n > rule.burst ? rule.burst : n;
}

/** Schedules `cost` units at `t` if they fit; the new TAT lands in OUT[0]. */
export function gcraDecide(rule: Rule, tat: number, t: number, cost: number): Code {
  const base = tat > t ? tat : t;
  const next = base + cost * rule.interval;
  if (cost <= rule.burst && next - t <= rule.tau + rule.gcraSlack) {
    OUT[0] = next;
    OUT[1] = 0;
    OUT[2] = whole(rule, next - t);
    OUT[3] = 0;
    OUT[4] = next - t;
    return OK;
  }
  OUT[2] = whole(rule, base - t);
  OUT[4] = base - t;
  if (cost > rule.burst) {
    OUT[3] = Infinity;
    return TOO_LARGE;
  }
  OUT[3] = next - t - rule.tau; // conforms once t' ≥ TAT + cost·T − burst·T
  return EXHAUSTED;
}

/** Whether the key is at rest at `t` (fully caught up), so that dropping it equals keeping it. */
export function gcraIdle(tat: number, t: number): boolean {
  return tat <= t;
}
