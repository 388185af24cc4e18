// The retry budget as a stage: a call's first attempt, once admitted, earns it credit; a hedge is
// paid for from it once every other stage has let the hedge through, so a breaker's refusal
// wastes no credit. Retries are granted by the retry decision (`decideRetry`), before their wait.
import { RetryBudget } from "@tideward/backoff";
import type { Budget } from "@tideward/backoff";
import { check } from "@tideward/time/internal";
import type { Ask, Host, Reading, Stage, StageDef } from "../stage";

/** The guard's budget option. */
export interface BudgetOption {
  /**
   * The retry budget every retry and hedge must be granted by (each call counts as one first
   * attempt once admitted). Fields build one over the preset (a fifth of first attempts plus ten a second over
   * ten seconds); `false` turns it off. @defaultValue a budget of its own when retrying or hedging
   */
  readonly budget?: RetryBudget | Partial<Budget> | false;
}

/**
 * The budget `value` gives at `path`: itself; one built over the preset at `now` from fields, or
 * (when `wanted`, for a holder that retries) from none; `undefined` for `false` or none.
 */
export function parseBudget(value: unknown, path: string, now: number, wanted: boolean): RetryBudget | undefined {
  if (check.has(value, "tryRetry")) {
    // One from an older @tideward/backoff would fail only at a call's first retry.
    if (!check.has(value, "grant") || !check.has(value, "giveBack") || !check.has(value, "recordAttempt"))
      throw check.typeError(path, "must be a RetryBudget with grant and giveBack (@tideward/backoff 0.2)", value);
    return value as RetryBudget;
  }
  if (value === false || (value === undefined && !wanted)) return undefined;
  if (value !== undefined && !check.isObject(value))
    throw check.typeError(path, `must be a RetryBudget, Budget fields or false, got ${check.describe(value)}`, value);
  const fields = (value ?? {}) as Partial<Budget>;
  return check.within(path, ["RetryBudget"], () => new RetryBudget(fields, now));
}

/** What a retry budget reports about itself: the retries it would grant now. */
export function budgetReadings(budget: RetryBudget): Reading[] {
  return [{ metric: "tideward.retry_budget.available", read: (now) => budget.available(now) }];
}

/** A retry budget in the pipeline: its token is `true`. */
export class BudgetStage implements Stage<true> {
  readonly kind = "budget";
  readonly budget: RetryBudget;
  readonly readings: readonly Reading[];

  constructor(budget: RetryBudget) {
    this.budget = budget;
    this.readings = budgetReadings(budget);
  }

  enter(now: number, ask: Ask): true | undefined {
    if (ask.hedge) return this.budget.tryRetry(now) ? true : undefined;
    // Only a first attempt that reaches the backend earns the budget anything.
    if (ask.first) this.budget.recordAttempt(now);
    return true;
  }
}

export const budget: StageDef<BudgetOption, "client"> = {
  kind: "budget",
  options: ["budget"] satisfies (keyof BudgetOption)[],
  place: { client: 50 },
  parse(o, host: Host) {
    const b = parseBudget(o.budget, `${host.owner} budget`, host.now, host.retrying);
    return b === undefined ? undefined : new BudgetStage(b);
  },
};
