import { REPORT_TO, isSettled, settle } from "@tideward/time/internal";
import type { Settleable } from "@tideward/time/internal";

/**
 * What a ticket reports back to the shedder that issued it. Internal: a shedder hands its
 * tickets one such object, made once, so a ticket carries no closure of its own.
 */
export interface Flight {
  /** A call that started at `start` passed at `now` (both ms). */
  land(start: number, now: number): void;
  /** A call left flight without saying anything about capacity. */
  leave(): void;
}

/**
 * A call the shedder let through. Exactly one of {@link Ticket.pass} and {@link Ticket.fail}
 * settles it; whichever comes first counts and any later call is ignored, so a ticket settled
 * twice (a retry path and a finally block, say) never takes a call out of flight twice.
 *
 * @example
 * import { ManualClock } from "@tideward/time";
 * const clock = new ManualClock(0);
 * const shedder = new Shedder();
 * const work = async () => clock.advance(15); // the call takes 15 ms
 * const ticket = shedder.allow(clock.now(), 500); // CPU at half, in thousandths
 * if (ticket === undefined) throw new Error("503: shed");
 * try { await work(); ticket.pass(clock.now()); } catch (e) { ticket.fail(); throw e; }
 * ticket.settled; // true
 */
export class Ticket implements Settleable<Flight> {
  /** The clock reading the call was let through at, in milliseconds. */
  readonly start: number;
  /** @internal Where the ticket reports; cleared when it settles. */
  [REPORT_TO]: Flight | undefined;

  /** @internal Tickets come from `Shedder.allow`; there is no use in making one by hand. */
  constructor(flight: Flight, start: number) {
    this[REPORT_TO] = flight;
    this.start = start;
  }

  /** Whether `pass` or `fail` has been called. */
  get settled(): boolean {
    return isSettled(this);
  }

  /**
   * The call succeeded at `now`: it leaves flight, and it counts as a pass whose response time
   * (`now − start`, never under 0) counts towards what the server has shown it can finish.
   *
   * @param now - the clock reading the call finished at, in milliseconds
   */
  pass(now: number): void {
    settle(this)?.land(this.start, now);
  }

  /**
   * The call failed: it leaves flight but says nothing about capacity (a fast failure must not
   * read as a fast server).
   */
  fail(): void {
    settle(this)?.leave();
  }
}
