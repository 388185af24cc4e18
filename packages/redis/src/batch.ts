// The batch path: up to BATCH_CHUNK decisions against one limit in one script call, each input
// on its own (not atomic), in input order, and their decisions replayed from the reply as the
// script took them.
import { BUCKET, OK, decide, freshAmount, freshInstant, step } from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import type { QuotaKey } from "@tideward/quota-engine";
import { bytes } from "./bytes";
import type { RedisBatchReport, RedisDecision } from "./decision";
import type { Names } from "./names";
import { unknownVerdict, verdict } from "./rules";
import type { Rule } from "./rules";
import { slotOf } from "./slot";
import { ANSWERED } from "./runner";
import type { Outcome, Runner } from "./runner";
import { quota } from "./scripts";
import { Section, live } from "./versions";
import { GENERAL_STATES, STATE, batchWire } from "./wire";
import type { BatchInputs } from "./wire";

/** Inputs a batch script call carries at most. */
export const BATCH_CHUNK = 256;

/**
 * The inputs of a batch cut into script calls (lists of input indexes): by cluster slot when
 * `cluster` (and by `rules[i]`, the limit an input is held to, when given), else in input order, at most {@link BATCH_CHUNK} a call, each key's inputs in order.
 */
export function batchParts(names: readonly string[], cluster: boolean, rules?: Uint32Array): number[][] {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < names.length; i++) {
    // By slot, and by limit when keys have overrides of it (a call carries one limit's numbers).
    const g = (cluster ? slotOf(names[i]) : 0) + (rules === undefined ? 0 : rules[i] * 16384);
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

/** The batch's report when its limit has no such name: every input refused `unknown_limit`. */
export function unknownBatch(kind: Kind, limit: string, costs: Float64Array): RedisBatchReport {
  const n = costs.length;
  const decisions = new Array<RedisDecision>(n);
  for (let i = 0; i < n; i++) decisions[i] = unknownVerdict(kind, limit, costs[i]);
  return { total: n, allowed: 0, denied: n, decisions };
}

/** What a batch uses of its engine. */
export interface BatchEngine {
  readonly runner: Runner;
  readonly names: Names;
  readonly cluster: boolean;
  readonly serverClock: boolean;
  readonly margin: string;
  /** An input's decision from the outage mode, for a call Redis did not answer. */
  readonly outage: (outcome: Outcome, key: QuotaKey, now: number, cost: number) => RedisDecision;
}

/**
 * Checks the inputs (read once) one after another against `rule`, many per script call, split
 * by slot on a cluster, each key's inputs in order; an unanswered call's inputs from the outage mode.
 */
export async function runBatch(
  kind: Kind,
  rule: Rule,
  limit: string,
  inputs: { readonly keys: readonly QuotaKey[]; readonly nows: Float64Array; readonly costs: Float64Array },
  e: BatchEngine,
): Promise<RedisBatchReport> {
  const { keys, nows, costs } = inputs;
  const n = keys.length;
  const decisions = new Array<RedisDecision>(n);
  const names = new Array<string>(n);
  const tags = new Array<string>(n);
  // Each input's limit: `rule`, or its key's override of it (then in a call of its own).
  const ruleOf = (i: number): Rule => (rule.overrides === undefined ? rule : (rule.overrides.get(keys[i].id) ?? rule));
  const held: Rule[] = [rule];
  const which = rule.overrides === undefined ? undefined : new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const r = ruleOf(i);
    if (which !== undefined) {
      let at = held.indexOf(r);
      if (at < 0) at = held.push(r) - 1;
      which[i] = at;
    }
    tags[i] = e.names.tag(keys[i]);
    names[i] = e.names.state(tags[i], kind, limit, keys[i], r.numbers.oneNumber, r.suffix);
  }
  const parts = batchParts(names, e.cluster, which);
  await Promise.all(
    parts.map((part) => {
      const r = which === undefined ? rule : held[which[part[0]]];
      let versions: Section | undefined;
      if (r.versions.length !== 0 && live(r, nows[part[0]])) {
        versions = new Section();
        for (let x = 0; x < part.length; x++) {
          const i = part[x];
          versions.add(x + 1, r, kind, nows[i], part.length + 1, e.names, tags[i], keys[i]);
        }
      }
      const wire = batchWire(kind, r, part, { nows, costs, names }, e.serverClock, e.margin, versions);
      return e.runner.run(quota, wire.keys, wire.args).then((outcome) => {
        if (outcome.status !== ANSWERED) {
          for (const i of part) decisions[i] = e.outage(outcome, keys[i], nows[i], costs[i]);
          return;
        }
        const reply = bytes(outcome.reply, quota.name, GENERAL_STATES + STATE);
        batchDecisions(kind, r, part, { nows, costs, names }, e.serverClock, reply, decisions);
      });
    }),
  );
  let allowed = 0;
  for (const d of decisions) if (d.allowed) allowed++;
  return { total: n, allowed, denied: n - allowed, decisions };
}
