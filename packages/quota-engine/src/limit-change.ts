// Limits that change while the engine runs: a spec or an override's fields read once and checked
// (a getter gets one say, a throwing one is a spec that cannot be read), and a key's state moved
// between a limit and its override for that key, re-based onto the numbers it moves to.
import { rebase } from "./algorithms";
import { describeError, strayError } from "./args";
import type { QuotaKey } from "./key";
import type { KeySpace } from "./key-space";
import { BUCKET, GCRA, WINDOW } from "./kinds";
import { FIELDS, OVERRIDE_FIELDS, limitProblem, readSpec } from "./limit";
import type { LimitSpec, OverrideFields } from "./limit";
import type { LimitState } from "./limit-state";
import { step } from "./outcome";
import { STRIDE } from "./table";

const KINDS = [BUCKET, WINDOW, GCRA] as const;

/**
 * `spec` read once into a frozen copy and checked: the copy, or why it is not a limit (a field it
 * lacks is named with the nearest one it has: `did you mean "align"?`).
 */
export function parseLimit(spec: unknown): LimitSpec | string {
  try {
    const copy = readSpec(spec);
    if (copy === undefined) return limitProblem(spec) ?? "LimitSpec must be an object";
    for (const k of Object.keys(spec as object))
      if (!(FIELDS as readonly string[]).includes(k)) return strayError(k, FIELDS, "LimitSpec").message;
    const problem = limitProblem(copy);
    if (problem !== undefined) return problem;
    const { name, capacity, refill, window, burst, align } = copy as unknown as LimitSpec;
    return Object.freeze({ name, capacity, refill, window, burst, align });
  } catch (e) {
    return `LimitSpec could not be read: ${describeError(e)}`;
  }
}

/**
 * An override's fields read once into a frozen copy of those given (own fields only), or why they
 * cannot be: not an object, a field no override has, a getter that throws.
 */
export function parseOverride(fields: unknown): OverrideFields | string {
  if (fields === null || typeof fields !== "object" || Array.isArray(fields))
    return `override fields must be an object (such as { capacity: 50 }), got ${fields === null ? "null" : Array.isArray(fields) ? "an array" : typeof fields}`;
  try {
    const copy: Record<string, unknown> = {};
    for (const k of Object.keys(fields)) {
      if (!(OVERRIDE_FIELDS as readonly string[]).includes(k))
        return strayError(k, OVERRIDE_FIELDS, "override fields").message;
      copy[k] = (fields as Record<string, unknown>)[k];
    }
    return Object.freeze(copy);
  } catch (e) {
    return `override fields could not be read: ${describeError(e)}`;
  }
}

/** The spec a key with an override of `fields` is held to under `base`: the override's fields over the limit's. */
export function overrideSpec(base: LimitSpec, fields: OverrideFields): LimitSpec {
  return Object.freeze({ ...base, ...fields, name: base.name });
}

/**
 * Moves `key`'s state, of every algorithm, from `from`'s tables to `to`'s at `t`, re-based onto
 * `to`'s numbers (a bucket keeps its level, clamped; a window its count; a flow its TAT). The key
 * keeps one state either way, so the key count does not move.
 */
export function moveKey(key: QuotaKey, from: LimitState, to: LimitState, t: number): void {
  for (const kind of KINDS) {
    const table = from.tables[kind];
    const slot = table === undefined ? -1 : table.find(key);
    if (table === undefined || slot < 0) continue;
    const at = slot * STRIDE;
    rebase(kind, from.rule, to.rule, table.data[at], table.data[at + 1], t);
    const amount = step.amount;
    const instant = step.instant;
    table.remove(slot);
    const into = to.table(kind);
    const next = into.add(key) * STRIDE;
    into.data[next] = amount;
    into.data[next + 1] = instant;
  }
}

/** Forgets `limit`'s state and its overrides' from the key count; returns how many overrides it had. */
export function forgetLimit(limit: LimitState, space: KeySpace): number {
  let keys = limit.keys;
  for (const o of limit.overrides?.values() ?? []) keys += o.keys;
  space.forget(keys);
  return limit.overrides?.size ?? 0;
}
