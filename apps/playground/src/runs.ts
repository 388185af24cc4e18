// Each scenario's run, by id: the worker's side of the catalogue.
import type { Run } from "./model.ts";
import { burst } from "./runs/burst.ts";

export const runs: Readonly<Record<string, Run>> = { burst };
