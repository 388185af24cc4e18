// The batch path: up to BATCH_CHUNK decisions against one limit in one script call, each input
// on its own (not atomic), in input order, and their decisions replayed from the reply as the
// script took them.
import { BUCKET, OK, decide, freshAmount, freshInstant, step } from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import type { RedisDecision } from "./decision";
import { costArg, verdict } from "./rules";
import type { Rule } from "./rules";
import { slotOf } from "./slot";

/** Inputs a batch script call carries at most. */
export const BATCH_CHUNK = 256;

/**
 * The inputs of a batch cut into script calls (lists of input indexes): by cluster slot when
 * `cluster`, else in input order, at most {@link BATCH_CHUNK} a call, each key's inputs in order.
 */
export function batchParts(names: readonly string[], cluster: boolean): number[][] {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < names.length; i++) {
    const g = cluster ? slotOf(names[i]) : 0;
    let list = groups.get(g);
    if (list === undefined) groups.set(g, (list = []));
    list.push(i);
  }
  const parts: number[][] = [];
  for (const list of groups.values())
    for (let s = 0; s < list.length; s += BATCH_CHUNK) parts.push(list.slice(s, s + BATCH_CHUNK));
  return parts;
}

/** The inputs of a batch, read once (see `readInputs`), with each one's Redis key. */
export interface BatchInputs {
  readonly nows: Float64Array;
  readonly costs: Float64Array;
  readonly names: readonly string[];
}

/** The keys and arguments of one script call of the inputs `list` (indexes into `inputs`). */
export function batchWire(
  kind: Kind,
  rule: Rule,
  list: readonly number[],
  inputs: BatchInputs,
  serverClock: boolean,
  margin: string,
): { keys: string[]; args: string[] } {
  const a = rule.args[kind];
  const { nows, costs, names } = inputs;
  const first = nows[list[0]];
  const keys = new Array<string>(list.length);
  const args = new Array<string>(6 + 2 * list.length);
  args[0] = serverClock ? "" : String(first);
  args[1] = "s";
  args[2] = "0";
  args[3] = margin;
  args[4] = a[0];
  args[5] = a[1];
  for (let x = 0; x < list.length; x++) {
    const i = list[x];
    keys[x] = names[i];
    args[6 + 2 * x] = costArg(costs[i], false); // in a batch every input stands alone
    args[7 + 2 * x] = serverClock || nows[i] === first ? "" : String(nows[i]);
  }
  return { keys, args };
}

/**
 * The decisions of the inputs `list` into `out`, from the script's reply `r`: each input at its
 * own now, never behind the batch's clock nor a bucket's reading, on the state the earlier ones
 * left.
 */
export function batchDecisions(
  kind: Kind,
  rule: Rule,
  list: readonly number[],
  inputs: BatchInputs,
  serverClock: boolean,
  r: Buffer,
  out: RedisDecision[],
): void {
  const { nows, costs, names } = inputs;
  const base = r.readDoubleLE(1);
  const numbers = rule.numbers;
  const slot = new Map<string, number>();
  const sa: number[] = [];
  const sb: number[] = [];
  let clock = base;
  for (let x = 0; x < list.length; x++) {
    const i = list[x];
    const name = names[i];
    const now = serverClock ? base : nows[i];
    let t = now < clock ? clock : now;
    let at = slot.get(name);
    if (at === undefined) {
      at = sa.length;
      slot.set(name, at);
      const v = r.readDoubleLE(9 + at * 16);
      sa.push(v === v ? v : freshAmount(kind, numbers));
      sb.push(v === v ? r.readDoubleLE(17 + at * 16) : freshInstant(kind, t));
    }
    if (kind === BUCKET && sb[at] > t && !numbers.oneNumber) t = sb[at];
    clock = t;
    const code = decide(kind, numbers, sa[at], sb[at], t, costs[i]);
    if (code === OK) {
      sa[at] = step.amount;
      sb[at] = step.instant;
    }
    out[i] = verdict(kind, rule, costs[i], code, now, t, "store", false);
  }
}
