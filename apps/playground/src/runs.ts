// Each scenario's run, by id: the worker's side of the catalogue.
import type { Run } from "./model.ts";
import { breaker } from "./runs/breaker.ts";
import { burst } from "./runs/burst.ts";
import { guard } from "./runs/guard.ts";
import { herd } from "./runs/herd.ts";
import { quota } from "./runs/quota.ts";
import { shedder } from "./runs/shedder.ts";
import { sweep } from "./runs/sweep.ts";

export const runs: Readonly<Record<string, Run>> = { breaker, shedder, burst, herd, quota, sweep, guard };
