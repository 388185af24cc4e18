import { REPORT_TO, isSettled, settle } from "@tideward/time/internal";
import type { Settleable } from "@tideward/time/internal";

/** @internal The key of the method a token reports to its limiter by. */
export const LAND: unique symbol = Symbol("tideward.concurrency.land");

/**
 * What a token reports back to: the limiter that issued it. Internal: a token holds its limiter
 * and calls this one method, so it carries no closure of its own and every token's call lands on
 * the same code.
 */
export interface Flight {
  /**
   * The call ended at `now` (ms), dropped or not; a `now` of NaN (`ignore`) says nothing about
   * the limit.
   */
  [LAND](token: Token, now: number, dropped: boolean): void;
}

/**
 * A place a {@link Limiter} let a call take. Exactly one of {@link Token.pass},
 * {@link Token.drop} and {@link Token.ignore} settles it; whichever comes first counts and any
 * later call is ignored, so a token settled twice (a retry path and a `finally`, say) never
 * frees its place twice.
 *
 * @example
 * const limiter = new Limiter(new AimdLimit());
 * const token = limiter.acquire(0);
 * if (!token.ok) throw new Error(`503: ${token.reason}`);
 * token.pass(12); // finished at 12 ms: a sample of 12 ms
 * token.drop(13); // ignored: it has settled
 * limiter.flying; // 0
 */
export class Token implements Settleable<Flight> {
  // The fields are declared, not defined: the constructor's stores make them, each once (a
  // defined field is first made undefined, then stored again).
  /** The clock reading the call was let in at, in milliseconds. */
  declare readonly start: number;
  /** How many calls were in flight once it was let in, itself included. */
  declare readonly inflight: number;
  /** The level it was let in at (its priority, resolved). */
  declare readonly level: number;
  /** @internal Where the token reports; cleared when it settles. */
  declare [REPORT_TO]: Flight | undefined;

  /** @internal Tokens come from `Limiter.acquire`; there is no use in making one by hand. */
  constructor(flight: Flight, start: number, inflight: number, level: number) {
    this[REPORT_TO] = flight;
    this.start = start;
    this.inflight = inflight;
    this.level = level;
  }

  /** Always true: a {@link Refusal}'s is false. */
  get ok(): true {
    return true;
  }

  /** Whether `pass`, `drop` or `ignore` has been called. */
  get settled(): boolean {
    return isSettled(this);
  }

  /**
   * The call succeeded at `now`: its place is freed, and its round trip (`now − start`) is a
   * sample for the limit. A `now` that is not a number, or before `start`, frees the place and
   * makes no sample.
   *
   * @param now - the clock reading the call finished at, in milliseconds
   */
  pass(now: number): void {
    settle(this)?.[LAND](this, now, false);
  }

  /**
   * The call was dropped at `now` — it timed out, or the backend refused it as overloaded: its
   * place is freed, and the limit learns of the drop (with its round trip, when `now` gives one).
   *
   * @param now - the clock reading the call ended at, in milliseconds
   */
  drop(now: number): void {
    settle(this)?.[LAND](this, now, true);
  }

  /**
   * The call ended in a way that says nothing about capacity (the caller's own mistake, a
   * cancelled request): its place is freed and no sample is made.
   */
  ignore(): void {
    settle(this)?.[LAND](this, Number.NaN, false);
  }
}
