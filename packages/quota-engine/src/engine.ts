import { MAX_INSTANT, badInstant, firstAfter, until } from "@tideward/limiters/math";
import { check } from "@tideward/time";
import type { AtomicReport, BatchReport, ChargeKind, EvaluationInput, QuotaCharge } from "./charge";
import { Verdict, reasons } from "./decision";
import type { Decision } from "./decision";
import { FairShare } from "./fair";
import type { FairShareItem } from "./fair";
import type { EngineSummary, QuotaStats, ValidationIssue } from "./health";
import { Links } from "./hierarchy";
import type { LinkCode, QuotaLink } from "./hierarchy";
import { QuotaKey, isQuotaKey } from "./key";
import { bucketFits, bucketFull, bucketLevel, bucketWhole } from "@tideward/limiters/math";
import { windowDecide } from "./fixed-window";
import { gcraDecide } from "./gcra";
import { BUCKET, GCRA, KIND_NAMES, WINDOW, decide, freshA, freshB, kindOf } from "./kinds";
import type { Kind } from "./kinds";
import { limitProblem, readSpec } from "./limit";
import type { LimitSpec } from "./limit";
import { KEY_LIMIT, NOT_COMMITTED, OK, OUT, UNKNOWN_LIMIT } from "./outcome";
import type { Code } from "./outcome";
import { done, refused } from "./result";
import type { Result } from "./result";
import { Rule } from "./rule";
import { SNAPSHOT_VERSION, readSnapshot } from "./snapshot";
import type { BucketEntry, GcraEntry, KeyParts, QuotaSnapshot, WindowEntry } from "./snapshot";
import type { QuotaStore } from "./store";
import type { SlotTable } from "./table";

/** How a {@link QuotaEngine} bounds its memory. */
export interface EnginePolicy {
  /**
   * The most keys with state at once, across every limit and algorithm. A check or charge set
   * that would add a key past it first sweeps a bounded number of entries for idle keys, and if
   * that frees no room it is refused with `"key_limit"` (fail closed; nothing is charged).
   * Keys that already have state are never refused for it. @defaultValue Infinity
   */
  readonly maxKeys: number;
  /**
   * Entries examined for idleness each time a new key gets state: the bounded, incremental sweep
   * that keeps memory proportional to the keys in use without a stop-the-world pass. 0 turns it
   * off (call {@link QuotaEngine.sweep} yourself). @defaultValue 2
   */
  readonly sweepStep: number;
}

/** The default {@link EnginePolicy}: no key ceiling, two entries examined per new key. */
export const enginePolicy: EnginePolicy = Object.freeze({ maxKeys: Infinity, sweepStep: 2 });

/** What a {@link QuotaEngine.sweep} did. */
export interface SweepReport {
  /** Entries examined. */
  readonly visited: number;
  /** Idle entries dropped. */
  readonly dropped: number;
  /** Keys with state afterwards. */
  readonly keys: number;
}

/** Entries a sweep examines to make room when `maxKeys` is reached, before refusing. */
const RECLAIM_BUDGET = 256;
/** Chains longer than this are reported by `validate()`. */
const DEEP_CHAIN = 8;
/** Where the window's and GCRA's traces start in a rule's `traces`. */
const WINDOW_TRACES = reasons.length;
const GCRA_TRACES = 2 * reasons.length;
/** Charge sets larger than this find repeated buckets with a Map instead of a scan. */
const SMALL_SET = 16;

function keyError(key: unknown, what: string): TypeError {
  return new TypeError(`${what} must be a QuotaKey (new QuotaKey(scope, subject, resource)), got ${check.describe(key)}`);
}

function nowError(now: unknown, what = "now"): Error {
  return badInstant(now, what);
}

function costError(cost: unknown, what: string): Error {
  return typeof cost === "number" ? new RangeError(`${what} must be a whole number of at least 1, got ${check.describe(cost)}`) : new TypeError(`${what} must be a number, got ${typeof cost} ${check.describe(cost)}`);
}

function limitError(limit: unknown, what: string): TypeError {
  return new TypeError(`${what} must be a limit name (a string), got ${typeof limit} ${check.describe(limit)}`);
}

function kindError(kind: unknown, what: string): TypeError {
  return new TypeError(`${what} must be "bucket", "window" or "gcra", got ${check.describe(kind)}`);
}

// Per-charge working space of a charge set, kept between calls so a set allocates only its report.
class Scratch {
  size = 0;
  /** Each charge's fields, read once from the caller's objects: every later step uses these. */
  keys: QuotaKey[] = [];
  ids: string[] = [];
  limits: string[] = [];
  costs = new Float64Array(0);
  kinds = new Uint8Array(0);
  codes = new Uint8Array(0);
  a = new Float64Array(0);
  b = new Float64Array(0);
  rem = new Float64Array(0);
  retry = new Float64Array(0);
  reset = new Float64Array(0);
  /** The slot each charge's key had when evaluated, or -1 for none. */
  slots = new Int32Array(0);
  rules: (Rule | undefined)[] = [];

  fit(n: number): this {
    if (n > this.size) {
      const size = Math.max(8, n, this.size * 2);
      this.costs = new Float64Array(size);
      this.kinds = new Uint8Array(size);
      this.codes = new Uint8Array(size);
      this.a = new Float64Array(size);
      this.b = new Float64Array(size);
      this.rem = new Float64Array(size);
      this.retry = new Float64Array(size);
      this.reset = new Float64Array(size);
      this.slots = new Int32Array(size);
      this.size = size;
    }
    return this;
  }
}

// A name for the state one charge touches, unambiguous because the key id is length-prefixed.
function bucketName(kind: number, limit: string, id: string): string {
  return `${kind}${limit.length}:${limit}${id}`;
}

/**
 * The quota engine: named limits, per-key state for three algorithms, atomic charge sets,
 * hierarchy, batches, fair share, health checks and snapshots — all synchronous, all in process.
 *
 * Every call takes `now`, the caller's clock in milliseconds. The engine's clock never runs
 * backwards: a `now` earlier than the latest one it has seen (from any call) is treated as that
 * latest instant, so a clock stepping back never mints tokens, and dropping an idle key is exact.
 *
 * Every promise holds at real clock magnitudes (`Date.now()` included): from rest exactly the
 * capacity (GCRA: the burst) passes back to back, and `retryAfter` is 0 exactly when a charge
 * passes and enough when added to the caller's `now`. Readings are within ±2^45 ms.
 *
 * State is O(1) per key: a Map from the key's id to a slot in a typed array, about 54 bytes a
 * key, and a key object remembers its slot, so a check with a reused key skips the Map. A key
 * whose state has become equal to a fresh key's (bucket full, window closed, GCRA at rest) is
 * dropped by an incremental sweep, so memory follows the keys in use, not every key seen.
 *
 * @example
 * const engine = new QuotaEngine();
 * engine.addLimit(perSecond("requests", 10));
 * const alice = new QuotaKey("tenant-a", "alice", "api");
 * engine.checkTokenBucket(alice, "requests", Date.now()).allowed; // true
 */
export class QuotaEngine implements QuotaStore {
  /** The policy in force (the preset with the constructor's fields laid over it). */
  readonly policy: EnginePolicy;
  readonly #maxKeys: number;
  readonly #sweepStep: number;
  #clock = -Infinity;
  #rules = new Map<string, Rule>();
  #links = new Links();
  #fair = new FairShare();
  #keys = 0;
  #sweepAt = 0;
  #dropped = 0;
  #refused = 0;
  readonly #scratch = new Scratch();

  /**
   * An engine with no limits.
   *
   * @param policy - read once; an unknown field is a `TypeError` naming the closest known one
   * @throws RangeError or TypeError naming the field when `maxKeys` is not a whole number of at
   *   least 1 (or Infinity), or `sweepStep` is not a whole number of at least 0; TypeError when
   *   `policy` is not an object
   */
  constructor(policy?: Partial<EnginePolicy>) {
    const merged = { ...enginePolicy, ...check.options(policy, ["maxKeys", "sweepStep"], "QuotaEngine", "policy") };
    const maxKeys = merged.maxKeys;
    if (maxKeys !== Infinity) check.integer(maxKeys, "QuotaEngine maxKeys", 1);
    check.integer(merged.sweepStep, "QuotaEngine sweepStep", 0);
    this.policy = Object.freeze({ maxKeys, sweepStep: merged.sweepStep });
    this.#maxKeys = maxKeys;
    this.#sweepStep = merged.sweepStep;
  }

  // ── limits ────────────────────────────────────────────────────────────────────────────────

  /**
   * Adds a limit. Refused, with a reason and nothing changed, when the spec is invalid
   * (`"invalid_limit"`) or a limit of that name exists (`"duplicate_limit"`).
   */
  addLimit(spec: LimitSpec): Result<"duplicate_limit" | "invalid_limit"> {
    // Read once into a copy, which is what is checked and kept: a getter gets one say.
    const copy = readSpec(spec);
    const problem = limitProblem(copy ?? spec);
    if (copy === undefined || problem !== undefined) return refused("invalid_limit", problem ?? "LimitSpec must be an object");
    const { name, capacity, refill, window, burst, align } = copy as unknown as LimitSpec;
    if (this.#rules.has(name)) return refused("duplicate_limit", `a limit named ${JSON.stringify(name)} exists already`);
    this.#rules.set(name, new Rule(Object.freeze({ name, capacity, refill, window, burst, align })));
    return done;
  }

  /** The limit named `name`, or undefined. */
  limit(name: string): LimitSpec | undefined {
    return this.#rules.get(name)?.spec;
  }

  /** Every limit, in the order added. */
  limits(): LimitSpec[] {
    return [...this.#rules.values()].map((r) => r.spec);
  }

  // ── single checks ─────────────────────────────────────────────────────────────────────────

  /**
   * Takes `cost` tokens from `key`'s bucket of `limit` at `now`, if it holds them.
   *
   * The bucket holds up to `capacity` tokens, starts full and regains `refill` tokens per
   * `window` milliseconds, continuously. A denial takes nothing.
   *
   * @param now - the caller's clock, in milliseconds
   * @param cost - units, a whole number of at least 1; 1 by default
   * @throws TypeError or RangeError when `key`, `limit`, `now` or `cost` is malformed (an unknown
   *   limit is an answer, `"unknown_limit"`, not an error)
   */
  checkTokenBucket(key: QuotaKey, limit: string, now: number, cost = 1): Decision {
    if (!isQuotaKey(key)) throw keyError(key, "key");
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) throw nowError(now);
    if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, "cost");
    const rule = limit === this.#lastName ? this.#lastRule : this.#rule(limit);
    if (rule === undefined) return this.#unknown(BUCKET, limit, cost);
    const t = now > this.#clock ? (this.#clock = now) : this.#clock;
    const table = rule.tables[BUCKET];
    const slot = table?.find(key);
    if (table === undefined || slot === undefined) return this.#first(BUCKET, rule, key, t, now, cost);
    // The hot path: a key with state that can pay. One slot read, one slot write, one object.
    const data = table.data;
    const at = slot * 2;
    const held = data[at];
    const last = data[at + 1];
    const { perMs, capacity, bucketSlack } = rule;
    const tokens = bucketLevel(held, last, t, perMs, capacity);
    if (!bucketFits(tokens, cost, capacity, bucketSlack)) return this.#denied(BUCKET, rule, held, last, t, now, cost);
    const left = tokens - cost;
    const since = t > last ? t : last;
    data[at] = left;
    data[at + 1] = since;
    const reset = until(now, t, bucketFull(left, since, t, perMs, capacity, bucketSlack));
    return new Verdict(true, "ok", cost, bucketWhole(left, capacity, bucketSlack), 0, reset, rule.traces[OK]);
  }

  // A denial: nothing to write, so it can take the general path. Its waits count from the
  // caller's `now` (the engine reads it as `t`, its latest instant, when the clock stepped back).
  #denied(kind: Kind, rule: Rule, a: number, b: number, t: number, now: number, cost: number): Decision {
    const code = decide(kind, rule, a, b, t, cost);
    return new Verdict(false, reasons[code], cost, OUT[2], until(now, t, OUT[3]), until(now, t, OUT[4]), rule.trace(kind, code));
  }

  // The rule named `limit`, remembered: most callers check one limit over and over.
  #rule(limit: string): Rule | undefined {
    const rule = this.#rules.get(limit);
    if (rule !== undefined) {
      this.#lastName = limit;
      this.#lastRule = rule;
    }
    return rule;
  }

  #lastName: string | undefined;
  #lastRule: Rule | undefined;

  /**
   * Counts `cost` units against `key`'s fixed window of `limit` at `now`, if the window has room:
   * at most `capacity` units per `window` milliseconds. See {@link LimitSpec.align}.
   *
   * @param now - the caller's clock, in milliseconds
   * @param cost - units, a whole number of at least 1; 1 by default
   * @throws TypeError or RangeError when an argument is malformed
   */
  checkWindow(key: QuotaKey, limit: string, now: number, cost = 1): Decision {
    if (!isQuotaKey(key)) throw keyError(key, "key");
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) throw nowError(now);
    if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, "cost");
    const rule = limit === this.#lastName ? this.#lastRule : this.#rule(limit);
    if (rule === undefined) return this.#unknown(WINDOW, limit, cost);
    const t = now > this.#clock ? (this.#clock = now) : this.#clock;
    const table = rule.tables[WINDOW];
    const slot = table?.find(key);
    if (table === undefined || slot === undefined) return this.#first(WINDOW, rule, key, t, now, cost);
    const data = table.data;
    const at = slot * 2;
    const code = windowDecide(rule, data[at], data[at + 1], t, cost);
    if (code === OK) {
      data[at] = OUT[0];
      data[at + 1] = OUT[1];
    }
    return new Verdict(code === OK, reasons[code], cost, OUT[2], until(now, t, OUT[3]), until(now, t, OUT[4]), rule.traces[WINDOW_TRACES + code]);
  }

  /**
   * Schedules `cost` units for `key` under GCRA at `now`, if that leaves the key at most `burst`
   * units ahead of its schedule of `refill` per `window` milliseconds: smooth shaping, one number
   * of state per key.
   *
   * @param now - the caller's clock, in milliseconds
   * @param cost - units, a whole number of at least 1; 1 by default
   * @throws TypeError or RangeError when an argument is malformed
   */
  checkGcra(key: QuotaKey, limit: string, now: number, cost = 1): Decision {
    if (!isQuotaKey(key)) throw keyError(key, "key");
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) throw nowError(now);
    if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, "cost");
    const rule = limit === this.#lastName ? this.#lastRule : this.#rule(limit);
    if (rule === undefined) return this.#unknown(GCRA, limit, cost);
    const t = now > this.#clock ? (this.#clock = now) : this.#clock;
    const table = rule.tables[GCRA];
    const slot = table?.find(key);
    if (table === undefined || slot === undefined) return this.#first(GCRA, rule, key, t, now, cost);
    const data = table.data;
    const at = slot * 2;
    const code = gcraDecide(rule, data[at], data[at + 1], t, cost);
    if (code === OK) {
      data[at] = OUT[0];
      data[at + 1] = OUT[1];
    }
    return new Verdict(code === OK, reasons[code], cost, OUT[2], until(now, t, OUT[3]), until(now, t, OUT[4]), rule.traces[GCRA_TRACES + code]);
  }

  // A check of a key with no state yet: evaluated as fresh, given a slot only if it passes.
  #first(kind: Kind, rule: Rule, key: QuotaKey, t: number, now: number, cost: number): Decision {
    const code = decide(kind, rule, freshA(kind, rule), freshB(kind, t), t, cost);
    const remaining = OUT[2];
    const retry = until(now, t, OUT[3]);
    const reset = until(now, t, OUT[4]);
    if (code === OK) {
      const a = OUT[0];
      const b = OUT[1];
      const table = rule.table(kind);
      const slot = this.#insert(table, key);
      if (slot < 0) return new Verdict(false, "key_limit", cost, remaining, 0, reset, rule.trace(kind, KEY_LIMIT));
      const at = slot * table.stride;
      table.data[at] = a;
      table.data[at + 1] = b;
      if (this.#sweepStep > 0) this.#step(table);
    }
    return new Verdict(code === OK, reasons[code], cost, remaining, retry, reset, rule.trace(kind, code));
  }

  #unknown(kind: Kind, limit: string, cost: number): Decision {
    if (typeof limit !== "string") throw limitError(limit, "limit");
    return new Verdict(false, "unknown_limit", cost, 0, Infinity, 0, [`${KIND_NAMES[kind]} ${limit}: unknown_limit (no limit of that name)`]);
  }

  // A slot for a new key, or -1 when maxKeys is reached and a bounded sweep freed no room.
  #insert(table: SlotTable, key: QuotaKey): number {
    if (this.#keys >= this.#maxKeys) {
      this.#sweepTables(this.#clock, RECLAIM_BUDGET);
      if (this.#keys >= this.#maxKeys) {
        this.#refused++;
        return -1;
      }
    }
    this.#keys++;
    return table.add(key);
  }

  // The bounded sweep that follows each new key.
  #step(table: SlotTable): void {
    const dropped = table.sweep(this.#clock, this.#sweepStep);
    this.#keys -= dropped;
    this.#dropped += dropped;
  }

  // ── charge sets ───────────────────────────────────────────────────────────────────────────

  /**
   * Charges every dimension of a request at once, or none of them: tideward's headline.
   *
   * Each charge is evaluated on staged state at one instant, so repeated charges to one bucket
   * add up; only when every charge fits is anything written. A missing limit, an insufficient
   * balance or (with `maxKeys`) no room for a new key rejects the whole set, every bucket as it
   * was. The report names the first charge that failed and carries every decision.
   *
   * @example
   * const report = engine.checkAtomic([
   *   charge(user, "user-requests", 1),
   *   charge(tenant, "tenant-tokens", 800),
   *   charge(model, "model-tokens", 800),
   * ], now);
   * if (report.committed) dispatch();
   * @param now - the caller's clock, in milliseconds
   * @throws TypeError or RangeError naming the charge and field when a charge is malformed
   *   (checked before anything is evaluated)
   */
  checkAtomic(charges: readonly QuotaCharge[], now: number): AtomicReport {
    return this.#atomic(charges, now, true);
  }

  /** What {@link QuotaEngine.checkAtomic} would answer at `now`, without charging anything. */
  peekAtomic(charges: readonly QuotaCharge[], now: number): AtomicReport {
    return this.#atomic(charges, now, false);
  }

  #atomic(charges: readonly QuotaCharge[], now: number, commit: boolean): AtomicReport {
    if (!Array.isArray(charges)) throw new TypeError(`charges must be an array of QuotaCharge, got ${check.describe(charges)}`);
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) throw nowError(now);
    const n = charges.length;
    const s = this.#scratch.fit(n);
    // Each charge is read once, into the scratch, and checked there: nothing below reads the
    // caller's objects again, so a getter cannot answer one cost to the check and another to the
    // charge, and a forged key is refused before any state is looked at.
    for (let i = 0; i < n; i++) {
      const c = charges[i] as QuotaCharge | undefined;
      if (c === null || typeof c !== "object") throw new TypeError(`charges[${i}] must be a QuotaCharge, got ${check.describe(c)}`);
      const { key, limit, cost, kind: name } = c;
      if (!isQuotaKey(key)) throw keyError(key, `charges[${i}].key`);
      if (typeof limit !== "string") throw limitError(limit, `charges[${i}].limit`);
      if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, `charges[${i}].cost`);
      const kind = kindOf(name);
      if (kind < 0) throw kindError(name, `charges[${i}].kind`);
      s.keys[i] = key;
      s.ids[i] = key.id;
      s.limits[i] = limit;
      s.costs[i] = cost;
      s.kinds[i] = kind;
    }
    const t = now > this.#clock ? (this.#clock = now) : this.#clock;
    let failed = this.#stage(n, t);
    this.#reclaimed = false;
    if (failed < 0 && commit && this.#maxKeys !== Infinity) failed = this.#room(n);
    if (failed < 0 && commit) this.#commit(n);

    const decisions = new Array<Decision>(n);
    for (let i = 0; i < n; i++) {
      const kind = s.kinds[i] as Kind;
      const rule = s.rules[i];
      let code = s.codes[i] as Code;
      if (rule === undefined) {
        decisions[i] = this.#unknown(kind, s.limits[i], s.costs[i]);
        continue;
      }
      if (code === OK && failed >= 0) code = NOT_COMMITTED;
      const retry = code === NOT_COMMITTED ? 0 : until(now, t, s.retry[i]);
      decisions[i] = new Verdict(code === OK, reasons[code], s.costs[i], s.rem[i], retry, until(now, t, s.reset[i]), rule.trace(kind, code));
    }
    // The retry is computed last: it evaluates the set again at later instants, over the scratch.
    return { allowed: failed < 0, committed: commit && failed < 0, failedIndex: failed, retryAfter: failed < 0 ? 0 : this.#setRetry(n, t, now), decisions };
  }

  // Evaluates the scratch's n charges at `t` on staged state, writing nothing but the scratch:
  // each charge sees its bucket after the earlier charges to it that fit. Returns the index of the
  // first charge that did not fit, or -1.
  #stage(n: number, t: number): number {
    const s = this.#scratch;
    const latest = n > SMALL_SET ? new Map<string, number>() : undefined;
    let failed = -1;
    for (let i = 0; i < n; i++) {
      const kind = s.kinds[i] as Kind;
      const rule = this.#rules.get(s.limits[i]);
      s.rules[i] = rule;
      if (rule === undefined) {
        s.codes[i] = UNKNOWN_LIMIT;
        s.rem[i] = 0;
        s.retry[i] = Infinity;
        s.reset[i] = t;
        if (failed < 0) failed = i;
        continue;
      }
      const id = s.ids[i];
      // The state this charge sees: after the latest earlier charge to the same bucket that fit.
      let p = -1;
      if (latest !== undefined) p = latest.get(bucketName(kind, s.limits[i], id)) ?? -1;
      else {
        for (let j = i - 1; j >= 0; j--) {
          if (s.codes[j] === OK && s.rules[j] === rule && s.kinds[j] === kind && s.ids[j] === id) {
            p = j;
            break;
          }
        }
      }
      let a: number;
      let b: number;
      if (p >= 0) {
        a = s.a[p];
        b = s.b[p];
        s.slots[i] = s.slots[p];
      } else {
        const table = rule.tables[kind];
        const slot = table?.find(s.keys[i]);
        s.slots[i] = slot ?? -1;
        if (table === undefined || slot === undefined) {
          a = freshA(kind, rule);
          b = freshB(kind, t);
        } else {
          a = table.data[slot * 2];
          b = table.data[slot * 2 + 1];
        }
      }
      const code = decide(kind, rule, a, b, t, s.costs[i]);
      s.codes[i] = code;
      s.a[i] = OUT[0];
      s.b[i] = OUT[1];
      s.rem[i] = OUT[2];
      s.retry[i] = OUT[3];
      s.reset[i] = OUT[4];
      if (code === OK) latest?.set(bucketName(kind, s.limits[i], id), i);
      else if (failed < 0) failed = i;
    }
    return failed;
  }

  // With maxKeys: whether the set's new keys fit (after a bounded sweep if need be). Returns -1,
  // or the index of the first charge to a new key, marked KEY_LIMIT.
  #room(n: number): number {
    const s = this.#scratch;
    const fresh = (): number => {
      const names = new Set<string>();
      let first = -1;
      for (let i = 0; i < n; i++) {
        const kind = s.kinds[i] as Kind;
        if ((s.rules[i] as Rule).tables[kind]?.map.has(s.ids[i]) === true) continue;
        const name = bucketName(kind, s.limits[i], s.ids[i]);
        if (names.has(name)) continue;
        names.add(name);
        if (first < 0) first = i;
      }
      this.#firstNew = first;
      return names.size;
    };
    if (this.#keys + fresh() <= this.#maxKeys) return -1;
    this.#sweepTables(this.#clock, RECLAIM_BUDGET);
    this.#reclaimed = true; // slots found during evaluation may have been freed
    if (this.#keys + fresh() <= this.#maxKeys) return -1;
    this.#refused++;
    const i = this.#firstNew;
    s.codes[i] = KEY_LIMIT;
    return i;
  }

  #firstNew = -1;
  #reclaimed = false;

  // Writes a set that fit: in order, so the last staged value of each bucket is what remains.
  #commit(n: number): void {
    const s = this.#scratch;
    let grown: SlotTable[] | undefined;
    for (let i = 0; i < n; i++) {
      const kind = s.kinds[i] as Kind;
      const table = (s.rules[i] as Rule).table(kind);
      const known = s.slots[i];
      // A key new to the table may have been given a slot by an earlier charge of this set.
      let slot = known >= 0 && !this.#reclaimed ? known : table.find(s.keys[i]);
      if (slot === undefined) {
        slot = table.add(s.keys[i]);
        this.#keys++;
        if (grown === undefined) grown = [table];
        else if (!grown.includes(table)) grown.push(table);
      }
      const at = slot * 2;
      table.data[at] = s.a[i];
      table.data[at + 1] = s.b[i];
    }
    if (grown !== undefined && this.#sweepStep > 0) for (const table of grown) this.#step(table);
  }

  // When the whole set would fit, as a wait from the caller's `now`: the latest of, for each
  // bucket the set touches, the first instant at which it holds the set's total demand on it
  // (Infinity if a limit is unknown or a total too large) — then confirmed by evaluating the set
  // itself there, charge by charge, and moved on to the first instant at which it passes if the
  // staged roundings differ from the totals' by a float step.
  #setRetry(n: number, t: number, now: number): number {
    const s = this.#scratch;
    let worst = t;
    let repeated = false;
    for (let i = 0; i < n; i++) {
      const rule = s.rules[i];
      if (rule === undefined) return Infinity;
      const kind = s.kinds[i] as Kind;
      const id = s.ids[i];
      // Each bucket once, at its first charge: a set is small, so a scan beats a Set of names.
      let first = true;
      for (let j = 0; j < i && first; j++) if (s.rules[j] === rule && s.kinds[j] === kind && s.ids[j] === id) first = false;
      if (!first) continue;
      let total = s.costs[i];
      for (let j = i + 1; j < n; j++) {
        if (s.rules[j] === rule && s.kinds[j] === kind && s.ids[j] === id) {
          total += s.costs[j];
          repeated = true;
        }
      }
      const table = rule.tables[kind];
      const slot = table?.map.get(id);
      if (table === undefined || slot === undefined) decide(kind, rule, freshA(kind, rule), freshB(kind, t), t, total);
      else decide(kind, rule, table.data[slot * 2], table.data[slot * 2 + 1], t, total);
      if (OUT[3] > worst) worst = OUT[3];
    }
    if (worst === Infinity) return Infinity;
    // A bucket charged once passes at its own instant by construction (the same test); only
    // repeated charges are staged, whose roundings can differ from their total's by a float step.
    if (repeated && this.#stage(n, worst) >= 0) worst = firstAfter(worst, (x) => this.#stage(n, x) < 0);
    return until(now, t, worst);
  }

  // ── hierarchy ─────────────────────────────────────────────────────────────────────────────

  /**
   * Links `child` to `parent` for one limit: from now on a hierarchical check of the child
   * charges the parent `ratio` times as much. Refused, with a reason and nothing changed, when the
   * limit is unknown, the child already has a parent for that limit, the link would close a
   * cycle, or a field is invalid.
   */
  addLink(link: QuotaLink): Result<LinkCode> {
    return this.#links.add(link, (limit) => this.#rules.has(limit));
  }

  /**
   * The charges a hierarchical check of `key` makes: `cost` to the key, then up its chain of
   * links for `limit`, each parent charged its link's ratio times its child's charge. Useful to
   * fold a chain into a larger {@link QuotaEngine.checkAtomic} set.
   *
   * @throws TypeError or RangeError when an argument is malformed or a chained cost passes 2^53
   */
  chain(key: QuotaKey, limit: string, cost = 1, kind: ChargeKind = "bucket"): QuotaCharge[] {
    if (!isQuotaKey(key)) throw keyError(key, "key");
    if (typeof limit !== "string") throw limitError(limit, "limit");
    if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, "cost");
    if (kindOf(kind) < 0) throw kindError(kind, "kind");
    const out: QuotaCharge[] = [{ key, limit, cost, kind }];
    let at = key;
    let units = cost;
    for (let link = this.#links.parentOf(limit, at); link !== undefined; link = this.#links.parentOf(limit, at)) {
      units *= link.ratio;
      if (!Number.isSafeInteger(units)) throw new RangeError(`the chained cost for ${link.parent.id} on ${JSON.stringify(limit)} passes 2^53`);
      at = link.parent;
      out.push({ key: at, limit, cost: units, kind });
    }
    return out;
  }

  /**
   * Charges `key` and every ancestor linked for `limit` (see {@link QuotaEngine.chain}) as one
   * atomic set, and folds the result into one decision: `remaining` is how many more units of
   * the child's the tightest level admits, `retryAfter` when the whole chain would fit, and
   * `trace` has one entry per level, naming its key and what it answered.
   *
   * @param now - the caller's clock, in milliseconds
   * @throws TypeError or RangeError when an argument is malformed
   */
  checkHierarchy(key: QuotaKey, limit: string, now: number, cost = 1, kind: ChargeKind = "bucket"): Decision {
    const charges = this.chain(key, limit, cost, kind);
    const report = this.#atomic(charges, now, true);
    let remaining = Infinity;
    let resetAfter = 0;
    const trace: string[] = [];
    for (let i = 0; i < charges.length; i++) {
      const c = charges[i];
      const d = report.decisions[i];
      const scale = c.cost / cost;
      // Whole units this level holds now: after the charge if it was made, else as it stands.
      const held = d.reason === "not_committed" || d.reason === "key_limit" ? d.remaining + c.cost : d.remaining;
      remaining = Math.min(remaining, Math.floor(held / scale));
      if (d.resetAfter > resetAfter) resetAfter = d.resetAfter;
      trace.push(`${c.kind ?? "bucket"} ${limit} @ ${c.key.id}: ${d.reason}`);
    }
    const reason = report.allowed ? "ok" : (report.decisions[report.failedIndex]).reason;
    return new Verdict(report.allowed, reason, cost, remaining === Infinity ? 0 : remaining, report.retryAfter, resetAfter, trace);
  }

  // ── batches ───────────────────────────────────────────────────────────────────────────────

  /**
   * Checks many requests against one limit, one after another in input order (not atomically),
   * for replay, import and simulation. Every input is checked for shape before any is evaluated.
   *
   * @throws TypeError or RangeError naming `inputs[i]` and the field when an input is malformed
   */
  checkMany(limit: string, inputs: readonly EvaluationInput[], kind: ChargeKind = "bucket"): BatchReport {
    if (typeof limit !== "string") throw limitError(limit, "limit");
    if (!Array.isArray(inputs)) throw new TypeError(`inputs must be an array of EvaluationInput, got ${check.describe(inputs)}`);
    const k = kindOf(kind);
    if (k === -1) throw kindError(kind, "kind");
    // Every input read once into these, and checked there, before any is evaluated.
    const n = inputs.length;
    const keys = new Array<QuotaKey>(n);
    const nows = new Float64Array(n);
    const costs = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const input = inputs[i] as EvaluationInput | undefined;
      if (input === null || typeof input !== "object") throw new TypeError(`inputs[${i}] must be an EvaluationInput, got ${check.describe(input)}`);
      const { key, now, cost = 1 } = input;
      if (!isQuotaKey(key)) throw keyError(key, `inputs[${i}].key`);
      if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) throw nowError(now, `inputs[${i}].now`);
      if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, `inputs[${i}].cost`);
      keys[i] = key;
      nows[i] = now;
      costs[i] = cost;
    }
    const decisions = new Array<Decision>(n);
    let allowed = 0;
    for (let i = 0; i < n; i++) {
      const d = k === BUCKET ? this.checkTokenBucket(keys[i], limit, nows[i], costs[i]) : k === WINDOW ? this.checkWindow(keys[i], limit, nows[i], costs[i]) : this.checkGcra(keys[i], limit, nows[i], costs[i]);
      if (d.allowed) allowed++;
      decisions[i] = d;
    }
    return { total: n, allowed, denied: n - allowed, decisions };
  }

  // ── fair share ────────────────────────────────────────────────────────────────────────────

  /** Adds a fair-share subject with a weight (a whole number of at least 1; 1 by default). */
  addSubject(subject: string, weight = 1): Result<"duplicate_subject" | "invalid_subject"> {
    return this.#fair.add(subject, weight);
  }

  /** Records `cost` units (a whole number of at least 1) used by a fair-share subject. */
  recordUsage(subject: string, cost: number): Result<"unknown_subject" | "invalid_cost"> {
    return this.#fair.record(subject, cost);
  }

  /**
   * The fair-share subject to serve next: the least used per weight, ties to the heavier weight
   * and then to the name in code-unit order; `undefined` when there are no subjects.
   */
  nextFairSubject(): string | undefined {
    return this.#fair.next();
  }

  /** Every fair-share subject's weight, usage and score, in the order added. */
  fairSnapshot(): FairShareItem[] {
    return this.#fair.snapshot();
  }

  // ── memory ────────────────────────────────────────────────────────────────────────────────

  /**
   * Examines up to `budget` keys, resuming where the last sweep stopped and moving from table to
   * table, and drops those whose state equals a fresh key's at `now` (bucket full, window closed,
   * GCRA at rest). Dropping is exact: no later decision changes. Call it from a timer with a
   * modest budget to keep memory bounded with `sweepStep` at 0, or to reclaim faster.
   *
   * @param now - the caller's clock, in milliseconds (it advances the engine's clock)
   * @param budget - the most entries to examine; 1024 by default
   */
  sweep(now: number, budget = 1024): SweepReport {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) throw nowError(now);
    if (budget !== Infinity) check.integer(budget, "sweep budget", 0);
    const t = now > this.#clock ? (this.#clock = now) : this.#clock;
    const [visited, dropped] = this.#sweepTables(t, budget);
    return { visited, dropped, keys: this.#keys };
  }

  #sweepTables(t: number, budget: number): [number, number] {
    const tables: SlotTable[] = [];
    for (const rule of this.#rules.values()) for (const table of rule.tables) if (table !== undefined) tables.push(table);
    let visited = 0;
    let dropped = 0;
    if (tables.length === 0) return [0, 0];
    // Each table at most once, plus the first again if it was resumed midway (to cover what came
    // before its cursor).
    const turns = tables.length + ((tables[this.#sweepAt % tables.length]).midway ? 1 : 0);
    for (let turn = 0; turn < turns && visited < budget; turn++) {
      const table = tables[this.#sweepAt % tables.length];
      const gone = table.sweep(t, budget - visited);
      visited += table.visited;
      dropped += gone;
      if (table.passed) this.#sweepAt = (this.#sweepAt + 1) % tables.length;
    }
    this.#keys -= dropped;
    this.#dropped += dropped;
    return [visited, dropped];
  }

  // ── health ────────────────────────────────────────────────────────────────────────────────

  /** Hazards worth a look (see {@link IssueCode}); an empty array when there are none. */
  validate(): ValidationIssue[] {
    const issues: ValidationIssue[] = [];
    if (this.#rules.size === 0) issues.push({ code: "no_limits", message: "the engine has no limits: every check answers unknown_limit" });
    for (const rule of this.#rules.values()) {
      if (rule.burst > rule.capacity) {
        issues.push({ code: "burst_exceeds_capacity", message: `limit ${JSON.stringify(rule.name)} has GCRA burst ${rule.burst} above its capacity ${rule.capacity}` });
      }
    }
    if (this.#maxKeys !== Infinity && this.#keys >= 0.9 * this.#maxKeys) {
      issues.push({ code: "keys_near_limit", message: `${this.#keys} keys tracked of maxKeys ${this.#maxKeys}: new keys will soon be refused with key_limit` });
    }
    const depth = this.#links.depth();
    if (depth > DEEP_CHAIN) issues.push({ code: "deep_chain", message: `a hierarchy chain has ${depth} links (more than ${DEEP_CHAIN}); every hierarchical check charges all of them` });
    const { weight, used } = this.#fair.extremes();
    if (used * weight > Number.MAX_SAFE_INTEGER) issues.push({ code: "fair_precision", message: `fair-share usage ${used} times weight ${weight} passes 2^53: scores no longer compare exactly` });
    return issues;
  }

  /** Counts of limits, keys per algorithm, links, subjects, swept and refused keys. */
  stats(): QuotaStats {
    let buckets = 0;
    let windows = 0;
    let gcra = 0;
    for (const rule of this.#rules.values()) {
      buckets += rule.tables[BUCKET]?.map.size ?? 0;
      windows += rule.tables[WINDOW]?.map.size ?? 0;
      gcra += rule.tables[GCRA]?.map.size ?? 0;
    }
    return {
      limits: this.#rules.size,
      buckets,
      windows,
      gcra,
      keys: this.#keys,
      maxKeys: this.#maxKeys,
      links: this.#links.size,
      subjects: this.#fair.size,
      dropped: this.#dropped,
      refused: this.#refused,
    };
  }

  /** A small deterministic summary for health checks and logs; `JSON.stringify(engine)` uses it. */
  toJSON(): EngineSummary {
    const stats = this.stats();
    return {
      version: SNAPSHOT_VERSION,
      clock: this.#clock === -Infinity ? null : this.#clock,
      stats: { ...stats, maxKeys: stats.maxKeys === Infinity ? null : stats.maxKeys },
      limits: this.limits(),
    };
  }

  // ── snapshots ─────────────────────────────────────────────────────────────────────────────

  /**
   * Everything the engine holds, as versioned, JSON-safe data, in a deterministic order: limits
   * and links and subjects in the order added, key state table by table in insertion order.
   */
  snapshot(): QuotaSnapshot {
    const buckets: BucketEntry[] = [];
    const windows: WindowEntry[] = [];
    const gcra: GcraEntry[] = [];
    const parts = (id: string): KeyParts => QuotaKey.parse(id).toJSON();
    for (const rule of this.#rules.values()) {
      const table = rule.tables[BUCKET];
      if (table !== undefined) for (const [id, slot] of table.map) buckets.push({ key: parts(id), limit: rule.name, tokens: table.data[slot * 2], at: table.data[slot * 2 + 1] });
    }
    for (const rule of this.#rules.values()) {
      const table = rule.tables[WINDOW];
      if (table !== undefined) for (const [id, slot] of table.map) windows.push({ key: parts(id), limit: rule.name, end: table.data[slot * 2], used: table.data[slot * 2 + 1] });
    }
    for (const rule of this.#rules.values()) {
      const table = rule.tables[GCRA];
      if (table !== undefined) for (const [id, slot] of table.map) gcra.push({ key: parts(id), limit: rule.name, at: table.data[slot * 2 + 1], ahead: table.data[slot * 2] });
    }
    return {
      version: SNAPSHOT_VERSION,
      clock: this.#clock === -Infinity ? null : this.#clock,
      limits: this.limits().map((spec) => ({ ...spec })),
      buckets,
      windows,
      gcra,
      links: this.#links.list().map((l) => ({ child: l.child.toJSON(), parent: l.parent.toJSON(), limit: l.limit, ratio: l.ratio })),
      subjects: this.#fair.snapshot().map(({ subject, weight, used }) => ({ subject, weight, used })),
    };
  }

  /**
   * Replaces everything the engine holds with `snapshot`, typically read back from storage and
   * so untrusted. Every field is checked first; the engine changes only if all of it is valid.
   *
   * @throws SnapshotError naming the first bad field (`error.field`), the engine unchanged
   */
  restore(snapshot: unknown): void {
    const restored = readSnapshot(snapshot, this.#maxKeys);
    this.#clock = restored.clock;
    this.#rules = restored.rules;
    this.#lastName = undefined;
    this.#lastRule = undefined;
    this.#links = restored.links;
    this.#fair = restored.fair;
    this.#keys = restored.keys;
    this.#sweepAt = 0;
  }
}
