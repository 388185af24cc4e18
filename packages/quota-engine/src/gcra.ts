// GCRA (the generic cell rate algorithm, virtual scheduling form) on flat state: how far the flow
// ran ahead of schedule at its latest admission, and that admission's instant (its theoretical
// arrival time, TAT, is their sum). Each unit is due `T = window / refill` ms after the last; a
// charge of `cost` at `t` passes when `max(TAT, t) + cost·T − t ≤ burst·T`, forgiving the rule's
// slack. The formulas are @tideward/limiters' own (the Gcra of rate `refill · 1000 / window` a
// second and the same burst).
import { gcraFits, gcraLead, gcraReady, gcraRest, gcraWhole } from "@tideward/limiters/math";
import { EXHAUSTED, OK, TOO_LARGE, step } from "./outcome";
import type { Code } from "./outcome";
import type { Rule } from "./rule";

/** Schedules `cost` units at `t` if they fit; the new state is how far ahead the flow is and the instant of this admission. */
export function gcraDecide(rule: Rule, ahead: number, at: number, t: number, cost: number): Code {
  const { interval, burst, gcraSlack } = rule;
  const lead = gcraLead(at, ahead, t);
  if (cost <= burst && gcraFits(lead, cost, interval, rule.reach)) {
    const next = lead + cost * interval;
    step.amount = next;
    step.instant = t;
    step.remaining = gcraWhole(next, interval, burst, gcraSlack);
    step.passAt = t;
    step.resetAt = gcraRest(t, next, t);
    return OK;
  }
  step.remaining = gcraWhole(lead, interval, burst, gcraSlack);
  step.resetAt = gcraRest(at, ahead, t);
  if (cost > burst) {
    step.passAt = Infinity;
    return TOO_LARGE;
  }
  step.passAt = gcraReady(at, ahead, t, cost, interval, rule.tau, rule.reach);
  return EXHAUSTED;
}

/** Whether the key is at rest at `t` (fully caught up), so that dropping it equals keeping it. */
export function gcraIdle(ahead: number, at: number, t: number): boolean {
  return gcraLead(at, ahead, t) === 0;
}
