import { slackOf } from "@tideward/limiters/math";
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
  /** Units regained per millisecond (`refill / window`): the bucket's refill rate. */
  readonly perMs: number;
  /** GCRA's emission interval, and a bucket's time per token: ms per unit (`window / refill`). */
  readonly interval: number;
  /** GCRA's tolerance: `burst · interval`, in ms. */
  readonly tau: number;
  /** How far GCRA's TAT may run ahead of now after a charge, in ms: `tau` plus the slack. */
  readonly reach: number;
  /** Tokens a bucket forgives when comparing (`slackOf(capacity)`, as `@tideward/limiters` forgives). */
  readonly bucketSlack: number;
  /** Milliseconds GCRA forgives when comparing (`slackOf(burst) · interval`). */
  readonly gcraSlack: number;
  readonly tables: [SlotTable | undefined, SlotTable | undefined, SlotTable | undefined] = [undefined, undefined, undefined];
  /** The one-entry traces of every decision, by `kind · reasons.length + code`, made once and shared (frozen). */
  readonly traces: readonly (readonly string[])[];

  constructor(readonly spec: LimitSpec) {
    this.name = spec.name;
    this.capacity = spec.capacity;
    this.refill = spec.refill;
    this.window = spec.window;
    this.burst = spec.burst;
    this.align = spec.align;
    this.perMs = spec.refill / spec.window;
    this.interval = spec.window / spec.refill;
    this.tau = spec.burst * this.interval;
    this.bucketSlack = slackOf(spec.capacity);
    this.gcraSlack = slackOf(spec.burst) * this.interval;
    this.reach = this.tau + this.gcraSlack;
    this.traces = KIND_NAMES.flatMap((kind) => reasons.map((reason) => Object.freeze([`${kind} ${spec.name}: ${reason}`])));
  }

  /** The table of `kind`, made if it does not exist yet. */
  table(kind: Kind): SlotTable {
    return (this.tables[kind] ??= new SlotTable(kind, this));
  }

  /** The one-entry trace of a decision of `kind` with `code`. */
  trace(kind: Kind, code: Code): readonly string[] {
    return this.traces[kind * reasons.length + code];
  }
}
