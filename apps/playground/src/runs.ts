// Each scenario's run, by id: the worker's side of the catalogue. The simulator's scenarios all
// run through one adapter; the page's own (the burst table, the quota engine, the guard) each
// have a run of their own.
import type { Run } from "./model.ts";
import { burst } from "./runs/burst.ts";
import { guard } from "./runs/guard.ts";
import { quota } from "./runs/quota.ts";
import { simOutcome } from "./runs/sim.ts";
import { simScenarios } from "./sim-catalogue.ts";

export const runs: Readonly<Record<string, Run>> = {
  ...Object.fromEntries(simScenarios.map((s) => [s.id, (p) => simOutcome(s.id, p)] as const)),
  burst,
  quota,
  guard,
};
