// GCRA (the generic cell rate algorithm, virtual scheduling form) on flat state: one number per
// key, the theoretical arrival time (TAT) of the next unit. Each unit is due `window / refill` ms
// after the last; a charge passes while it would leave the key at most `burst` units ahead of
// schedule. A fresh key, or one whose TAT has passed, is at rest.
//
// Time is kept in milliseconds as a double. Near Date.now() magnitudes that resolves about a
// quarter of a microsecond, so comparisons allow `rule.slack` (a microsecond, or less for very
// fast rates): instants closer than that count as equal.
import { EXHAUSTED, OK, OUT, TOO_LARGE } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/** Schedules `cost` units at `t` if they fit; the new TAT lands in OUT[0]. */
export function gcraDecide(rule: Rule, tat: number, t: number, cost: number): Code {
  const base = tat > t ? tat : t;
  const next = base + (cost * rule.window) / rule.refill;
  const tau = rule.tau;
  if (next - t <= tau + rule.slack) {
    OUT[0] = next;
    OUT[1] = 0;
    OUT[2] = Math.floor(((tau - (next - t) + rule.slack) * rule.refill) / rule.window);
    OUT[3] = 0;
    OUT[4] = next - t;
    return OK;
  }
  OUT[2] = Math.floor(((tau - (base - t) + rule.slack) * rule.refill) / rule.window);
  OUT[4] = base - t;
  if (cost > rule.burst) {
    OUT[3] = Infinity;
    return TOO_LARGE;
  }
  OUT[3] = next - t - tau;
  return EXHAUSTED;
}

/** Whether the key is at rest at `t`, so that dropping it equals keeping it. */
export function gcraIdle(tat: number, t: number): boolean {
  return tat <= t;
}
