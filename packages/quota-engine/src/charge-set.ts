// Atomic charge sets: every charge read once into working space, evaluated on staged state at one
// instant (repeated charges to one key's state add up), committed only if all fit, and the set's
// own retryAfter — when the whole set would fit — found by evaluating the set again there.
import { firstAfter, until } from "@tideward/limiters/math";
import { check } from "@tideward/time/internal";
import { decide, freshAmount, freshInstant } from "./algorithms";
import { costError, isCost, isInstant, keyError, kindError, limitError, nowError, strayError } from "./args";
import type { AtomicReport, QuotaCharge } from "./charge";
import { Verdict, reasons, unknownLimit } from "./decision";
import type { Decision } from "./decision";
import { isQuotaKey } from "./key";
import type { QuotaKey } from "./key";
import type { KeySpace } from "./key-space";
import { KIND_NAMES, WINDOW, kindOf } from "./kinds";
import type { Kind } from "./kinds";
import type { LimitState } from "./limit-state";
import { KEY_LIMIT, NOT_COMMITTED, OK, UNKNOWN_LIMIT, step } from "./outcome";
import type { Code } from "./outcome";
import { STRIDE } from "./table";
import type { SlotTable } from "./table";

/** Charge sets larger than this find repeated state with a Map instead of a scan. */
const SMALL_SET = 16;
/** The most charges an atomic set may hold: its working space, kept for the next set, is then at most some 3.5 MB. */
export const MAX_CHARGES = 65_536;

/**
 * The id of the state one charge touches — which limit, which algorithm, which key — for a set to
 * tell when two charges touch the same state. Unambiguous: the key id is length-prefixed.
 */
const CHARGE_FIELDS = ["key", "limit", "cost", "kind"];

function stateId(kind: Kind, limit: string, id: string): string {
  return `${kind}${limit.length}:${limit}${id}`;
}

/**
 * The charge sets of one engine: the working space, kept between calls so a set allocates only
 * its report, and the steps of a set.
 */
export class ChargeSets {
  #size = 0;
  // Each charge's fields, read once from the caller's objects: every later step uses these.
  #keys: QuotaKey[] = [];
  #ids: string[] = [];
  #names: string[] = [];
  #costs = new Float64Array(0);
  #kinds = new Uint8Array(0);
  // What evaluating each charge on staged state gave.
  #codes = new Uint8Array(0);
  #amounts = new Float64Array(0);
  #instants = new Float64Array(0);
  #remaining = new Float64Array(0);
  #passAt = new Float64Array(0);
  #resetAt = new Float64Array(0);
  /** The slot each charge's key had when evaluated, or -1 for none. */
  #slots = new Int32Array(0);
  #limits: (LimitState | undefined)[] = [];
  /** Whether a sweep ran between evaluating and committing, so the slots found may be stale. */
  #reclaimed = false;

  #fit(n: number): void {
    if (n <= this.#size) return;
    const size = Math.max(8, n, this.#size * 2);
    this.#costs = new Float64Array(size);
    this.#kinds = new Uint8Array(size);
    this.#codes = new Uint8Array(size);
    this.#amounts = new Float64Array(size);
    this.#instants = new Float64Array(size);
    this.#remaining = new Float64Array(size);
    this.#passAt = new Float64Array(size);
    this.#resetAt = new Float64Array(size);
    this.#slots = new Int32Array(size);
    this.#size = size;
  }

  /**
   * Reads and checks `charges` and `now`: each charge once, into the working space, so nothing
   * later reads the caller's objects again (a getter cannot answer one cost to the check and
   * another to the charge) and a forged key is refused before any state is looked at.
   *
   * @returns the number of charges
   */
  read(charges: unknown, now: unknown): number {
    if (!Array.isArray(charges))
      throw new TypeError(`charges must be an array of QuotaCharge, got ${check.describe(charges)}`);
    if (!isInstant(now)) throw nowError(now);
    const n = charges.length;
    // Before the working space is sized to it: a sparse array's length costs its maker nothing.
    if (n > MAX_CHARGES)
      throw new RangeError(`charges must hold at most ${MAX_CHARGES} charges (an atomic set), got ${n}`);
    this.#fit(n);
    for (let i = 0; i < n; i++) {
      const c = charges[i] as QuotaCharge | undefined;
      if (c === null || typeof c !== "object")
        throw new TypeError(`charges[${i}] must be a QuotaCharge, got ${check.describe(c)}`);
      const { key, limit, cost, kind: name } = c;
      // A misspelt key, limit or cost leaves a required field missing, which is refused below; a
      // misspelt kind would pass as a token bucket. So only a charge without a kind is scanned for
      // fields it should not have: charge() always names the kind, and a charge that names one
      // pays a comparison. (for-in over a plain object allocates nothing.)
      if (name === undefined)
        for (const f in c)
          if (f !== "key" && f !== "limit" && f !== "cost" && f !== "kind")
            throw strayError(f, CHARGE_FIELDS, `charges[${i}]`);
      if (!isQuotaKey(key)) throw keyError(key, `charges[${i}].key`);
      if (typeof limit !== "string") throw limitError(limit, `charges[${i}].limit`);
      if (!isCost(cost)) throw costError(cost, `charges[${i}].cost`);
      const kind = kindOf(name);
      if (kind < 0) throw kindError(name, `charges[${i}].kind`);
      this.#keys[i] = key;
      this.#ids[i] = key.id;
      this.#names[i] = limit;
      this.#costs[i] = cost;
      this.#kinds[i] = kind;
    }
    return n;
  }

  /**
   * Evaluates the `n` charges just {@link ChargeSets.read} at `t` (the engine's instant for the
   * caller's `now`), commits them if `commit` and all fit, and reports.
   */
  run(
    n: number,
    limits: Map<string, LimitState>,
    space: KeySpace,
    t: number,
    now: number,
    commit: boolean,
  ): AtomicReport {
    const failed = this.decide(n, limits, space, t, commit);
    const decisions = this.decisions(n, failed, t, now);
    // The set's retry is computed last: it evaluates the set again at later instants.
    const retryAfter = failed < 0 ? 0 : this.retryAfter(n, limits, t, now);
    return { allowed: failed < 0, committed: commit && failed < 0, failedIndex: failed, retryAfter, decisions };
  }

  /**
   * Evaluates the `n` charges just read at `t`, and commits them if `commit` and all fit.
   *
   * @returns the index of the first charge that did not fit, or -1
   */
  decide(n: number, limits: Map<string, LimitState>, space: KeySpace, t: number, commit: boolean): number {
    let failed = this.#stage(n, limits, t);
    this.#reclaimed = false;
    // A peek asks for room too, so that it answers what the check would (a sweep of keys at
    // rest changes no decision); only a check counts a refusal for want of it.
    if (failed < 0 && space.maxKeys !== Infinity) failed = this.#room(n, limits, space, t, commit);
    if (failed < 0 && commit) this.#commit(n, space, t);
    return failed;
  }

  /** Each charge's decision, after {@link ChargeSets.decide} answered `failed`; waits from the caller's `now`. */
  decisions(n: number, failed: number, t: number, now: number): Decision[] {
    const decisions = new Array<Decision>(n);
    for (let i = 0; i < n; i++) {
      const kind = this.#kinds[i] as Kind;
      const limit = this.#limits[i];
      let code = this.#codes[i] as Code;
      if (limit === undefined) {
        decisions[i] = unknownLimit(KIND_NAMES[kind], this.#names[i], this.#costs[i]);
        continue;
      }
      if (code === OK && failed >= 0) code = NOT_COMMITTED;
      const retry = code === NOT_COMMITTED ? 0 : until(now, t, this.#passAt[i]);
      decisions[i] = new Verdict(
        code === OK,
        reasons[code],
        this.#costs[i],
        this.#remaining[i],
        retry,
        until(now, t, this.#resetAt[i]),
        limit.trace(kind, code),
      );
    }
    return decisions;
  }

  // What a reservation keeps of charge `i` of the set just read (reservation.ts copies it).
  /** The key of charge `i`. */
  keyAt(i: number): QuotaKey {
    return this.#keys[i];
  }

  /** The id of charge `i`'s key. */
  idAt(i: number): string {
    return this.#ids[i];
  }

  /** The limit name of charge `i`. */
  nameAt(i: number): string {
    return this.#names[i];
  }

  /** The kind of charge `i`. */
  kindAt(i: number): Kind {
    return this.#kinds[i] as Kind;
  }

  /** The cost of charge `i`. */
  costAt(i: number): number {
    return this.#costs[i];
  }

  /** For a window charge just evaluated, the end of the window it counted in (ms); 0 for the other kinds. */
  endAt(i: number): number {
    return this.#kinds[i] === WINDOW ? this.#instants[i] : 0;
  }

  // Evaluates the n charges at `t` on staged state, writing nothing but the working space: each
  // charge sees its state after the earlier charges to the same state that fit. Returns the index
  // of the first charge that did not fit, or -1.
  #stage(n: number, limits: Map<string, LimitState>, t: number): number {
    const latest = n > SMALL_SET ? new Map<string, number>() : undefined;
    let failed = -1;
    for (let i = 0; i < n; i++) {
      const kind = this.#kinds[i] as Kind;
      const base = limits.get(this.#names[i]);
      // A key with an override of the limit is held to that, and keeps its state there.
      const limit = base?.overrides === undefined ? base : base.forKey(this.#keys[i]);
      this.#limits[i] = limit;
      if (limit === undefined) {
        this.#codes[i] = UNKNOWN_LIMIT;
        this.#remaining[i] = 0;
        this.#passAt[i] = Infinity;
        this.#resetAt[i] = t;
        if (failed < 0) failed = i;
        continue;
      }
      const id = this.#ids[i];
      // The latest earlier charge to the same state that fit, if any.
      let p = -1;
      if (latest !== undefined) p = latest.get(stateId(kind, this.#names[i], id)) ?? -1;
      else {
        for (let j = i - 1; j >= 0; j--) {
          if (this.#codes[j] === OK && this.#same(i, j)) {
            p = j;
            break;
          }
        }
      }
      let amount: number;
      let instant: number;
      if (p >= 0) {
        amount = this.#amounts[p];
        instant = this.#instants[p];
        this.#slots[i] = this.#slots[p];
      } else {
        const table = limit.tables[kind];
        const slot = table === undefined ? -1 : table.find(this.#keys[i]);
        this.#slots[i] = slot;
        if (table === undefined || slot < 0) {
          amount = freshAmount(kind, limit.rule);
          instant = freshInstant(kind, t);
        } else {
          amount = table.data[slot * STRIDE];
          instant = table.data[slot * STRIDE + 1];
        }
      }
      const code = decide(kind, limit.rule, amount, instant, t, this.#costs[i]);
      this.#codes[i] = code;
      this.#amounts[i] = step.amount;
      this.#instants[i] = step.instant;
      this.#remaining[i] = step.remaining;
      this.#passAt[i] = step.passAt;
      this.#resetAt[i] = step.resetAt;
      if (code === OK) latest?.set(stateId(kind, this.#names[i], id), i);
      else if (failed < 0) failed = i;
    }
    return failed;
  }

  // Whether charges i and j touch the same state (both with a known limit).
  #same(i: number, j: number): boolean {
    return this.#limits[j] === this.#limits[i] && this.#kinds[j] === this.#kinds[i] && this.#ids[j] === this.#ids[i];
  }

  // With maxKeys: whether the set's new keys fit (after a bounded sweep if need be). Returns -1,
  // or the index of the first charge to a new key, marked KEY_LIMIT.
  #room(n: number, limits: Map<string, LimitState>, space: KeySpace, t: number, commit: boolean): number {
    if (space.fits(this.#newKeys(n)[0])) return -1;
    space.reclaim(limits.values(), t);
    this.#reclaimed = true; // slots found during evaluation may have been freed by the sweep
    const [count, first] = this.#newKeys(n);
    if (space.fits(count)) return -1;
    if (commit) space.refused++;
    this.#codes[first] = KEY_LIMIT;
    return first;
  }

  // How many distinct states the set would add, and the first charge that adds one (or -1).
  #newKeys(n: number): [number, number] {
    const ids = new Set<string>();
    let first = -1;
    for (let i = 0; i < n; i++) {
      const kind = this.#kinds[i] as Kind;
      if (((this.#limits[i] as LimitState).tables[kind]?.find(this.#keys[i]) ?? -1) >= 0) continue;
      const id = stateId(kind, this.#names[i], this.#ids[i]);
      if (ids.has(id)) continue;
      ids.add(id);
      if (first < 0) first = i;
    }
    return [ids.size, first];
  }

  // Writes a set that fit: in order, so the last staged value of each state is what remains.
  #commit(n: number, space: KeySpace, t: number): void {
    let grown: SlotTable[] | undefined;
    for (let i = 0; i < n; i++) {
      const kind = this.#kinds[i] as Kind;
      const table = (this.#limits[i] as LimitState).table(kind);
      const known = this.#slots[i];
      // A key new to the table may have been given a slot by an earlier charge of this set.
      let slot = known >= 0 && !this.#reclaimed ? known : table.find(this.#keys[i]);
      if (slot < 0) {
        slot = space.place(table, this.#keys[i]);
        if (grown === undefined) grown = [table];
        else if (!grown.includes(table)) grown.push(table);
      }
      table.data[slot * STRIDE] = this.#amounts[i];
      table.data[slot * STRIDE + 1] = this.#instants[i];
    }
    if (grown !== undefined) for (const table of grown) space.stepAfterAdd(table, t);
  }

  /**
   * When the whole set would fit, as a wait from the caller's `now`: the latest of, for each
   * state the set touches, the first instant at which it holds the set's total demand on it
   * (Infinity if a limit is unknown or a total too large) — then confirmed by evaluating the set
   * itself there, charge by charge, and moved on to the first instant at which it passes if the
   * staged roundings differ from the totals' by a float step.
   */
  retryAfter(n: number, limits: Map<string, LimitState>, t: number, now: number): number {
    let worst = t;
    let repeated = false;
    // Past a small set, each state's total demand in one pass (a scan per charge is quadratic).
    let totals: Map<string, number> | undefined;
    if (n > SMALL_SET) {
      totals = new Map();
      for (let i = 0; i < n; i++) {
        const id = stateId(this.#kinds[i] as Kind, this.#names[i], this.#ids[i]);
        const sum = totals.get(id);
        if (sum !== undefined) repeated = true;
        totals.set(id, (sum ?? 0) + this.#costs[i]);
      }
    }
    for (let i = 0; i < n; i++) {
      const limit = this.#limits[i];
      if (limit === undefined) return Infinity;
      let total = this.#costs[i];
      if (totals !== undefined) {
        // Each state once, at its first charge: its total is taken out as it is used.
        const id = stateId(this.#kinds[i] as Kind, this.#names[i], this.#ids[i]);
        const sum = totals.get(id);
        if (sum === undefined) continue;
        totals.delete(id);
        total = sum;
      } else {
        // Each state once, at its first charge: a set is small, so a scan beats a Map of ids.
        let first = true;
        for (let j = 0; j < i && first; j++) if (this.#same(i, j)) first = false;
        if (!first) continue;
        for (let j = i + 1; j < n; j++) {
          if (this.#same(i, j)) {
            total += this.#costs[j];
            repeated = true;
          }
        }
      }
      const kind = this.#kinds[i] as Kind;
      const table = limit.tables[kind];
      const slot = table === undefined ? -1 : table.find(this.#keys[i]);
      if (table === undefined || slot < 0)
        decide(kind, limit.rule, freshAmount(kind, limit.rule), freshInstant(kind, t), t, total);
      else decide(kind, limit.rule, table.data[slot * STRIDE], table.data[slot * STRIDE + 1], t, total);
      if (step.passAt > worst) worst = step.passAt;
    }
    if (worst === Infinity) return Infinity;
    // A state charged once passes at its own instant by construction (the same test); only
    // repeated charges are staged, whose roundings can differ from their total's by a float step.
    if (repeated && this.#stage(n, limits, worst) >= 0) worst = firstAfter(worst, (x) => this.#stage(n, limits, x) < 0);
    return until(now, t, worst);
  }
}
