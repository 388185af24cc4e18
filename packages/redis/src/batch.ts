// The batch path: up to BATCH_CHUNK decisions against one limit in one script call, each input
// on its own (not atomic), in input order, and their decisions replayed from the reply as the
// script took them.
import { BUCKET, OK, decide, freshAmount, freshInstant, step } from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import type { RedisDecision } from "./decision";
import { verdict } from "./rules";
import type { Rule } from "./rules";
import { slotOf } from "./slot";
import { GENERAL_STATES, STATE } from "./wire";
import type { BatchInputs } from "./wire";

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
  // The batch's clock, after the reply's first byte.
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
      const v = r.readDoubleLE(GENERAL_STATES + at * STATE);
      sa.push(v === v ? v : freshAmount(kind, numbers));
      sb.push(v === v ? r.readDoubleLE(GENERAL_STATES + at * STATE + 8) : freshInstant(kind, t));
    }
    if (kind === BUCKET && sb[at] > t && !numbers.oneNumber) t = sb[at];
    clock = t;
    const code = decide(kind, numbers, sa[at], sb[at], t, costs[i]);
    if (code === OK) {
      sa[at] = step.amount;
      sb[at] = step.instant;
    }
    out[i] = verdict({ rule, kind, cost: costs[i], code, figures: step, now, at: t, path: "store", replayed: false });
  }
}
