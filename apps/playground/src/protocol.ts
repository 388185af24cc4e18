// The messages between the page and its simulation worker.
import type { Outcome, Params } from "./model.ts";
import type { SimMeta } from "./sim-scenarios.ts";
import type { Point } from "./tuner-model.ts";

/** Page → worker: run this scenario with these knobs. */
export interface RunRequest {
  /** Increases with every request, so the page can tell the answer to its latest one. */
  readonly seq: number;
  readonly scenario: string;
  readonly params: Params;
}

/** Worker → page: the outcome (or why there is none) and how long the run took, in milliseconds. */
export type RunAnswer =
  | { readonly seq: number; readonly ok: true; readonly outcome: Outcome; readonly elapsed: number }
  | { readonly seq: number; readonly ok: false; readonly error: string; readonly elapsed: number };

/** Worker → page: run `seq` has offered `done` of about `total` calls (`null`: no estimate), told as it goes. */
export interface ProgressAnswer {
  readonly kind: "progress";
  readonly seq: number;
  readonly done: number;
  readonly total: number | null;
}

/** Page → tuner's worker: run scenario `of` at each of `points` (each laid over its defaults). */
export interface SweepRequest {
  readonly kind: "sweep";
  readonly of: string;
  readonly points: readonly Readonly<Record<string, number>>[];
}

/** Tuner's worker → page: point `index` done, or the sweep stopped on an error. */
export type SweepAnswer =
  | { readonly kind: "point"; readonly index: number; readonly point: Point }
  | { readonly kind: "error"; readonly index: number; readonly error: string };

/** Page → worker: describe the simulator's catalogue (the page's script does not load the simulator). */
export interface CatalogueRequest {
  readonly kind: "catalogue";
}

/** Worker → page: the catalogue's scenarios, described. */
export interface CatalogueAnswer {
  readonly kind: "catalogue";
  readonly scenarios: readonly SimMeta[];
}
