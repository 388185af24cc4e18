import { check } from "@tideward/time/internal";
import type { AtomicReport, BatchReport, ChargeKind, EvaluationInput, QuotaCharge } from "./charge";
import { Verdict, reasons } from "./decision";
import type { Decision } from "./decision";
import { FairShare } from "./fair";
import type { FairShareItem } from "./fair";
import type { EngineSummary, QuotaStats, ValidationIssue } from "./health";
import { Links } from "./hierarchy";
import type { LinkCode, QuotaLink } from "./hierarchy";
import { QuotaKey } from "./key";
import { bucketFits, bucketLevel, bucketUntilFull, bucketWhole } from "./bucket";
import { windowDecide } from "./fixed-window";
import { gcraDecide } from "./gcra";
import { BUCKET, GCRA, KIND_NAMES, WINDOW, decide, freshA, freshB, kindOf } from "./kinds";
import type { Kind } from "./kinds";
import { limitProblem } from "./limit";
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

function nowError(now: unknown): Error {
  return typeof now === "number" ? new RangeError(`now must be a finite number of milliseconds, got ${check.describe(now)}`) : new TypeError(`now must be a number of milliseconds, got ${typeof now} ${check.describe(now)}`);
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
   * @throws RangeError or TypeError naming the field when `maxKeys` is not a whole number of at
   *   least 1 (or Infinity), or `sweepStep` is not a whole number of at least 0
   */
  constructor(policy: Partial<EnginePolicy> = {}) {
    const merged = { ...enginePolicy, ...policy };
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
    const problem = limitProblem(spec);
    if (problem !== undefined) return refused("invalid_limit", problem);
    if (this.#rules.has(spec.name)) return refused("duplicate_limit", `a limit named ${JSON.stringify(spec.name)} exists already`);
    const { name, capacity, refill, window, burst, align } = spec;
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
    if (!(key instanceof QuotaKey)) throw keyError(key, "key");
    if (!Number.isFinite(now)) throw nowError(now);
    if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, "cost");
    const rule = limit === this.#lastName ? this.#lastRule : this.#rule(limit);
    if (rule === undefined) return this.#unknown(BUCKET, limit, cost);
    const t = now > this.#clock ? (this.#clock = now) : this.#clock;
    const table = rule.tables[BUCKET];
    const slot = table?.find(key);
    if (table === undefined || slot === undefined) return this.#first(BUCKET, rule, key, t, cost);
    // The hot path: a key with state that can pay. One slot read, one slot write, one object.
    const data = table.data;
    const at = slot * 2;
    const last = data[at + 1];
    const tokens = bucketLevel(rule, data[at], last, t);
    if (!bucketFits(rule, tokens, cost)) return this.#denied(BUCKET, rule, tokens, t, t, cost);
    const left = tokens - cost;
    data[at] = left;
    if (t > last) data[at + 1] = t;
    return new Verdict(true, "ok", cost, bucketWhole(rule, left), 0, bucketUntilFull(rule, left), rule.traces[OK]);
  }

  // A denial: nothing to write, so it can take the general path.
  #denied(kind: Kind, rule: Rule, a: number, b: number, t: number, cost: number): Decision {
    const code = decide(kind, rule, a, b, t, cost);
    return new Verdict(false, reasons[code], cost, OUT[2], OUT[3], OUT[4], rule.trace(kind, code));
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
    if (!(key instanceof QuotaKey)) throw keyError(key, "key");
    if (!Number.isFinite(now)) throw nowError(now);
    if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, "cost");
    const rule = limit === this.#lastName ? this.#lastRule : this.#rule(limit);
    if (rule === undefined) return this.#unknown(WINDOW, limit, cost);
    const t = now > this.#clock ? (this.#clock = now) : this.#clock;
    const table = rule.tables[WINDOW];
    const slot = table?.find(key);
    if (table === undefined || slot === undefined) return this.#first(WINDOW, rule, key, t, cost);
    const data = table.data;
    const at = slot * 2;
    const code = windowDecide(rule, data[at], data[at + 1], t, cost);
    if (code === OK) {
      data[at] = OUT[0];
      data[at + 1] = OUT[1];
    }
    return new Verdict(code === OK, reasons[code], cost, OUT[2], OUT[3], OUT[4], rule.traces[WINDOW_TRACES + code]);
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
    if (!(key instanceof QuotaKey)) throw keyError(key, "key");
    if (!Number.isFinite(now)) throw nowError(now);
    if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, "cost");
    const rule = limit === this.#lastName ? this.#lastRule : this.#rule(limit);
    if (rule === undefined) return this.#unknown(GCRA, limit, cost);
    const t = now > this.#clock ? (this.#clock = now) : this.#clock;
    const table = rule.tables[GCRA];
    const slot = table?.find(key);
    if (table === undefined || slot === undefined) return this.#first(GCRA, rule, key, t, cost);
    const data = table.data;
    const code = gcraDecide(rule, data[slot], t, cost);
    if (code === OK) data[slot] = OUT[0];
    return new Verdict(code === OK, reasons[code], cost, OUT[2], OUT[3], OUT[4], rule.traces[GCRA_TRACES + code]);
  }

  // A check of a key with no state yet: evaluated as fresh, given a slot only if it passes.
  #first(kind: Kind, rule: Rule, key: QuotaKey, t: number, cost: number): Decision {
    const code = decide(kind, rule, freshA(kind, rule, t), freshB(kind, t), t, cost);
    if (code === OK) {
      const table = rule.table(kind);
      const slot = this.#insert(table, key);
      if (slot < 0) return new Verdict(false, "key_limit", cost, OUT[2], 0, OUT[4], rule.trace(kind, KEY_LIMIT));
      const at = slot * table.stride;
      table.data[at] = OUT[0];
      if (kind !== GCRA) table.data[at + 1] = OUT[1];
      if (this.#sweepStep > 0) this.#step(table);
    }
    return new Verdict(code === OK, reasons[code], cost, OUT[2], OUT[3], OUT[4], rule.trace(kind, code));
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
   * const engine = new QuotaEngine();
   * engine.addLimit(perSecond("user-requests", 5));
   * engine.addLimit(perMinute("tenant-tokens", 10_000));
   * engine.addLimit(perMinute("model-tokens", 1_000));
   * const user = new QuotaKey("acme", "alice", "requests");
   * const tenant = new QuotaKey("acme", "*", "tokens");
   * const model = new QuotaKey("acme", "*", "model-a");
   * const charges = [charge(user, "user-requests", 1), charge(tenant, "tenant-tokens", 800), charge(model, "model-tokens", 800)];
   * engine.checkAtomic(charges, 0).committed; // true
   * const second = engine.checkAtomic(charges, 1); // the model has 200 tokens left
   * second.committed; // false
   * second.failedIndex; // 2
   * engine.checkAtomic([charge(user, "user-requests", 4)], 2).allowed; // true — the refused set charged no one
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
    if (!Number.isFinite(now)) throw nowError(now);
    const n = charges.length;
    const s = this.#scratch.fit(n);
    for (let i = 0; i < n; i++) {
      const c = charges[i] as QuotaCharge | undefined;
      if (c === null || typeof c !== "object") throw new TypeError(`charges[${i}] must be a QuotaCharge, got ${check.describe(c)}`);
      if (!(c.key instanceof QuotaKey)) throw keyError(c.key, `charges[${i}].key`);
      if (typeof c.limit !== "string") throw limitError(c.limit, `charges[${i}].limit`);
      if (!Number.isSafeInteger(c.cost) || c.cost < 1) throw costError(c.cost, `charges[${i}].cost`);
      const kind = kindOf(c.kind);
      if (kind < 0) throw kindError(c.kind, `charges[${i}].kind`);
      s.kinds[i] = kind;
    }
    const t = now > this.#clock ? (this.#clock = now) : this.#clock;
    const latest = n > SMALL_SET ? new Map<string, number>() : undefined;
    let failed = -1;
    for (let i = 0; i < n; i++) {
      const c = charges[i] as QuotaCharge;
      const kind = s.kinds[i] as Kind;
      const rule = this.#rules.get(c.limit);
      s.rules[i] = rule;
      if (rule === undefined) {
        s.codes[i] = UNKNOWN_LIMIT;
        s.rem[i] = 0;
        s.retry[i] = Infinity;
        s.reset[i] = 0;
        if (failed < 0) failed = i;
        continue;
      }
      const id = c.key.id;
      // The state this charge sees: after the latest earlier charge to the same bucket that fit.
      let p = -1;
      if (latest !== undefined) p = latest.get(bucketName(kind, c.limit, id)) ?? -1;
      else {
        for (let j = i - 1; j >= 0; j--) {
          if (s.codes[j] === OK && s.rules[j] === rule && s.kinds[j] === kind && (charges[j] as QuotaCharge).key.id === id) {
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
        const slot = table?.find(c.key);
        s.slots[i] = slot ?? -1;
        if (table === undefined || slot === undefined) {
          a = freshA(kind, rule, t);
          b = freshB(kind, t);
        } else {
          a = table.data[slot * table.stride];
          b = kind === GCRA ? 0 : (table.data[slot * table.stride + 1]);
        }
      }
      const code = decide(kind, rule, a, b, t, c.cost);
      s.codes[i] = code;
      s.a[i] = OUT[0];
      s.b[i] = OUT[1];
      s.rem[i] = OUT[2];
      s.retry[i] = OUT[3];
      s.reset[i] = OUT[4];
      if (code === OK) latest?.set(bucketName(kind, c.limit, id), i);
      else if (failed < 0) failed = i;
    }
    this.#reclaimed = false;
    if (failed < 0 && commit && this.#maxKeys !== Infinity) failed = this.#room(charges, n);
    if (failed < 0 && commit) this.#commit(charges, n);

    const decisions = new Array<Decision>(n);
    for (let i = 0; i < n; i++) {
      const c = charges[i] as QuotaCharge;
      const kind = s.kinds[i] as Kind;
      const rule = s.rules[i];
      let code = s.codes[i] as Code;
      if (rule === undefined) {
        decisions[i] = this.#unknown(kind, c.limit, c.cost);
        continue;
      }
      if (code === OK && failed >= 0) code = NOT_COMMITTED;
      decisions[i] = new Verdict(code === OK, reasons[code], c.cost, s.rem[i], code === NOT_COMMITTED ? 0 : (s.retry[i]), s.reset[i], rule.trace(kind, code));
    }
    return { allowed: failed < 0, committed: commit && failed < 0, failedIndex: failed, retryAfter: failed < 0 ? 0 : this.#setRetry(charges, n, t), decisions };
  }

  // With maxKeys: whether the set's new keys fit (after a bounded sweep if need be). Returns -1,
  // or the index of the first charge to a new key, marked KEY_LIMIT.
  #room(charges: readonly QuotaCharge[], n: number): number {
    const s = this.#scratch;
    const fresh = (): number => {
      const names = new Set<string>();
      let first = -1;
      for (let i = 0; i < n; i++) {
        const c = charges[i];
        const kind = s.kinds[i] as Kind;
        if ((s.rules[i] as Rule).tables[kind]?.map.has(c.key.id) === true) continue;
        const name = bucketName(kind, c.limit, c.key.id);
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
  #commit(charges: readonly QuotaCharge[], n: number): void {
    const s = this.#scratch;
    let grown: SlotTable[] | undefined;
    for (let i = 0; i < n; i++) {
      const c = charges[i];
      const kind = s.kinds[i] as Kind;
      const table = (s.rules[i] as Rule).table(kind);
      const known = s.slots[i];
      // A key new to the table may have been given a slot by an earlier charge of this set.
      let slot = known >= 0 && !this.#reclaimed ? known : table.find(c.key);
      if (slot === undefined) {
        slot = table.add(c.key);
        this.#keys++;
        if (grown === undefined) grown = [table];
        else if (!grown.includes(table)) grown.push(table);
      }
      const at = slot * table.stride;
      table.data[at] = s.a[i];
      if (kind !== GCRA) table.data[at + 1] = s.b[i];
    }
    if (grown !== undefined && this.#sweepStep > 0) for (const table of grown) this.#step(table);
  }

  // When the whole set would fit: the latest of, for each bucket it touches, the time until that
  // bucket holds the set's total demand on it (Infinity if a limit is unknown or a total too large).
  #setRetry(charges: readonly QuotaCharge[], n: number, t: number): number {
    const s = this.#scratch;
    let worst = 0;
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) {
      const c = charges[i];
      const rule = s.rules[i];
      if (rule === undefined) return Infinity;
      const kind = s.kinds[i] as Kind;
      const name = bucketName(kind, c.limit, c.key.id);
      if (seen.has(name)) continue;
      seen.add(name);
      let total = 0;
      for (let j = i; j < n; j++) {
        const d = charges[j];
        if (s.rules[j] === rule && s.kinds[j] === kind && d.key.id === c.key.id) total += d.cost;
      }
      const table = rule.tables[kind];
      const slot = table?.map.get(c.key.id);
      const code =
        table === undefined || slot === undefined
          ? decide(kind, rule, freshA(kind, rule, t), freshB(kind, t), t, total)
          : decide(kind, rule, table.data[slot * table.stride], kind === GCRA ? 0 : (table.data[slot * table.stride + 1]), t, total);
      if (code !== OK && (OUT[3]) > worst) worst = OUT[3];
    }
    return worst;
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
    if (!(key instanceof QuotaKey)) throw keyError(key, "key");
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
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i] as EvaluationInput | undefined;
      if (input === null || typeof input !== "object") throw new TypeError(`inputs[${i}] must be an EvaluationInput, got ${check.describe(input)}`);
      if (!(input.key instanceof QuotaKey)) throw keyError(input.key, `inputs[${i}].key`);
      if (!Number.isFinite(input.now)) throw nowError(input.now);
      const cost = input.cost ?? 1;
      if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, `inputs[${i}].cost`);
    }
    const decisions = new Array<Decision>(inputs.length);
    let allowed = 0;
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i] as EvaluationInput;
      const cost = input.cost ?? 1;
      const d = k === BUCKET ? this.checkTokenBucket(input.key, limit, input.now, cost) : k === WINDOW ? this.checkWindow(input.key, limit, input.now, cost) : this.checkGcra(input.key, limit, input.now, cost);
      if (d.allowed) allowed++;
      decisions[i] = d;
    }
    return { total: inputs.length, allowed, denied: inputs.length - allowed, decisions };
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
    if (!Number.isFinite(now)) throw nowError(now);
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
      if (table !== undefined) for (const [id, slot] of table.map) gcra.push({ key: parts(id), limit: rule.name, tat: table.data[slot] });
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
