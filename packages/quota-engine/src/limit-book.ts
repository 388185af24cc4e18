// The limits of an engine, by name, as they change while it runs: added, replaced (every key's
// state re-based onto the new numbers), removed, and overridden for one key (that key's state
// moved between the limit and its override). A spec or an override's fields are read once and
// checked first (a getter gets one say, a throwing one is a spec that cannot be read); nothing
// changes unless all of it is valid.
import { rebase } from "./algorithms";
import { describeError, strayError } from "./args";
import type { QuotaKey } from "./key";
import type { KeySpace } from "./key-space";
import { BUCKET, GCRA, WINDOW } from "./kinds";
import { FIELDS, OVERRIDE_FIELDS, limitProblem, readSpec } from "./limit";
import type { LimitSpec, OverrideFields } from "./limit";
import { LimitState } from "./limit-state";
import type { Links } from "./hierarchy";
import { done, refused } from "./result";
import type { Result } from "./result";
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

const unknown = (name: string): Result<"unknown_limit"> =>
  refused("unknown_limit", `no limit is named ${JSON.stringify(name)}`);

/**
 * The limits of one engine: a Map by name (which the engine's checks read directly) and the count
 * of overrides. Each change takes the engine's instant as a function, called only once the change
 * is known to be valid, so a refused change does not move the engine's clock.
 */
export class LimitBook {
  /** Every limit by name, in the order added. */
  readonly map = new Map<string, LimitState>();
  /** Overrides held, over every limit. */
  overrides = 0;

  /** Adds a limit, or says why not. */
  add(spec: unknown): Result<"duplicate_limit" | "invalid_limit"> {
    const copy = parseLimit(spec);
    if (typeof copy === "string") return refused("invalid_limit", copy);
    if (this.map.has(copy.name))
      return refused("duplicate_limit", `a limit named ${JSON.stringify(copy.name)} exists already`);
    this.map.set(copy.name, new LimitState(copy));
    return done;
  }

  /** Replaces the limit of `spec`'s name (and re-bases its overrides) at `at()`, or says why not. */
  replace(spec: unknown, at: () => number): Result<"unknown_limit" | "invalid_limit"> {
    const copy = parseLimit(spec);
    if (typeof copy === "string") return refused("invalid_limit", copy);
    const held = this.map.get(copy.name);
    if (held === undefined) return unknown(copy.name);
    // Every override under the new spec, checked before anything changes.
    const specs = new Map<LimitState, LimitSpec>();
    for (const o of held.overrides?.values() ?? []) {
      const { key, fields } = o.own as NonNullable<LimitState["own"]>;
      const next = overrideSpec(copy, fields);
      const problem = limitProblem(next);
      if (problem !== undefined)
        return refused("invalid_limit", `the override for ${key.id} would not be a valid limit: ${problem}`);
      specs.set(o, next);
    }
    const t = at();
    held.replace(copy, t);
    for (const [o, next] of specs) o.replace(next, t);
    return done;
  }

  /** Removes the limit named `name` with its state, overrides and links, or says why not; the limit removed, if any. */
  remove(name: string, space: KeySpace, links: Links): Result<"unknown_limit"> {
    const held = this.map.get(name);
    if (held === undefined) return unknown(name);
    let keys = held.keys;
    for (const o of held.overrides?.values() ?? []) keys += o.keys;
    space.forget(keys);
    this.overrides -= held.overrides?.size ?? 0;
    this.map.delete(name);
    links.removeLimit(name);
    return done;
  }

  /** Gives `key` an override of `limit` setting `fields`, at `at()`, or says why not. */
  setOverride(
    key: QuotaKey,
    limit: string,
    fields: unknown,
    most: number,
    at: () => number,
  ): Result<"unknown_limit" | "invalid_override" | "override_limit"> {
    const base = this.map.get(limit);
    if (base === undefined) return unknown(limit);
    const given = parseOverride(fields);
    if (typeof given === "string") return refused("invalid_override", given);
    const spec = overrideSpec(base.spec, given);
    const problem = limitProblem(spec);
    if (problem !== undefined) return refused("invalid_override", `the override for ${key.id}: ${problem}`);
    const held = base.overrides?.get(key.id);
    if (held === undefined && this.overrides >= most)
      return refused(
        "override_limit",
        `${this.overrides} overrides exist, the engine's maxOverrides: remove one, or raise maxOverrides`,
      );
    const t = at();
    if (held !== undefined) {
      held.replace(spec, t);
      held.own = base.ownFor(key, given);
      return done;
    }
    const own = new LimitState(spec, base.ownFor(key, given));
    moveKey(key, base, own, t);
    (base.overrides ??= new Map()).set(key.id, own);
    this.overrides++;
    return done;
  }

  /** Takes `key`'s override of `limit` away at `at()`, its state moved back, or says why not. */
  removeOverride(key: QuotaKey, limit: string, at: () => number): Result<"unknown_limit" | "unknown_override"> {
    const base = this.map.get(limit);
    if (base === undefined) return unknown(limit);
    const own = base.overrides?.get(key.id);
    if (own === undefined) return refused("unknown_override", `${key.id} has no override of ${JSON.stringify(limit)}`);
    moveKey(key, own, base, at());
    base.overrides?.delete(key.id);
    if (base.overrides?.size === 0) base.overrides = undefined;
    this.overrides--;
    return done;
  }

  /** Takes on restored limits and their overrides. */
  restore(limits: ReadonlyMap<string, LimitState>, overrides: number): void {
    this.map.clear();
    for (const [name, held] of limits) this.map.set(name, held);
    this.overrides = overrides;
  }
}
