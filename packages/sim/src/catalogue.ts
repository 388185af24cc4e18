import type { Scenario } from "./scenario";
import { breakerOutage } from "./scenarios/breaker-outage";

/** Every scenario, by name, in the order a page lists them. */
export const catalogue: readonly Scenario[] = Object.freeze([breakerOutage]);

/** The scenario called `name`, or `undefined`. */
export function scenario(name: string): Scenario | undefined {
  return catalogue.find((s) => s.name === name);
}
