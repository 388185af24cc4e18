// What the scenarios with a backend outage share: its two knobs and the check that ties them.
import type { NumberKnob } from "../scenario";

/** The knobs `outageFrom` and `outageTo`: when the backend starts failing and when it recovers, in seconds into the run. */
export function outageKnobs(from: number, to: number, max: number): NumberKnob[] {
  return [
    {
      kind: "number",
      name: "outageFrom",
      label: "Outage starts",
      doc: "When the backend starts failing.",
      default: from,
      min: 0,
      max,
      step: 1,
      unit: "s",
    },
    {
      kind: "number",
      name: "outageTo",
      label: "Outage ends",
      doc: "When it recovers.",
      default: to,
      min: 0,
      max,
      step: 1,
      unit: "s",
    },
  ];
}

/**
 * The outage `[from, to)` in milliseconds.
 * @throws RangeError, naming `scenario`, when it ends before it starts
 */
export function outageOf(
  scenario: string,
  p: { readonly outageFrom: number; readonly outageTo: number },
): { readonly from: number; readonly to: number } {
  if (p.outageTo < p.outageFrom)
    throw new RangeError(
      `scenario ${scenario} outageTo (${p.outageTo} s) must be at least outageFrom (${p.outageFrom} s)`,
    );
  return { from: p.outageFrom * 1_000, to: p.outageTo * 1_000 };
}
