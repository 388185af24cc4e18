// The circuit breaker as a stage: asked before every attempt of a client call; the attempt's
// outcome settles its permit (a cancelled or refused attempt says nothing about the backend and
// leaves it unsettled, as does a later stage's refusal).
import { Breaker, client } from "@tideward/breaker";
import type { Permit, Sre } from "@tideward/breaker";
import type { Random } from "@tideward/time";
import { check } from "@tideward/time/internal";
import type { Outcome } from "../events";
import type { Ask, Host, Reading, Stage, StageDef } from "../stage";

/** The guard's breaker option. */
export interface BreakerOption {
  /**
   * The circuit breaker asked before every attempt: a `Breaker`, taken as it is (share one among
   * the guards of one backend); `Sre` fields, laid over the `client` preset of
   * `@tideward/breaker` (a field left out or `undefined` keeps the preset's); `true` for `client`
   * itself; `false` for none. For go-zero's `sre` preset, pass `breaker: sre`.
   * @defaultValue none
   */
  readonly breaker?: Breaker | Partial<Sre> | boolean;
}

/** The fields a breaker's policy has, as `client` states them all: what `breaker` fields may name. */
const SRE_FIELDS = Object.keys(client) as (keyof Sre)[];

/**
 * The breaker `value` gives at `path`: itself, fields over `preset`, `true` for `preset` itself;
 * `undefined` for `false` or none.
 * @throws TypeError/RangeError naming `path` and the field
 */
export function parseBreaker(value: unknown, path: string, now: number, preset: Sre = client): Breaker | undefined {
  if (check.has(value, "allow")) return value as Breaker;
  if (value === undefined || value === false) return undefined;
  if (value === true) return new Breaker(preset, now);
  if (!check.isObject(value))
    throw check.typeError(path, `must be a Breaker, Sre fields, true or false, got ${check.describe(value)}`, value);
  // Read once, the fields the preset has and nothing else (a misspelt one is named): over it.
  const fields = check.options(value, SRE_FIELDS, path);
  return check.within(path, ["Breaker", "Sre"], () => new Breaker({ ...preset, ...fields }, now));
}

/** What a breaker reports about itself: its drop ratio. */
export function breakerReadings(breaker: Breaker): Reading[] {
  return [{ metric: "tideward.breaker.drop_ratio", read: (now) => breaker.ratio(now) }];
}

/** A breaker in the pipeline: its permit is the token. */
export class BreakerStage implements Stage<Permit> {
  readonly kind = "breaker";
  readonly breaker: Breaker;
  readonly #random: Random;
  readonly readings: readonly Reading[];

  constructor(breaker: Breaker, random: Random) {
    this.breaker = breaker;
    this.#random = random;
    this.readings = breakerReadings(breaker);
  }

  enter(now: number, _ask: Ask): Permit | undefined {
    return this.breaker.allow(now, this.#random);
  }

  settle(permit: Permit, now: number, outcome: Outcome): void {
    if (outcome === "success") permit.pass(now);
    else if (outcome === "failure" || outcome === "timeout") permit.fail(now);
    // A cancelled or refused attempt says nothing about the backend: its permit stays unsettled.
  }
  // No release: a permit a later stage refused is never settled, so it is not counted.
}

export const breaker: StageDef<BreakerOption, "client"> = {
  kind: "breaker",
  options: ["breaker"] satisfies (keyof BreakerOption)[],
  place: { client: 40 },
  parse(o, host: Host) {
    const b = parseBreaker(o.breaker, `${host.owner} breaker`, host.now);
    return b === undefined ? undefined : new BreakerStage(b, host.random);
  },
};
