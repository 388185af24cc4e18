import { byName } from "./by-name";
import { check } from "@tideward/time/internal";
import { checkKnobs } from "./scenario";
import type { Knob, KnobValue } from "./scenario";

/**
 * The part of fast-check {@link knobArbitrary} uses, so this package needs no dependency on it:
 * pass `fc` itself (`import fc from "fast-check"`).
 */
export interface FastCheckLike<A> {
  integer(constraints: { min: number; max: number }): A;
  double(constraints: { min: number; max: number; noNaN: boolean; noDefaultInfinity: boolean }): A;
  constantFrom(...values: string[]): A;
  boolean(): A;
  record(model: Record<string, A>): A;
}

/**
 * A fast-check arbitrary of parameter records for `knobs`: each knob drawn within its range, so a
 * property over a scenario's parameters that fails shrinks towards each knob's small end (the
 * least load, the shortest run) and the counterexample is a small scenario.
 *
 * @throws TypeError when `fc` is not fast-check or `knobs` is not a list of knobs, naming it
 *
 * @example
 * import fc from "fast-check";
 * import type { Knob } from "@tideward/sim";
 * // Light runs for a quick property: the load and the run length narrowed to their low end,
 * // and no spread over outage ends (its extra runs are the heavy part).
 * const light = (k: Knob): Knob =>
 *   k.kind === "select" || k.kind === "boolean" ? k
 *   : k.name === "spreadSeeds" ? { ...k, max: 0 }
 *   : k.name === "rate" || k.name === "duration" ? { ...k, max: k.min * 2 }
 *   : k;
 * const knobs = breakerOutage.knobs.map(light);
 * // Any parameters the knobs allow run without breaking an invariant. Knobs are drawn one by
 * // one: a constraint between two of them is the property's to state.
 * fc.assert(
 *   fc.property(knobArbitrary(fc, knobs), (params) => {
 *     fc.pre(params.outageTo >= params.outageFrom);
 *     breakerOutage.run(params);
 *   }),
 *   { numRuns: 3 },
 * );
 */
export function knobArbitrary<A>(fc: FastCheckLike<A>, knobs: readonly Knob[]): A {
  if (fc === null || (typeof fc !== "object" && typeof fc !== "function"))
    throw new TypeError(`knobArbitrary fc must be fast-check itself (its default export), got ${check.describe(fc)}`);
  for (const f of ["integer", "double", "constantFrom", "boolean", "record"]) {
    const member: unknown = (fc as unknown as Record<string, unknown>)[f];
    if (typeof member !== "function")
      throw new TypeError(
        `knobArbitrary fc must be fast-check itself (its default export): its ${f} is ${check.describe(member)}`,
      );
  }
  const model = byName<A>();
  for (const k of checkKnobs(knobs, "knobArbitrary")) {
    switch (k.kind) {
      case "integer":
        model[k.name] = fc.integer({ min: k.min, max: k.max });
        break;
      case "number":
        model[k.name] = fc.double({ min: k.min, max: k.max, noNaN: true, noDefaultInfinity: true });
        break;
      case "select":
        model[k.name] = fc.constantFrom(...k.options.map((o) => o.value));
        break;
      case "boolean":
        model[k.name] = fc.boolean();
        break;
    }
  }
  return fc.record(model);
}

/** The type a record drawn from {@link knobArbitrary} has. */
export type KnobRecord = Record<string, KnobValue>;
