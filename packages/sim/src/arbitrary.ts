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
 * @example
 * fc.assert(fc.property(knobArbitrary(fc, myScenario.knobs), (params) => { myScenario.run(params); }));
 */
export function knobArbitrary<A>(fc: FastCheckLike<A>, knobs: readonly Knob[]): A {
  const model: Record<string, A> = {};
  for (const k of knobs) {
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
