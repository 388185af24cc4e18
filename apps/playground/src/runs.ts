// Each scenario's run, by id: the worker's side of the catalogue. The simulator's scenarios all
// run through one adapter; the page's own (the guard in front of a server) has a run of its own.
import type { Run } from "./model.ts";
import { guard } from "./runs/guard.ts";
import { simOutcome } from "./runs/sim.ts";
import { simScenarios } from "./sim-catalogue.ts";

export const runs: Readonly<Record<string, Run>> = {
  ...Object.fromEntries(simScenarios.map((s) => [s.id, (p, onProgress) => simOutcome(s.id, p, onProgress)] as const)),
  guard: (p) => guard(p),
};
