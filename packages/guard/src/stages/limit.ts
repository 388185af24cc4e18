// An adaptive concurrency limit (a `Limiter` of @tideward/concurrency) as a stage: a place for
// each call in flight under a limit that moves with the calls' round trips, judged by priority.
// The same stage stands in a client guard (Netflix's client limiter) and in front of a server.
// It takes the limiter as an instance only, so @tideward/concurrency stays an optional peer that
// this package never bundles: nothing here imports its code.
import type { Limiter, Priority, Token } from "@tideward/concurrency";
import { check } from "@tideward/time/internal";
import type { Outcome } from "../events";
import type { Ask, Host, Reading, Stage, Side, StageDef } from "../stage";

/** The concurrency limit options, of the guard and of admit. */
export interface LimitOption {
  /**
   * An adaptive concurrency limit every call must find a place under: a `Limiter` of
   * `@tideward/concurrency` (install it beside this package), taken as it is — share one among
   * the guards of one backend so that they learn one limit. A call holds its place until it
   * ends: a success is a round-trip sample (`pass`), a timeout a drop (`drop`), anything else
   * says nothing about capacity (`ignore`). A refusal's kind is the limiter's reason: `"limit"`
   * (it is full) or `"reserved"` (the places left are held for more important calls).
   * @defaultValue none
   */
  readonly limit?: Limiter;
  /**
   * The priority of the calls that give none of their own: a level's number (0 the most
   * important) or name, of the limiter's `Priorities` (and the shedder's, when it has levels).
   * In a guard, every call of the guard has it, or a function gives each call its own (see
   * `GuardOptions.priority`); in `admit`, a request whose `priority(req)` answers `undefined` has it.
   * @defaultValue the priorities' `fallback` level
   */
  readonly priority?: number | string;
}

/**
 * A guard's priority read from each call's arguments, once a call before anything is taken: a
 * level's number or name; one that is not a level counts as the least important, `undefined` as
 * the priorities' fallback. What it throws is the call's error, and the call takes nothing.
 */
export type PriorityOf<A extends unknown[]> = (...args: A) => number | string | undefined;

/** What the stage's readings report: the limit and the calls in flight under it. */
export function limitReadings(limiter: Limiter): Reading[] {
  return [
    { metric: "tideward.concurrency.limit", read: () => limiter.limit },
    { metric: "tideward.concurrency.in_flight", read: () => limiter.flying },
  ];
}

/** Whether `value` is a limiter (read by its methods: this package holds no copy of the class). */
function isLimiter(value: unknown): value is Limiter {
  return check.has(value, "acquire") && check.has(value, "room") && check.isObject((value as Limiter).priorities);
}

/**
 * The limiter `value` gives at `path`; `undefined` for none.
 * @throws TypeError naming `path` for anything but a `Limiter`
 */
export function parseLimit(value: unknown, path: string): Limiter | undefined {
  if (value === undefined) return undefined;
  if (isLimiter(value)) return value;
  throw check.typeError(
    path,
    `must be a Limiter of @tideward/concurrency (new Limiter(new VegasLimit())), got ${check.describe(value)}`,
    value,
  );
}

/**
 * The priority `value` gives at `path`, checked against the levels of `limiter` when there is
 * one; `undefined` for none, and for a function on the client side (a guard reads it per call).
 * @throws TypeError for anything but a number or a name (or a function, on the client side);
 *   RangeError for a level the limiter's priorities do not have (a call of it would count as the
 *   least important level)
 */
export function parsePriority(
  value: unknown,
  path: string,
  limiter: Limiter | undefined,
  side: Host["side"],
): Priority | undefined {
  if (value === undefined || (side === "client" && typeof value === "function")) return undefined;
  if (typeof value !== "number" && typeof value !== "string")
    throw check.typeError(path, `must be a level's number or name, got ${check.describe(value)}`, value);
  if (limiter === undefined) return value;
  const names = limiter.priorities.names;
  const known =
    typeof value === "number" ? Number.isInteger(value) && value >= 0 && value < names.length : names.includes(value);
  if (!known)
    throw check.rangeError(
      path,
      `must be a level of the limit's priorities: 0 to ${names.length - 1} or ${names.map((n) => JSON.stringify(n)).join(", ")}, got ${check.describe(value)}`,
      value,
    );
  return value;
}

/**
 * A limiter in the pipeline: its token is the limiter's. Entered at its place (a place taken and
 * given back when a later stage refuses costs nothing and teaches the limit nothing).
 *
 * Settled by the call's outcome: `"success"` passes (its round trip is a sample), `"timeout"`
 * drops (the limit backs off), `"failure"`, `"cancelled"` and `"refused"` ignore — a failure's
 * round trip is no measure of capacity (it is often a fast error), as Netflix's server filter
 * ignores a call that throws. Released (a later stage refused the call): ignored.
 */
export class LimitStage implements Stage<Token> {
  /**
   * The reason of its latest refusal: `"limit"` (full) or `"reserved"` (the places left are held
   * for more important levels), read by the pipeline's caller as the refusal's kind right after
   * `enter` refused.
   */
  kind: "limit" | "reserved" = "limit";
  readonly limiter: Limiter;
  /** The priority of a call that gives none, or `undefined` for the priorities' fallback. */
  readonly priority: Priority | undefined;
  readonly readings: readonly Reading[];
  /**
   * Told after a place was given back at `now` (ms), NaN when the time is not known: how a line of
   * waiters (admit's `wait`) learns that one may go. Set by its holder.
   */
  freed: ((now: number) => void) | undefined = undefined;

  constructor(limiter: Limiter, priority: Priority | undefined) {
    this.limiter = limiter;
    this.priority = priority;
    this.readings = limitReadings(limiter);
  }

  enter(now: number, ask: Ask): Token | undefined {
    const p = ask.priority;
    const t = this.limiter.acquire(now, p === undefined ? this.priority : p);
    if (t.ok) return t;
    this.kind = t.reason;
    // Nobody knows when a place frees: a call's end, not a clock, frees it.
    ask.retryAfter = 0;
    return undefined;
  }

  settle(token: Token, now: number, outcome: Outcome): void {
    if (outcome === "success") token.pass(now);
    else if (outcome === "timeout") token.drop(now);
    else token.ignore();
    this.freed?.(now);
  }

  release(token: Token, now: number): void {
    token.ignore();
    this.freed?.(now);
  }
}

export const limit: StageDef<LimitOption, Side> = {
  kind: "limit",
  reasons: ["limit", "reserved"],
  options: ["limit", "priority"] satisfies (keyof LimitOption)[],
  place: { client: 25, server: 25 },
  parse(o, host: Host) {
    const l = parseLimit(o.limit, `${host.owner} limit`);
    const p = parsePriority(o.priority, `${host.owner} priority`, l, host.side);
    return l === undefined ? undefined : new LimitStage(l, p);
  },
};
