import type { Settle } from "./permit";

/**
 * A probe let through under a bound on probes in flight: it reports to the breaker's settle and,
 * the first time, gives its place back.
 */
export class Flight implements Settle {
  /** Whether it still holds a place: let through, not settled, not yet out for a window. */
  out = true;
  readonly #to: Settle;
  readonly #land: (f: Flight) => void;
  /** When it was let through (ms). */
  readonly at: number;

  constructor(to: Settle, at: number, land: (f: Flight) => void) {
    this.#to = to;
    this.at = at;
    this.#land = land;
  }

  pass(now: number): void {
    this.#land(this);
    this.#to.pass(now);
  }

  fail(now: number): void {
    this.#land(this);
    this.#to.fail(now);
  }
}
