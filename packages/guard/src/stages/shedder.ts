// The load shedder as a stage: every call it lets through holds a ticket until it ends (a pass
// with its end when it succeeded, a failure otherwise), and a call a later stage refuses gives
// its ticket back at once. It reads the load the holder's `load` option gives.
import { Shedder } from "@tideward/shedder";
import type { Shed, Ticket } from "@tideward/shedder";
import { check } from "@tideward/time/internal";
import type { Outcome } from "../events";
import type { Ask, Host, Reading, Stage, Side, StageDef } from "../stage";
import { parsePriority } from "./limit";

/** The shedder options, of the guard and of admit. */
export interface ShedderOption {
  /**
   * A load shedder that every call must pass (in admit, asked first); needs
   * {@link ShedderOption.load}. @defaultValue none
   */
  readonly shedder?: Shedder | Partial<Shed>;
  /**
   * The load the shedder weighs, in thousandths (0–1000), read each time it is asked:
   * `LoadSampler`'s `load` from `@tideward/shedder/node`, or yours.
   */
  readonly load?: () => number;
}

/**
 * The shedder `value` gives at `path`: itself, or one built from `Shed` fields at `now`;
 * `undefined` for none.
 * @throws TypeError/RangeError naming `path` and the field
 */
export function parseShedder(value: unknown, path: string, now: number): Shedder | undefined {
  if (check.has(value, "allow")) return value as Shedder;
  if (value === undefined) return undefined;
  if (!check.isObject(value))
    throw check.typeError(path, `must be a Shedder or Shed fields, got ${check.describe(value)}`, value);
  const fields = value as Partial<Shed>;
  return check.within(path, ["Shedder", "Shed"], () => new Shedder(fields, now));
}

/** The readings of a shedder; `seen` is the last load it was handed (thousandths), when known. */
export function shedderReadings(shedder: Shedder, seen?: () => number): Reading[] {
  const readings: Reading[] = [
    { metric: "tideward.shedder.active_calls", read: () => shedder.flying },
    { metric: "tideward.shedder.average_active_calls", read: () => shedder.average },
  ];
  if (seen === undefined) return readings;
  // NaN until a load has been read: a reading that is not finite is left out.
  readings.push({ metric: "tideward.shedder.load", read: () => seen() / 1000 });
  readings.push({
    metric: "tideward.shedder.capacity",
    read: (now) => (Number.isNaN(seen()) ? Number.NaN : shedder.capacity(now, seen())),
  });
  return readings;
}

/** A shedder in the pipeline: its ticket is the token. */
export class ShedderStage implements Stage<Ticket> {
  readonly kind = "shed";
  readonly shedder: Shedder;
  readonly #load: () => number;
  /** The last load handed to it, thousandths, clamped as it clamps them; NaN until the first. */
  #seen = Number.NaN;
  readonly readings: readonly Reading[];
  /** The priority of a call that gives none (the holder's `priority` option), or `undefined`. */
  readonly priority: number | string | undefined;

  constructor(shedder: Shedder, load: () => number, priority?: number | string) {
    this.shedder = shedder;
    this.#load = load;
    this.priority = priority;
    this.readings = shedderReadings(shedder, () => this.#seen);
  }

  enter(now: number, ask: Ask): Ticket | undefined {
    const v = this.#load();
    // As the shedder reads it: anything that is not a number above 0 is 0, over 1000 is 1000.
    this.#seen = typeof v === "number" && v > 0 ? (v < 1000 ? v : 1000) : 0;
    // A shedder with levels refuses the least important first (one without reads no priority).
    const p = ask.priority;
    return this.shedder.allow(now, v, p === undefined ? this.priority : p);
  }

  settle(ticket: Ticket, now: number, outcome: Outcome): void {
    if (outcome === "success") ticket.pass(now);
    else ticket.fail();
  }

  release(ticket: Ticket): void {
    ticket.fail();
  }
}

export const shedder: StageDef<ShedderOption, Side> = {
  kind: "shed",
  options: ["shedder", "load"] satisfies (keyof ShedderOption)[],
  place: { client: 30, server: 10 },
  parse(o, host: Host) {
    const s = parseShedder(o.shedder, `${host.owner} shedder`, host.now);
    const load = o.load === undefined ? undefined : check.fn<() => number>(o.load, `${host.owner} load`);
    if (s === undefined) return undefined;
    if (load === undefined)
      throw check.typeError(
        `${host.owner} shedder`,
        "needs a load: pass load: () => thousandths (for example LoadSampler's load from @tideward/shedder/node)",
        undefined,
      );
    // The holder's priority, checked as the limit checks it (against the limit's levels there).
    return new ShedderStage(s, load, parsePriority(o.priority, `${host.owner} priority`, undefined, host.side));
  },
};
