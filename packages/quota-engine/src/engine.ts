import { check } from "@tideward/time/internal";
import { checkOverrideArgs, isInstant, keyError, limitError, nowError, readInputs, readKind } from "./args";
import type { AtomicReport, BatchReport, ChargeKind, EvaluationInput, QuotaCharge } from "./charge";
import { ChargeSets } from "./charge-set";
import { Checks } from "./checks";
import type { Decision } from "./decision";
import { FairShare } from "./fair";
import type { FairShareItem } from "./fair";
import { countStats, findIssues, summarize } from "./health";
import type { EngineParts, EngineSummary, QuotaStats, ValidationIssue } from "./health";
import { Links, chain, foldChain } from "./hierarchy";
import type { LinkCode, QuotaLink } from "./hierarchy";
import { isQuotaKey } from "./key";
import type { QuotaKey } from "./key";
import { KeySpace } from "./key-space";
import type { SweepReport } from "./key-space";
import { GCRA, WINDOW } from "./kinds";
import type { LimitSpec, OverrideFields } from "./limit";
import { LimitBook } from "./limit-book";
import { Ledger } from "./ledger";
import { resolvePolicy } from "./policy";
import type { EnginePolicy } from "./policy";
import type { ReserveReport } from "./reservation";
import { checkReserveId, checkReserveOptions, checkReserveTtl } from "./reserve";
import type { ReserveOptions } from "./reserve";
import type { Result } from "./result";
import { checkId, readActual } from "./settle";
import type { ActualCost, SettleResult } from "./settle";
import { writeSnapshot } from "./snapshot";
import { readSnapshot } from "./snapshot-read";
import type { QuotaSnapshot } from "./snapshot";
import type { ReservationStore, RuntimeLimitStore } from "./store";

/**
 * The quota engine: named limits, per-key state for three algorithms, atomic charge sets,
 * hierarchy, batches, fair share, health checks and snapshots — all synchronous, all in process.
 *
 * Every call takes `now`, the caller's clock in milliseconds, within ±2^45. The engine's clock
 * never runs backwards: a `now` earlier than the latest one it has seen (from any call) is read
 * as that latest instant, so a clock stepping back never mints tokens. From rest exactly the
 * capacity (GCRA: the burst) passes back to back at any clock reading, `Date.now()` included, and
 * `retryAfter` is 0 exactly when a charge passes and enough when added to the caller's `now`.
 *
 * A key whose state has become a fresh key's (bucket full, window closed, GCRA at rest) is
 * dropped by an incremental sweep, exactly — it decides as a kept one would — so memory follows
 * the keys in use, not every key seen.
 *
 * @example
 * const engine = new QuotaEngine();
 * engine.addLimit(perSecond("requests", 10));
 * const alice = new QuotaKey("tenant-a", "alice", "api");
 * engine.checkTokenBucket(alice, "requests", Date.now()).allowed; // true
 */
export class QuotaEngine implements ReservationStore, RuntimeLimitStore {
  /** The policy in force (the preset with the constructor's fields laid over it). */
  readonly policy: EnginePolicy;
  readonly #book = new LimitBook();
  // The book's Map, read directly by every check.
  readonly #limits = this.#book.map;
  readonly #space: KeySpace;
  // The single checks, and the engine's clock (the latest instant seen, ms).
  readonly #checks: Checks;
  readonly #sets = new ChargeSets();
  readonly #ledger: Ledger;
  #links = new Links();
  #fair = new FairShare();

  /**
   * An engine with no limits.
   *
   * @param policy - read once; an unknown field is a `TypeError` naming the closest known one
   * @throws RangeError or TypeError naming the field when `maxKeys` is not a whole number of at
   *   least 1 (or Infinity), or `sweepStep` is not a whole number of at least 0; TypeError when
   *   `policy` is not an object
   */
  constructor(policy?: Partial<EnginePolicy>) {
    this.policy = resolvePolicy(policy);
    this.#space = new KeySpace(this.policy.maxKeys, this.policy.sweepStep);
    this.#checks = new Checks(this.#limits, this.#space);
    this.#ledger = new Ledger(this.policy.maxReservations);
  }

  // ── limits ────────────────────────────────────────────────────────────────────────────────

  /**
   * Adds a limit. Refused, with a reason and nothing changed, when the spec is invalid
   * (`"invalid_limit"`) or a limit of that name exists (`"duplicate_limit"`).
   */
  addLimit(spec: LimitSpec): Result<"duplicate_limit" | "invalid_limit"> {
    return this.#book.add(spec);
  }

  /**
   * Replaces the limit of `spec`'s name while the engine runs (a plan upgrade, an incident), at
   * `now`. Every key keeps its state, re-based: a bucket its level, clamped to the new capacity (a
   * full one full); a window its count, closing no later than a new window from `now`; a GCRA
   * flow its theoretical arrival time. Overrides keep the fields they set and take the others.
   * Refused, with a reason and nothing changed, when no limit has that name (`"unknown_limit"`)
   * or the spec, or an override under it, is invalid (`"invalid_limit"`).
   *
   * @param now - the caller's clock, in milliseconds
   * @throws RangeError when `now` is not a clock reading
   */
  replaceLimit(spec: LimitSpec, now: number): Result<"unknown_limit" | "invalid_limit"> {
    if (!isInstant(now)) throw nowError(now);
    return this.#book.replace(spec, () => this.#advance(now));
  }

  /**
   * Removes the limit named `name` with every key's state under it, its overrides and its links:
   * a check of it answers `"unknown_limit"` from then on, and a reservation that charged it
   * settles its other charges. Refused (`"unknown_limit"`) when there is none.
   *
   * @throws TypeError when `name` is not a string
   */
  removeLimit(name: string): Result<"unknown_limit"> {
    if (typeof name !== "string") throw limitError(name, "name");
    this.#checks.forget();
    return this.#book.remove(name, this.#space, this.#links);
  }

  /**
   * Gives `key` a limit of its own under the name `limit`, the limit's fields with `fields` laid
   * over them (a tenant with its own capacity, without declaring a limit for it); its state moves
   * to the override at `now`, re-based as by {@link QuotaEngine.replaceLimit}. Setting it again
   * replaces it. Refused, with a reason and nothing changed, when the limit is unknown
   * (`"unknown_limit"`), the fields make no valid limit (`"invalid_override"`), or `maxOverrides`
   * overrides exist (`"override_limit"`).
   *
   * @param fields - any of `capacity`, `refill`, `window`, `burst`, `align`; the others are the
   *   limit's, and follow it when it is replaced
   * @param now - the caller's clock, in milliseconds
   * @throws TypeError or RangeError when `key`, `limit` or `now` is malformed
   */
  setOverride(
    key: QuotaKey,
    limit: string,
    fields: OverrideFields,
    now: number,
  ): Result<"unknown_limit" | "invalid_override" | "override_limit"> {
    checkOverrideArgs(key, limit, now);
    return this.#book.setOverride(key, limit, fields, this.policy.maxOverrides, () => this.#advance(now));
  }

  /**
   * Takes `key`'s override of `limit` away: the key is held to the limit again, its state moved
   * back at `now` and re-based. Refused (`"unknown_limit"`, `"unknown_override"`) when there is
   * no such limit or override.
   *
   * @throws TypeError or RangeError when `key`, `limit` or `now` is malformed
   */
  removeOverride(key: QuotaKey, limit: string, now: number): Result<"unknown_limit" | "unknown_override"> {
    checkOverrideArgs(key, limit, now);
    return this.#book.removeOverride(key, limit, () => this.#advance(now));
  }

  /** The limit `key` is held to under the name `limit` by an override, or undefined when it has none. */
  override(key: QuotaKey, limit: string): LimitSpec | undefined {
    if (!isQuotaKey(key)) throw keyError(key, "key");
    return this.#limits.get(limit)?.overrides?.get(key.id)?.spec;
  }

  /** The limit named `name`, or undefined. */
  limit(name: string): LimitSpec | undefined {
    return this.#limits.get(name)?.spec;
  }

  /** Every limit, in the order added. */
  limits(): LimitSpec[] {
    return [...this.#limits.values()].map((l) => l.spec);
  }

  // The engine's instant for the caller's `now`: `now`, or the latest seen if that is later.
  #advance(now: number): number {
    return this.#checks.advance(now);
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
    return this.#checks.bucket(key, limit, now, cost);
  }

  /**
   * Counts `cost` units against `key`'s fixed window of `limit` at `now`, if the window has room:
   * at most `capacity` units per `window` milliseconds. See {@link LimitSpec.align}.
   *
   * @param now - the caller's clock, in milliseconds
   * @param cost - units, a whole number of at least 1; 1 by default
   * @throws TypeError or RangeError when an argument is malformed
   */
  checkWindow(key: QuotaKey, limit: string, now: number, cost = 1): Decision {
    return this.#checks.check(WINDOW, key, limit, now, cost);
  }

  /**
   * Schedules `cost` units for `key` under GCRA at `now`, if that leaves the key at most `burst`
   * units ahead of its schedule of `refill` per `window` milliseconds: smooth shaping.
   *
   * @param now - the caller's clock, in milliseconds
   * @param cost - units, a whole number of at least 1; 1 by default
   * @throws TypeError or RangeError when an argument is malformed
   */
  checkGcra(key: QuotaKey, limit: string, now: number, cost = 1): Decision {
    return this.#checks.check(GCRA, key, limit, now, cost);
  }

  // ── charge sets ───────────────────────────────────────────────────────────────────────────

  /**
   * Charges every dimension of a request at once, or none of them: tideward's headline.
   *
   * Each charge is evaluated on staged state at one instant, so repeated charges to one key's
   * state add up; only when every charge fits is anything written. A missing limit, an
   * insufficient balance or (with `maxKeys`) no room for a new key rejects the whole set, every
   * key's state as it was. The report names the first charge that failed and carries every
   * decision.
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
    const n = this.#sets.read(charges, now);
    const t = this.#checks.advance(now);
    return this.#sets.run(n, this.#limits, this.#space, t, now, commit);
  }

  // ── reservations ──────────────────────────────────────────────────────────────────────────

  /**
   * Reserves a charge set: charges it at once, or none of it, exactly as
   * {@link QuotaEngine.checkAtomic} would (the same decisions, the same reasons on refusal), and
   * keeps a record of it under an id, so that the actual cost can be settled when the work is
   * done ({@link QuotaEngine.settle}) or the whole given back ({@link QuotaEngine.cancel}). Left
   * alone for `ttl` milliseconds, a reservation expires and is settled as reserved.
   *
   * @example
   * const engine = new QuotaEngine();
   * engine.addLimit(perMinute("tokens", 10_000));
   * const tenant = new QuotaKey("acme", "*", "llm");
   * const r = engine.reserve([charge(tenant, "tokens", 800)], 0); // the request's max_tokens
   * r.code; // "reserved"
   * engine.settle(r.id, { tokens: 300 }, 2_000).ok; // true: 500 tokens given back
   * @param now - the caller's clock, in milliseconds
   * @param options - `id`, the reservation's id (1 to 256 characters, not starting with `#`; one
   *   is made when left out), and `ttl`, its time to live in ms (1 to 2^44; the policy's
   *   `reservationTtl` when left out)
   * @throws TypeError or RangeError naming the charge and field, or the option, when malformed
   *   (checked before anything is evaluated)
   */
  reserve(charges: readonly QuotaCharge[], now: number, options?: ReserveOptions): ReserveReport {
    // Each option read once; no array or copy made for them (a reserve is on the hot path).
    checkReserveOptions(options);
    const id = options?.id;
    const given = options?.ttl;
    if (id !== undefined) checkReserveId(id);
    if (given !== undefined) checkReserveTtl(given);
    const ttl = given ?? this.policy.reservationTtl;
    const n = this.#sets.read(charges, now);
    return this.#ledger.reserve(this.#sets, n, id, ttl, this.#limits, this.#space, this.#advance(now), now);
  }

  /**
   * Settles reservation `id` at its actual cost, given per limit name: where a limit's actual is
   * below what was reserved the difference is refunded, where above it is topped up — never
   * refused, the work being done (see the policy's `topUp`). A limit the reservation charged more
   * than once (a chain up a hierarchy) settles each charge in proportion to what it reserved,
   * the first at the actual given, rounded up; a limit not named in `actual` settles as reserved.
   *
   * Idempotent: a second settle, or a cancel after it, changes nothing and says so
   * (`"already_settled"`), as long as the id is remembered (until its time to live ends).
   *
   * | algorithm | refund | top-up |
   * | --- | --- | --- |
   * | token bucket | tokens added back, never above the capacity | tokens taken, in debt down to `−capacity` at most |
   * | fixed window | the count lowered while the reservation's window is open; nothing once it has closed | counted in the reservation's window while open, else in the window open now |
   * | GCRA | the TAT moved back by the units' interval, never before `now` | the TAT moved on, at most a burst past the tolerance |
   *
   * @param actual - units per limit name, each a whole number of at least 0: `{ tokens: 300 }`
   * @param now - the caller's clock, in milliseconds
   * @throws TypeError or RangeError naming `id`, `now` or `actual["name"]` when malformed
   *   (nothing changes); an unknown id or a limit the reservation did not charge is an answer
   */
  settle(id: string, actual: ActualCost, now: number): SettleResult {
    checkId(id, "id");
    const given = readActual(actual);
    return this.#close(id, given, now);
  }

  /**
   * Cancels reservation `id`: every charge is refunded whole, by the same rules as a settle at 0
   * (a window's count lowered only while the reservation's window is open). A cancel after a
   * settle, or a second cancel, changes nothing and says so.
   *
   * @param now - the caller's clock, in milliseconds
   * @throws TypeError or RangeError when `id` or `now` is malformed
   */
  cancel(id: string, now: number): SettleResult {
    checkId(id, "id");
    return this.#close(id, undefined, now);
  }

  #close(id: string, given: Map<string, number> | undefined, now: number): SettleResult {
    if (!isInstant(now)) throw nowError(now);
    const t = this.#advance(now);
    return this.#ledger.close(id, given, this.#limits, this.#space, t, this.policy.topUp === "debt");
  }

  // ── hierarchy ─────────────────────────────────────────────────────────────────────────────

  /**
   * Links `child` to `parent` for one limit: from now on a hierarchical check of the child
   * charges the parent `ratio` times as much. Refused, with a reason and nothing changed, when the
   * limit is unknown, the child already has a parent for that limit, the link would close a
   * cycle, or a field is invalid.
   */
  addLink(link: QuotaLink): Result<LinkCode> {
    return this.#links.add(link, (limit) => this.#limits.has(limit));
  }

  /**
   * The charges a hierarchical check of `key` makes: `cost` to the key, then up its chain of
   * links for `limit`, each parent charged its link's ratio times its child's charge. Useful to
   * fold a chain into a larger {@link QuotaEngine.checkAtomic} set.
   *
   * @throws TypeError or RangeError when an argument is malformed or a chained cost passes 2^53
   */
  chain(key: QuotaKey, limit: string, cost = 1, kind: ChargeKind = "bucket"): QuotaCharge[] {
    return chain(this.#links, key, limit, cost, kind);
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
    const charges = chain(this.#links, key, limit, cost, kind);
    return foldChain(charges, this.#atomic(charges, now, true), limit, cost);
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
    const k = readKind(kind, "kind");
    return this.#checks.many(limit, k, readInputs(inputs, isQuotaKey));
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
   * Examines up to `budget` slots, resuming where the last sweep stopped and moving from table to
   * table, and drops the keys whose state equals a fresh key's at `now` (bucket full, window
   * closed, GCRA at rest). Dropping is exact: no later decision changes. It also drops up to
   * `budget` reservations past their time to live (settled as reserved) and forgotten ids. Call it
   * from a timer with a modest budget to keep memory bounded with `sweepStep` at 0, or on an
   * engine that makes no more reservations, or to reclaim faster.
   *
   * @param now - the caller's clock, in milliseconds (it advances the engine's clock)
   * @param budget - the most slots (and reservations) to examine; 1024 by default
   */
  sweep(now: number, budget = 1024): SweepReport {
    if (!isInstant(now)) throw nowError(now);
    if (budget !== Infinity) check.integer(budget, "sweep budget", 0);
    const t = this.#checks.advance(now);
    const dropped = this.#space.sweep(this.#limits.values(), t, budget);
    const expired = this.#ledger.expire(t, budget);
    return { visited: this.#space.visited, dropped, keys: this.#space.keys, expired };
  }

  // ── health ────────────────────────────────────────────────────────────────────────────────

  /** Hazards worth a look (see {@link IssueCode}); an empty array when there are none. */
  validate(): ValidationIssue[] {
    return findIssues(this.#parts());
  }

  /** Counts of limits, keys per algorithm, links, subjects, swept and refused keys. */
  stats(): QuotaStats {
    return countStats(this.#parts());
  }

  /** A small deterministic summary for health checks and logs; `JSON.stringify(engine)` uses it. */
  toJSON(): EngineSummary {
    return summarize(this.stats(), this.#checks.clock, this.limits());
  }

  #parts(): EngineParts {
    return {
      limits: this.#limits,
      space: this.#space,
      links: this.#links,
      fair: this.#fair,
      reservations: this.#ledger.open,
      overrides: this.#book.overrides,
    };
  }

  // ── snapshots ─────────────────────────────────────────────────────────────────────────────

  /**
   * Everything the engine holds, as versioned, JSON-safe data, in a deterministic order: limits
   * and links and subjects in the order added, key state table by table in slot order.
   */
  snapshot(): QuotaSnapshot {
    return writeSnapshot(this.#checks.clock, this.#limits, this.#links, this.#fair);
  }

  /**
   * Replaces everything the engine holds with `snapshot`, typically read back from storage and
   * so untrusted. Every field is checked first; the engine changes only if all of it is valid.
   * Reservations are not part of a snapshot: a restore forgets every one (its charges stand, as
   * if it had expired), and a settle of one then answers `"unknown_reservation"`.
   *
   * @throws SnapshotError naming the first bad field (`error.field`), the engine unchanged
   */
  restore(snapshot: unknown): void {
    const restored = readSnapshot(snapshot, this.policy.maxKeys, this.policy.maxOverrides);
    this.#checks.clock = restored.clock;
    this.#book.restore(restored.limits, restored.overrides);
    this.#checks.forget();
    this.#links = restored.links;
    this.#fair = restored.fair;
    this.#space.restore(restored.keys);
    this.#ledger.clear();
  }
}
