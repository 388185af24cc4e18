import type { ChargeKind } from "./charge";

export const BUCKET = 0;
export const WINDOW = 1;
export const GCRA = 2;
/** A {@link ChargeKind} as an index. */
export type Kind = 0 | 1 | 2;

/** The names, by {@link Kind}. */
export const KIND_NAMES: readonly ChargeKind[] = ["bucket", "window", "gcra"];

/** The {@link Kind} of a charge kind, or -1 for anything else. */
export function kindOf(kind: unknown): Kind | -1 {
  return kind === undefined || kind === "bucket" ? BUCKET : kind === "window" ? WINDOW : kind === "gcra" ? GCRA : -1;
}
