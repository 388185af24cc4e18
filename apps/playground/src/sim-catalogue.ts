// The simulator's catalogue, loaded: for the worker and the tests, which run the scenarios. The
// page's own script never imports this module; it asks the worker for the descriptions instead.
import { catalogue } from "@tideward/sim";
import { pageScenarios } from "./catalogue.ts";
import type { Scenario } from "./model.ts";
import { metaOf, pageScenario } from "./sim-scenarios.ts";
import type { SimMeta } from "./sim-scenarios.ts";

/** Every scenario of the simulator's catalogue, described, in the catalogue's order. */
export const simMetas: readonly SimMeta[] = catalogue.map(metaOf);

/** The same as the page's scenarios. */
export const simScenarios: readonly Scenario[] = simMetas.map(pageScenario);

/** Every scenario the page shows, in the order of its tabs: the simulator's first, under one tab. */
export const scenarios: readonly Scenario[] = [...simScenarios, ...pageScenarios];

/** Whether the page scenario `id` is one of the simulator's. */
export function isSim(id: string): boolean {
  return simMetas.some((s) => s.name === id);
}
