import { reasons } from "./decision";
import { KIND_NAMES } from "./kinds";
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

  constructor(readonly spec: LimitSpec) {
    this.rule = new Rule(spec);
    this.traces = KIND_NAMES.flatMap((kind) =>
      reasons.map((reason) => Object.freeze([`${kind} ${spec.name}: ${reason}`])),
    );
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
