import type { LimitSpec } from "./limit";
import { reasons } from "./decision";
import { KIND_NAMES } from "./kinds";
import type { Kind } from "./kinds";
import type { Code } from "./outcome";
import { SlotTable } from "./table";

/**
 * A limit as the engine holds it: the spec's numbers as own fields (read on every check), the
 * numbers derived from them, and one table of key state per algorithm, made on first use.
 */
export class Rule {
  readonly name: string;
  readonly capacity: number;
  readonly refill: number;
  readonly window: number;
  readonly burst: number;
  readonly align: boolean;
  /** GCRA's tolerance: how far ahead of schedule a key may be, in ms (`burst · window / refill`). */
  readonly tau: number;
  /** GCRA's comparison slack in ms: a microsecond, or a thousandth of a unit's interval if that is less. */
  readonly slack: number;
  readonly tables: [SlotTable | undefined, SlotTable | undefined, SlotTable | undefined] = [undefined, undefined, undefined];
  readonly #traces: (readonly string[])[] = [];

  constructor(readonly spec: LimitSpec) {
    this.name = spec.name;
    this.capacity = spec.capacity;
    this.refill = spec.refill;
    this.window = spec.window;
    this.burst = spec.burst;
    this.align = spec.align;
    this.tau = (spec.burst * spec.window) / spec.refill;
    this.slack = Math.min(0.001, spec.window / spec.refill / 1000);
  }

  /** The table of `kind`, made if it does not exist yet. */
  table(kind: Kind): SlotTable {
    return (this.tables[kind] ??= new SlotTable(kind, this));
  }

  /** The one-entry trace of a decision of `kind` with `code`, made once and shared (frozen). */
  trace(kind: Kind, code: Code): readonly string[] {
    const at = kind * reasons.length + code;
    return (this.#traces[at] ??= Object.freeze([`${KIND_NAMES[kind]} ${this.name}: ${reasons[code]}`]));
  }
}
