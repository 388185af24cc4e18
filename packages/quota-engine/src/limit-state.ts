import { rebase } from "./algorithms";
import { reasons } from "./decision";
import { KIND_NAMES } from "./kinds";
import type { QuotaKey } from "./key";
import type { Kind } from "./kinds";
import type { LimitSpec, OverrideFields } from "./limit";
import type { Code } from "./outcome";
import { step } from "./outcome";
import { Rule } from "./rule";
import { STRIDE, SlotTable } from "./table";

/** What an override is: the key it is for, the fields it sets, and the traces it shares with the limit's other overrides. */
export interface Own {
  readonly key: QuotaKey;
  readonly fields: OverrideFields;
  readonly traces: readonly (readonly string[])[];
}

/** The one-entry traces of every decision of the limit `label`, by `kind · reasons.length + code` (frozen). */
export function traces(label: string): readonly (readonly string[])[] {
  return KIND_NAMES.flatMap((kind) => reasons.map((reason) => Object.freeze([`${kind} ${label}: ${reason}`])));
}

/**
 * A limit as an engine holds it: the spec, its numbers ({@link Rule}), one table of key state per
 * algorithm (made on first use) and the traces its decisions carry. A limit replaced while the
 * engine runs keeps this object (and every key's slot), its numbers and state re-based in place.
 */
export class LimitState {
  spec: LimitSpec;
  rule: Rule;
  readonly tables: [SlotTable | undefined, SlotTable | undefined, SlotTable | undefined] = [
    undefined,
    undefined,
    undefined,
  ];
  /** The one-entry traces of every decision, by `kind · reasons.length + code`, made once and shared (frozen). */
  readonly traces: readonly (readonly string[])[];
  /**
   * The keys with a limit of their own under this one's name (see `setOverride`), by key id; each
   * keeps that key's state in its own tables. Undefined while there are none, so that a check of a
   * limit without overrides pays one comparison for them.
   */
  overrides: Map<string, LimitState> | undefined;
  // The traces every override of this limit shares (made with the first).
  #overrideTraces: readonly (readonly string[])[] | undefined;

  /**
   * For an override: the key it is for and the fields it sets (the others are the limit's own, so
   * they follow it when it is replaced); undefined for a limit.
   */
  own: Own | undefined;

  constructor(spec: LimitSpec, own?: Own) {
    this.spec = spec;
    this.rule = new Rule(spec);
    this.own = own;
    this.traces = own?.traces ?? traces(spec.name);
  }

  /** What an override of this limit for `key`, setting `fields`, is. */
  ownFor(key: QuotaKey, fields: OverrideFields): Own {
    this.#overrideTraces ??= traces(`${this.spec.name} (override)`);
    return { key, fields, traces: this.#overrideTraces };
  }

  /** The limit `key` is held to under this name: its override, or this one. */
  forKey(key: QuotaKey): LimitState {
    return this.overrides === undefined ? this : (this.overrides.get(key.id) ?? this);
  }

  /** The table of `kind`, made if it does not exist yet (an override's small: it holds one key). */
  table(kind: Kind): SlotTable {
    return (this.tables[kind] ??= new SlotTable(kind, this.rule, undefined, this.own === undefined ? undefined : 2));
  }

  /** The one-entry trace of a decision of `kind` with `code`. */
  trace(kind: Kind, code: Code): readonly string[] {
    return this.traces[kind * reasons.length + code];
  }

  /**
   * Takes `spec` in place of its own at `t`: every key's state re-based onto the new numbers (a
   * bucket keeps its level, clamped to the new capacity; a window its count; a flow its TAT), in
   * place, each key keeping its slot.
   */
  replace(spec: LimitSpec, t: number): void {
    const next = new Rule(spec);
    for (const table of this.tables) {
      if (table === undefined) continue;
      const { kind, data } = table;
      table.each((_, slot) => {
        const at = slot * STRIDE;
        rebase(kind, this.rule, next, data[at], data[at + 1], t);
        data[at] = step.amount;
        data[at + 1] = step.instant;
      });
      table.rule = next;
    }
    this.spec = spec;
    this.rule = next;
  }

  /** Keys with state here, over every algorithm. */
  get keys(): number {
    let n = 0;
    for (const table of this.tables) n += table?.size ?? 0;
    return n;
  }
}
