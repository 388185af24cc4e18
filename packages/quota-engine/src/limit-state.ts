import { reasons } from "./decision";
import { KIND_NAMES } from "./kinds";
import type { QuotaKey } from "./key";
import type { Kind } from "./kinds";
import type { LimitSpec } from "./limit";
import type { Code } from "./outcome";
import { Rule } from "./rule";
import { SlotTable } from "./table";

/**
 * A limit as an engine holds it: the spec, its numbers ({@link Rule}), one table of key state per
 * algorithm (made on first use) and the traces its decisions carry.
 */
export class LimitState {
  readonly rule: Rule;
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

  /**
   * @param label - how traces name the limit: its name, with the key for an override
   */
  constructor(
    readonly spec: LimitSpec,
    label = spec.name,
  ) {
    this.rule = new Rule(spec);
    this.traces = KIND_NAMES.flatMap((kind) => reasons.map((reason) => Object.freeze([`${kind} ${label}: ${reason}`])));
  }

  /** The limit `key` is held to under this name: its override, or this one. */
  forKey(key: QuotaKey): LimitState {
    return this.overrides === undefined ? this : (this.overrides.get(key.id) ?? this);
  }

  /** The table of `kind`, made if it does not exist yet. */
  table(kind: Kind): SlotTable {
    return (this.tables[kind] ??= new SlotTable(kind, this.rule));
  }

  /** The one-entry trace of a decision of `kind` with `code`. */
  trace(kind: Kind, code: Code): readonly string[] {
    return this.traces[kind * reasons.length + code];
  }
}
