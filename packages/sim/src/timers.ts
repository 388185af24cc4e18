import type { RetryBudget } from "@tideward/backoff";
import { CLIENT_DONE } from "./calls";
import { EVENT_LIMIT, pastClock } from "./clock-range";
import type { Attempts, Calls } from "./calls";
import type { RunSpec } from "./options";
import type { Fire } from "./queue";
import { HEDGE } from "./recorder";
import type { Simulator } from "./simulator";

/**
 * The client's timers on its calls and attempts: each call's deadline, each attempt's timeout,
 * and the hedge sent when an attempt is slow to answer. What happens when one fires is the run's
 * (`expire`: the client stops waiting for an attempt; `hedge`: a copy of a call's attempt is sent);
 * which timers exist, when they are due and whether they still matter is this.
 */
export class Timers {
  /** The caller's deadline, ms after a call arrives (`Infinity`: none). */
  readonly deadline: number;
  readonly #timeout: number;
  readonly #hedgeAfter: number;
  readonly #hedgeMax: number;
  // Whether an attempt has any timer: a timeout, a deadline or a hedge.
  readonly #timed: boolean;
  readonly #sim: Simulator;
  readonly #calls: Calls;
  readonly #attempts: Attempts;
  readonly #budget: RetryBudget | undefined;
  readonly #expire: (a: number, now: number) => void;
  readonly #hedge: (c: number, now: number) => void;

  constructor(
    spec: RunSpec,
    sim: Simulator,
    calls: Calls,
    attempts: Attempts,
    budget: RetryBudget | undefined,
    expire: (a: number, now: number) => void,
    hedge: (c: number, now: number) => void,
  ) {
    this.deadline = spec.deadline;
    this.#timeout = spec.timeout;
    this.#hedgeAfter = spec.hedgeAfter;
    this.#hedgeMax = spec.hedgeMax;
    this.#timed = spec.timeout !== Infinity || spec.deadline !== Infinity || spec.hedgeMax > 0;
    this.#sim = sim;
    this.#calls = calls;
    this.#attempts = attempts;
    this.#budget = budget;
    this.#expire = expire;
    this.#hedge = hedge;
  }

  /** Call `c` arrived at `now` (ms): its deadline. Calls arrive in time order, and so do their deadlines (channel 1). */
  call(c: number, now: number): void {
    if (this.deadline === Infinity) return;
    const at = now + this.deadline;
    if (at > EVENT_LIMIT) throw this.#past("client deadline", this.deadline, at);
    this.#sim.channel(1, at, this.onDeadline, this.#calls.ref(c));
  }

  /**
   * Attempt `a` of call `c`, sent at `now` (ms): its timeout and its hedge. An attempt that is not
   * a hedge gives up at its own timeout, or with its call at the call's deadline, whichever comes
   * first; a hedge, at its own timer. Timeouts of one length come in time order: they skip the
   * heap (channel 0).
   */
  attempt(a: number, c: number, now: number, kind: number): void {
    if (!this.#timed) return;
    const calls = this.#calls;
    const until = calls.start[c] + this.deadline;
    const ref = this.#attempts.ref(a);
    const mine = now + this.#timeout;
    // Only the timeout can be past the events' range: the deadline was checked when the call came.
    if (mine < until && mine > EVENT_LIMIT) throw this.#past("client timeout", this.#timeout, mine);
    if (kind !== HEDGE) {
      if (until !== Infinity) calls.current[c] = ref;
      if (mine < until) this.#sim.channel(0, mine, this.onTimeout, ref);
    } else {
      const giveUp = mine < until ? mine : until;
      if (giveUp !== Infinity) this.#sim.at(giveUp, this.onTimeout, ref);
    }
    const hedge = now + this.#hedgeAfter;
    if (kind !== HEDGE && this.#hedgeMax > 0 && calls.hedges[c] < this.#hedgeMax && hedge < until) {
      if (hedge > EVENT_LIMIT) throw this.#past("client hedge after", this.#hedgeAfter, hedge);
      this.#sim.at(hedge, this.#onHedge, calls.ref(c));
    }
  }

  #past(what: string, wait: number, at: number): RangeError {
    return pastClock(what, "wait", wait, at, this.#sim.start);
  }

  /** What a call's deadline fires. */
  readonly onDeadline: Fire = (now, ref) => this.deadlineDue(now, ref);

  /** Call `ref`'s deadline: the client stops waiting for its current attempt (a hedge has its own timer). */
  deadlineDue(now: number, ref: number): void {
    const calls = this.#calls;
    const c = calls.of(ref);
    if (c < 0 || calls.done[c] === 1) return;
    const a = this.#attempts.of(calls.current[c]);
    if (a >= 0 && (this.#attempts.flags[a] & CLIENT_DONE) === 0) this.#expire(a, now);
  }

  /** What an attempt's timeout fires. */
  readonly onTimeout: Fire = (now, ref) => this.timeoutDue(now, ref);

  /** Attempt `ref`'s timeout: the client stops waiting for it, unless it has heard already. */
  timeoutDue(now: number, ref: number): void {
    const a = this.#attempts.of(ref);
    if (a < 0 || (this.#attempts.flags[a] & CLIENT_DONE) !== 0) return;
    this.#expire(a, now);
  }

  /** Call `ref`'s hedge: a copy of its attempt, if it is still waiting and the budget allows one. */
  readonly #onHedge = (now: number, ref: number): void => {
    const calls = this.#calls;
    const c = calls.of(ref);
    if (c < 0 || calls.done[c] === 1 || calls.out[c] === 0 || calls.hedges[c] >= this.#hedgeMax) return;
    if (this.#budget !== undefined && !this.#budget.tryRetry(now)) return;
    calls.hedges[c]++;
    this.#hedge(c, now);
  };
}
