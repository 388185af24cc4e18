// The engine's single checks — token bucket, fixed window, GCRA on one key — and the clock they
// keep: the hot path, on its own. Each step is a method of its own so that V8 optimises it on its
// own feedback; the engine's instant is read from `clock`, never passed in (a number passed to a
// call that is not inlined is boxed, and on traffic of new keys those calls are the hot path).
import {
  bucketFits,
  bucketFull,
  bucketLevel,
  bucketWhole,
  gcraFits,
  gcraLead,
  gcraRest,
  gcraWhole,
  until,
} from "@tideward/limiters/math";
import { decide, freshAmount, freshInstant } from "./algorithms";
import { checkArgs, limitError } from "./args";
import type { BatchInputs } from "./args";
import { Verdict, reasons, unknownLimit } from "./decision";
import type { Decision } from "./decision";
import type { BatchReport } from "./charge";
import type { QuotaKey } from "./key";
import type { KeySpace } from "./key-space";
import { BUCKET, KIND_NAMES } from "./kinds";
import type { Kind } from "./kinds";
import type { LimitState } from "./limit-state";
import { KEY_LIMIT, OK, step } from "./outcome";
import type { Code } from "./outcome";
import { STRIDE } from "./table";
import type { SlotTable } from "./table";

/** An engine's single checks over its limits and key space, and its clock. */
export class Checks {
  /** The latest instant seen (ms); -Infinity before the first. The engine's clock, read and moved by every call. */
  clock = -Infinity;
  readonly #limits: Map<string, LimitState>;
  readonly #space: KeySpace;
  // The limit last looked up by name: most callers check one limit over and over.
  #lastName: string | undefined;
  #last: LimitState | undefined;

  constructor(limits: Map<string, LimitState>, space: KeySpace) {
    this.#limits = limits;
    this.#space = space;
  }

  /** The engine's instant for the caller's `now`: `now`, or the latest seen if that is later. */
  advance(now: number): number {
    return now > this.clock ? (this.clock = now) : this.clock;
  }

  /** Checks each input in turn against `limit` under `kind`, in input order (see QuotaEngine.checkMany). */
  many(limit: string, kind: Kind, inputs: BatchInputs): BatchReport {
    const { keys, nows, costs } = inputs;
    const n = keys.length;
    const decisions = new Array<Decision>(n);
    let allowed = 0;
    for (let i = 0; i < n; i++) {
      const d =
        kind === BUCKET
          ? this.bucket(keys[i], limit, nows[i], costs[i])
          : this.check(kind, keys[i], limit, nows[i], costs[i]);
      if (d.allowed) allowed++;
      decisions[i] = d;
    }
    return { total: n, allowed, denied: n - allowed, decisions };
  }

  /** Forgets the limit last looked up (it was removed, or every limit replaced). */
  forget(): void {
    this.#lastName = undefined;
    this.#last = undefined;
  }

  /** A token-bucket check (see QuotaEngine.checkTokenBucket). */
  bucket(key: QuotaKey, limit: string, now: number, cost: number): Decision {
    const held = this.#prelude(key, limit, now, cost);
    if (held === undefined) return this.#unknown(BUCKET, limit, cost);
    const table = held.tables[BUCKET];
    const slot = table === undefined ? -1 : table.find(key);
    return slot < 0 ? this.#first(BUCKET, held, key, now, cost) : this.#take(held, table as SlotTable, slot, now, cost);
  }

  // The hot path: a key with state in a bucket. One slot read, one slot write, one object. A method
  // of its own, so that V8 optimises it on its own feedback with every formula inlined, whatever
  // traffic the caller's code was compiled on (a check compiled while every key was new would
  // otherwise keep the formulas as calls, boxing each number they return).
  #take(held: LimitState, table: SlotTable, slot: number, now: number, cost: number): Decision {
    if (held.rule.oneNumber) return this.#takeFull(held, table, slot, now, cost);
    const t = this.clock;
    const data = table.data;
    const at = slot * STRIDE;
    const tokens = data[at];
    const counted = data[at + 1];
    const { perMs, capacity, bucketSlack } = held.rule;
    const level = bucketLevel(tokens, counted, t, perMs, capacity);
    if (!bucketFits(level, cost, capacity, bucketSlack)) return this.#denied(BUCKET, held, tokens, counted, now, cost);
    const left = level - cost;
    const since = t > counted ? t : counted;
    data[at] = left;
    data[at + 1] = since;
    const reset = until(now, t, bucketFull(left, since, t, perMs, capacity, bucketSlack));
    return new Verdict(true, "ok", cost, bucketWhole(left, capacity, bucketSlack), 0, reset, held.traces[OK]);
  }

  // The hot path of a bucket of one number: its "full again at" instant, in the slot's second field.
  #takeFull(held: LimitState, table: SlotTable, slot: number, now: number, cost: number): Decision {
    const t = this.clock;
    const data = table.data;
    const at = slot * STRIDE + 1;
    const full = data[at];
    const { tick, capacity, bucketSlackMs } = held.rule;
    const lead = gcraLead(full, 0, t);
    if (!(cost <= capacity && gcraFits(lead, cost, tick, held.rule.bucketReach)))
      return this.#denied(BUCKET, held, 0, full, now, cost);
    const next = t + (lead + cost * tick);
    data[at] = next;
    const reset = until(now, t, gcraRest(next, 0, t));
    const remaining = gcraWhole(gcraLead(next, 0, t), tick, capacity, bucketSlackMs);
    return new Verdict(true, "ok", cost, remaining, 0, reset, held.traces[OK]);
  }

  // What every single check does first: checks its arguments, finds the limit, and moves the
  // engine's clock on to `now` (read afterwards as #clock). Undefined when no limit has that name.
  #prelude(key: QuotaKey, limit: string, now: number, cost: number): LimitState | undefined {
    checkArgs(key, now, cost);
    const held = limit === this.#lastName ? this.#last : this.#named(limit);
    if (held === undefined) return undefined;
    if (now > this.clock) this.clock = now;
    // A key with an override of the limit is held to that, and keeps its state there.
    return held.overrides === undefined ? held : held.forKey(key);
  }

  /** A single check of any kind, through the general step. */
  check(kind: Kind, key: QuotaKey, limit: string, now: number, cost: number): Decision {
    const held = this.#prelude(key, limit, now, cost);
    if (held === undefined) return this.#unknown(kind, limit, cost);
    const table = held.tables[kind];
    const slot = table === undefined ? -1 : table.find(key);
    return slot < 0
      ? this.#first(kind, held, key, now, cost)
      : this.#stepOn(kind, held, table as SlotTable, slot, now, cost);
  }

  // A key with state, through the general step: a method of its own for the reason #take is.
  #stepOn(kind: Kind, held: LimitState, table: SlotTable, slot: number, now: number, cost: number): Decision {
    const t = this.clock;
    const data = table.data;
    const at = slot * STRIDE;
    const code = this.#evaluate(kind, held, data[at], data[at + 1], t, cost);
    if (code === OK) {
      data[at] = step.amount;
      data[at + 1] = step.instant;
    }
    return this.#verdict(kind, held, code, now, t, cost);
  }

  // One step of `kind` on the state given; the results land in `step`.
  #evaluate(kind: Kind, held: LimitState, amount: number, instant: number, t: number, cost: number): Code {
    return decide(kind, held.rule, amount, instant, t, cost);
  }

  // The decision `step` holds. Its waits count from the caller's `now` (the engine reads it as
  // `t`, its latest instant, when the clock stepped back).
  #verdict(kind: Kind, held: LimitState, code: Code, now: number, t: number, cost: number): Decision {
    return new Verdict(
      code === OK,
      reasons[code],
      cost,
      step.remaining,
      until(now, t, step.passAt),
      until(now, t, step.resetAt),
      held.trace(kind, code),
    );
  }

  // A step that writes nothing (a denial), through the general path.
  #denied(kind: Kind, held: LimitState, amount: number, instant: number, now: number, cost: number): Decision {
    const t = this.clock;
    return this.#verdict(kind, held, this.#evaluate(kind, held, amount, instant, t, cost), now, t, cost);
  }

  // A check of a key with no state yet: evaluated as fresh, given a slot only if it passes. The
  // engine's instant is read here, not passed in: a number passed to a call that is not inlined
  // is boxed, and on traffic of new keys this call is the hot path.
  #first(kind: Kind, held: LimitState, key: QuotaKey, now: number, cost: number): Decision {
    const t = this.clock;
    const code = this.#evaluate(kind, held, freshAmount(kind, held.rule), freshInstant(kind, t), t, cost);
    if (code !== OK) return this.#verdict(kind, held, code, now, t, cost);
    const { amount, instant, remaining, resetAt } = step;
    const table = held.table(kind);
    const slot = this.#space.add(table, key, this.#limits, t);
    if (slot < 0)
      return new Verdict(false, "key_limit", cost, remaining, 0, until(now, t, resetAt), held.trace(kind, KEY_LIMIT));
    table.data[slot * STRIDE] = amount;
    table.data[slot * STRIDE + 1] = instant;
    this.#space.stepAfterAdd(table, t);
    return new Verdict(true, "ok", cost, remaining, 0, until(now, t, resetAt), held.trace(kind, OK));
  }

  // The limit named `limit`, remembered for the next check.
  #named(limit: string): LimitState | undefined {
    const held = this.#limits.get(limit);
    if (held !== undefined) {
      this.#lastName = limit;
      this.#last = held;
    }
    return held;
  }

  #unknown(kind: Kind, limit: string, cost: number): Decision {
    if (typeof limit !== "string") throw limitError(limit, "limit");
    return unknownLimit(KIND_NAMES[kind], limit, cost);
  }
}
