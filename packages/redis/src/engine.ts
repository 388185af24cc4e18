import type { Breaker } from "@tideward/breaker";
import type {
  ChargeKind,
  EvaluationInput,
  LimitSpec,
  LinkCode,
  QuotaCharge,
  QuotaLink,
  ActualCost,
  OverrideFields,
  ReservationStore,
  ReserveOptions,
  RuntimeLimitStore,
  Result,
  SettleResult,
  QuotaKey,
} from "@tideward/quota-engine";
import {
  BUCKET,
  GCRA,
  WINDOW,
  foldChain,
  keyError,
  limitError,
  readInputs,
  readKind,
} from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import { check } from "@tideward/time/internal";
import { runBatch, unknownBatch } from "./batch";
import { bytes } from "./bytes";
import { SetReports, readSet } from "./charge-set";
import type { ScriptClient } from "./client";
import { isKey, requestIdOf } from "./call-options";
import type { CallOptions, LimitOptions, ReplaceOptions } from "./call-options";
import { RedisVerdict } from "./decision";
import type { RedisAtomicReport, RedisBatchReport, RedisDecision } from "./decision";
import { DeniedCache } from "./denied";
import { Fallback, outageSet } from "./fallback";
import { Lease, leaseCall } from "./lease";
import type { LeaseOptions, LeaseTarget } from "./lease";
import { Names } from "./names";
import type { Path } from "./policy";
import { resolveQuotaPolicy } from "./quota-policy";
import type { RedisQuotaPolicy } from "./quota-policy";
import { LimitBook } from "./limit-book";
import { Reservations } from "./reservations";
import { Singles } from "./single";
import type { RedisReserveReport } from "./reservations";
import { fromLocal } from "./rules";
import type { Rule } from "./rules";
import { ANSWERED, FAILED, Runner, ScriptError, UNKNOWN } from "./runner";
import type { Outcome } from "./runner";
import { quota } from "./scripts";
import { Section, live } from "./versions";
import { setWire } from "./wire";
import type { SetCall } from "./wire";

/**
 * The quota engine on Redis: the in-process {@link @tideward/quota-engine#QuotaEngine | QuotaEngine}'s checks — token bucket, fixed
 * window, GCRA, atomic charge sets, hierarchy, batches — with the same names and answers,
 * returning promises. Every decision is one round trip through a Lua script.
 *
 * Limits and links are configuration, held in process (every instance adds the same ones);
 * key state lives in Redis. Each decision says which part answered it (`path`): the store, the
 * denied-key cache, or the outage mode when Redis cannot answer in time.
 *
 * @example
 * import Redis from "ioredis";
 * import { QuotaKey, perSecond } from "@tideward/quota-engine";
 * const server = await startRedis(); // a redis-server on a free loopback port, for the example
 * const redis = new Redis(server.port, "127.0.0.1", { enableOfflineQueue: false, autoResendUnfulfilledCommands: false, lazyConnect: true });
 * await redis.connect();
 * // A call waits at most `timeout` ms (250 by default), then answers from the outage mode with
 * // path "indeterminate": 5 s here, so the example reads "store" on a busy machine too.
 * const engine = new RedisQuotaEngine(ioredisClient(redis), { prefix: "api:", timeout: 5_000 });
 * await engine.addLimit(perSecond("requests", 10));
 * const d = await engine.checkTokenBucket(new QuotaKey("acme", "alice", "api"), "requests", Date.now());
 * d.allowed; // true
 * d.path; // "store"
 * redis.disconnect();
 * await server.stop();
 */
export class RedisQuotaEngine implements ReservationStore, RuntimeLimitStore {
  /** The policy in force. */
  readonly policy: RedisQuotaPolicy;
  readonly #runner: Runner;
  readonly #book: LimitBook;
  // The book's rules, by limit name: read on every call.
  readonly #rules: ReadonlyMap<string, Rule>;
  readonly #singles: Singles;
  readonly #fallback: Fallback;
  readonly #denied: DeniedCache;
  readonly #names: Names;
  readonly #ttl: string;
  readonly #serverClock: boolean;
  readonly #margin: string;
  readonly #reports: SetReports;
  readonly #reservations: Reservations;

  /**
   * An engine with no limits over `client`.
   *
   * @param client - the connection (see {@link ioredisClient} and {@link nodeRedisClient})
   * @param policy - read once; an unknown field is a `TypeError` naming the closest known one
   * @throws TypeError or RangeError naming a policy field that is invalid, or when `client` is
   *   not a {@link ScriptClient}
   */
  constructor(client: ScriptClient, policy?: Partial<RedisQuotaPolicy>) {
    if (client === null || typeof client !== "object" || typeof client.evalsha !== "function") {
      throw new TypeError(
        `RedisQuotaEngine client must be a ScriptClient (ioredisClient(redis) or nodeRedisClient(client)), got ${check.describe(client)}`,
      );
    }
    this.policy = resolveQuotaPolicy(policy, "RedisQuotaEngine");
    const p = this.policy;
    this.#runner = new Runner(client, { timeout: p.timeout, breaker: p.breaker, clock: p.monotonic, roll: p.random });
    this.#fallback = new Fallback(p.outage, p.instances, this.#runner.breaker.policy.probe);
    this.#denied = new DeniedCache(p.deniedCache);
    this.#names = new Names(p.prefix, p.hashTag);
    this.#ttl = String(Math.ceil(p.requestTtl));
    this.#serverClock = p.clock === "redis";
    this.#margin = String(p.expiryMargin);
    this.#reports = new SetReports(this.#serverClock);
    this.#book = new LimitBook({
      runner: this.#runner,
      names: this.#names,
      fallback: this.#fallback,
      serverClock: this.#serverClock,
      margin: p.expiryMargin,
      marginArg: this.#margin,
    });
    this.#rules = this.#book.rules;
    this.#singles = new Singles({
      rules: this.#rules,
      names: this.#names,
      runner: this.#runner,
      denied: this.#denied,
      serverClock: this.#serverClock,
      marginArg: this.#margin,
      send: (call, ridKey, rid) => this.#sendSet(call, ridKey, rid),
      outage: (outcome, kind, key, rule, now, cost) => this.#outageSingle(outcome, kind, key, rule, now, cost),
    });
    this.#reservations = new Reservations({
      policy: this.policy,
      runner: this.#runner,
      names: this.#names,
      rules: this.#rules,
      reports: this.#reports,
      serverClock: this.#serverClock,
      margin: this.#margin,
      isKey,
      outage: (outcome, call) => this.#outageAtomic(outcome, call),
      send: (call) => this.#sendSet(call, undefined, undefined),
    });
  }

  /** The breaker Redis calls sit behind (to read its ratio, say). */
  get breaker(): Breaker {
    return this.#runner.breaker;
  }

  // ── configuration ─────────────────────────────────────────────────────────────────────────

  /**
   * Adds a limit, or says why not (`"duplicate_limit"`, `"invalid_limit"`), as the in-process
   * engine does. Instances at one `version` share its keys' state; one added at the version a
   * replace gave reads no older names, so a key it reaches first starts fresh.
   *
   * @param options - read once; an unknown option is a `TypeError` naming the closest known one
   * @throws TypeError or RangeError naming an unknown option, `shadow` not a boolean, or `version`
   *   not from 0 to 2^53 - 1 (after a `removeLimit`, not above the version the limit had)
   */
  addLimit(spec: LimitSpec, options?: LimitOptions): Promise<Result<"duplicate_limit" | "invalid_limit">> {
    return Promise.resolve(this.#book.add(spec, options));
  }

  /**
   * Replaces the limit of `spec`'s name at `now` (ms), as the in-process engine does: every key
   * keeps its state, re-based (a bucket its level, clamped; a window its count; a GCRA flow its
   * TAT), and overrides keep their fields. Refused, nothing changed, when no limit has that name
   * (`"unknown_limit"`) or the spec, or an override under it, is invalid (`"invalid_limit"`).
   *
   * Nothing is written: the limit takes a new version (`options.version`, else one more), whose
   * keys' state has names of its own; a key's first call reads the versions before, re-based at
   * `now` by the script, once however many instances replace it. Make the change on every
   * instance (with `clock: "redis"` too, `now` is the re-base's instant: pass `Date.now()`).
   *
   * @param now - the caller's clock, in milliseconds
   * @throws RangeError when `now` is not a clock reading; TypeError or RangeError naming `version`
   *   when it is not above the version now, up to 2^53 - 1
   */
  replaceLimit(
    spec: LimitSpec,
    now: number,
    options?: ReplaceOptions,
  ): Promise<Result<"unknown_limit" | "invalid_limit">> {
    return Promise.resolve(this.#book.replace(spec, now, options));
  }

  /**
   * Removes the limit named `name`: a check of it answers `"unknown_limit"` from then on, its links
   * and overrides are gone, and a reservation that charged it settles its other charges. Its keys'
   * state is left to expire; added again (at a version above), the limit starts every key fresh.
   * Refused (`"unknown_limit"`) when there is none.
   *
   * @throws TypeError when `name` is not a string
   */
  removeLimit(name: string): Promise<Result<"unknown_limit">> {
    return Promise.resolve(this.#book.remove(name));
  }

  /**
   * Gives `key` a limit of its own under the name `limit`, the limit's fields with `fields` laid
   * over them, as the in-process engine's `setOverride` does; setting it again replaces it.
   * Refused, with a reason and nothing changed, when the limit is unknown (`"unknown_limit"`), the
   * fields make no valid limit (`"invalid_override"`), or the registry holds `maxOverrides`
   * (10 000) already (`"override_limit"`).
   *
   * The key's state moves at `now` (ms) to names of the override's, re-based, in one script call
   * that deletes the names it moved from: every instance sets the same override, and the first
   * moves the state while the others find none left to move. Overrides are configuration, held in
   * process like limits. When Redis does not answer the move, the override holds and the key
   * starts it fresh.
   *
   * @param now - the caller's clock, in milliseconds
   * @returns a promise rejected with a TypeError or RangeError when `key`, `limit` or `now` is
   *   malformed, or the ScriptError of a key holding what tideward did not write
   */
  setOverride(
    key: QuotaKey,
    limit: string,
    fields: OverrideFields,
    now: number,
  ): Promise<Result<"unknown_limit" | "invalid_override" | "override_limit">> {
    return this.#book.setOverride(key, limit, fields, now);
  }

  /**
   * Takes `key`'s override of `limit` away: the key is held to the limit again, its state moved
   * back at `now` (ms) and re-based, as {@link RedisQuotaEngine.setOverride} moves it. Refused
   * (`"unknown_limit"`, `"unknown_override"`) when there is no such limit or override.
   *
   * @returns a promise rejected with a TypeError or RangeError when `key`, `limit` or `now` is malformed
   */
  removeOverride(key: QuotaKey, limit: string, now: number): Promise<Result<"unknown_limit" | "unknown_override">> {
    return this.#book.removeOverride(key, limit, now);
  }

  /** The limit `key` is held to under the name `limit` by an override, or undefined when it has none. */
  override(key: QuotaKey, limit: string): LimitSpec | undefined {
    return this.#book.override(key, limit);
  }

  /** The limit named `name`, or undefined. */
  limit(name: string): LimitSpec | undefined {
    return this.#book.limit(name);
  }

  /** Every limit, in the order added. */
  limits(): LimitSpec[] {
    return this.#book.limits();
  }

  /** Links `child` to `parent` for one limit (see the in-process engine's `addLink`). */
  addLink(link: QuotaLink): Promise<Result<LinkCode>> {
    return Promise.resolve(this.#book.addLink(link));
  }

  /** The charges a hierarchical check of `key` makes (see the in-process engine's `chain`). */
  chain(key: QuotaKey, limit: string, cost = 1, kind: ChargeKind = "bucket"): QuotaCharge[] {
    return this.#book.chain(key, limit, cost, kind);
  }

  /**
   * The Redis key holding `key`'s state for `limit` under `kind`.
   *
   * @throws TypeError when `key` is not a QuotaKey, or {@link RedisPolicy.hashTag} throws or
   *   answers other than a non-empty string
   */
  redisKey(key: QuotaKey, limit: string, kind: ChargeKind = "bucket"): string {
    return this.#book.redisKey(key, limit, kind);
  }

  // ── single checks ─────────────────────────────────────────────────────────────────────────

  /**
   * A token-bucket check of `cost` units at `now` (ms); see the in-process engine.
   *
   * @throws TypeError or RangeError when `key`, `now` or `cost` is malformed, or when
   *   {@link RedisPolicy.hashTag} throws or answers other than a non-empty string (nothing is sent)
   */
  checkTokenBucket(key: QuotaKey, limit: string, now: number, cost = 1, options?: CallOptions): Promise<RedisDecision> {
    return this.#singles.check(BUCKET, key, limit, now, cost, options);
  }

  /** A fixed-window check of `cost` units at `now` (ms); see {@link RedisQuotaEngine.checkTokenBucket}. */
  checkWindow(key: QuotaKey, limit: string, now: number, cost = 1, options?: CallOptions): Promise<RedisDecision> {
    return this.#singles.check(WINDOW, key, limit, now, cost, options);
  }

  /** A GCRA check of `cost` units at `now` (ms); see {@link RedisQuotaEngine.checkTokenBucket}. */
  checkGcra(key: QuotaKey, limit: string, now: number, cost = 1, options?: CallOptions): Promise<RedisDecision> {
    return this.#singles.check(GCRA, key, limit, now, cost, options);
  }

  #outagePath(outcome: Outcome): Path {
    if (outcome.status === FAILED && outcome.error instanceof ScriptError) throw outcome.error;
    return outcome.status === UNKNOWN ? "indeterminate" : this.#fallback.path;
  }

  #outageSingle(outcome: Outcome, kind: Kind, key: QuotaKey, rule: Rule, now: number, cost: number): RedisDecision {
    const path = this.#outagePath(outcome);
    return fromLocal(this.#fallback.check(kind, key, rule.spec, now, cost), rule.shadow, path);
  }

  // ── charge sets ───────────────────────────────────────────────────────────────────────────

  /**
   * Charges every charge at `now` (ms), or none, in one script call: the in-process engine's
   * `checkAtomic`, on Redis. Every key of the set must map to one cluster slot.
   *
   * @returns a promise rejected with a TypeError or RangeError naming the charge and field when a
   *   charge is malformed, or a {@link CrossSlotError} naming the keys when they cannot share a
   *   slot (nothing is sent)
   */
  checkAtomic(charges: readonly QuotaCharge[], now: number, options?: CallOptions): Promise<RedisAtomicReport> {
    return this.#atomic(charges, now, true, options);
  }

  /** What {@link RedisQuotaEngine.checkAtomic} would answer at `now` (ms), charging nothing. */
  peekAtomic(charges: readonly QuotaCharge[], now: number): Promise<RedisAtomicReport> {
    return this.#atomic(charges, now, false, undefined);
  }

  #atomic(
    charges: readonly QuotaCharge[],
    now: number,
    commit: boolean,
    options: CallOptions | undefined,
  ): Promise<RedisAtomicReport> {
    let call: SetCall;
    let ridKey: string | undefined;
    let rid: string | undefined;
    try {
      rid = requestIdOf(options, "RedisQuotaEngine.checkAtomic");
      call = readSet(charges, now, commit, this.#rules, this.#names, isKey);
      if (rid !== undefined && call.n > 0) ridKey = this.#names.request(call.charges[0] as QuotaKey, rid);
    } catch (error) {
      // Bad input rejects the promise (as an async method would), before anything is sent.
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    if (call.names.length === 0) return Promise.resolve(this.#reports.report(call, undefined, false, rid));
    return this.#sendSet(call, ridKey, rid);
  }

  #sendSet(call: SetCall, ridKey: string | undefined, rid: string | undefined): Promise<RedisAtomicReport> {
    let wire;
    try {
      wire = setWire(call, this.#serverClock, this.#margin, ridKey, this.#ttl);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const short = wire.short;
    return this.#runner.run(quota, wire.keys, wire.args).then((outcome) => {
      if (outcome.status !== ANSWERED) return this.#outageAtomic(outcome, call);
      return this.#reports.report(call, bytes(outcome.reply, quota.name, 1), short, rid);
    });
  }

  #outageAtomic(outcome: Outcome, call: SetCall): RedisAtomicReport {
    return outageSet(this.#fallback, this.#outagePath(outcome), call);
  }

  // ── reservations ──────────────────────────────────────────────────────────────────────────

  /**
   * Reserves a charge set: charges it at once, or none of it, exactly as
   * {@link RedisQuotaEngine.checkAtomic} would, and writes its record beside it in the same
   * script call (the record's key on the set's slot), so that the actual cost can be settled
   * when the work is done ({@link RedisQuotaEngine.settle}) or the whole given back
   * ({@link RedisQuotaEngine.cancel}). The record lives in Redis for `ttl` ms (and the expiry
   * margin): a process that dies after reserving leaks nothing, its reservation expiring settled
   * as reserved. The same id and charges again, while open, answer `"replayed"` and charge
   * nothing: retry an `"indeterminate"` reserve with its id. Settle from the process that
   * reserved: it keeps each reservation's keys until it expires.
   *
   * While Redis cannot answer, the outage mode decides (`path` says which); a reservation it
   * admits is kept, and its settle reaches Redis, which settles it if the reserve did run there.
   *
   * @param now - the caller's clock, in milliseconds
   * @param options - `id` (1 to 256 characters, not starting with `#`; one is made when left out)
   *   and `ttl` (ms, 1 to 2^44; the policy's `reservationTtl` when left out)
   * @returns a promise rejected with a TypeError or RangeError naming the charge and field, or
   *   the option, when malformed, or a {@link CrossSlotError} when the keys cannot share a slot
   *   (nothing is sent)
   */
  reserve(charges: readonly QuotaCharge[], now: number, options?: ReserveOptions): Promise<RedisReserveReport> {
    return this.#reservations.reserve(charges, now, options);
  }

  /**
   * Settles reservation `id` at its actual cost per limit name, in one script call: each charge's
   * difference refunded or topped up by the in-process engine's rules (see its `settle`), the
   * record closed. Idempotent: a second settle or a cancel after it answers `"already_settled"`
   * and changes nothing, so a settle that got no answer (the promise rejects, saying so) is
   * retried safely.
   *
   * @param actual - units per limit name, each a whole number of at least 0: `{ tokens: 300 }`
   * @param now - the caller's clock, in milliseconds
   * @returns a promise rejected with a TypeError or RangeError naming `id`, `now` or
   *   `actual["name"]` when malformed (nothing sent), or an Error when Redis did not answer
   */
  settle(id: string, actual: ActualCost, now: number): Promise<SettleResult> {
    return this.#reservations.close(id, actual, now, true);
  }

  /** Cancels reservation `id`: every charge refunded whole, as a settle at 0; see {@link RedisQuotaEngine.settle}. */
  cancel(id: string, now: number): Promise<SettleResult> {
    return this.#reservations.close(id, undefined, now, false);
  }

  // ── hierarchy ─────────────────────────────────────────────────────────────────────────────

  /**
   * Charges `key` and its linked ancestors for `limit` as one atomic set and folds the answer
   * into one decision, as the in-process engine's `checkHierarchy` does.
   */
  async checkHierarchy(
    key: QuotaKey,
    limit: string,
    now: number,
    cost = 1,
    kind: ChargeKind = "bucket",
    options?: CallOptions,
  ): Promise<RedisDecision> {
    const charges = this.chain(key, limit, cost, kind);
    const report = await this.#atomic(charges, now, true, options);
    // A replayed answer is the first call's, its cost included (the key's own charge, the first).
    const paid = report.replayed ? report.decisions[0].cost : cost;
    return foldChain(
      charges,
      report,
      limit,
      cost,
      (allowed, reason, _cost, remaining, retryAfter, resetAfter, trace) =>
        new RedisVerdict({
          allowed,
          reason,
          cost: paid,
          remaining,
          retryAfter,
          resetAfter,
          trace,
          path: report.path,
          shadow: undefined,
          replayed: report.replayed,
        }),
    );
  }

  // ── leases ─────────────────────────────────────────────────────────────────────────────────

  /**
   * A {@link Lease} on `key`'s token bucket of `limit`: a slice of the global quota this process
   * spends at in-process speed. Leases and `checkTokenBucket` share the same bucket.
   *
   * @throws RangeError when `limit` is unknown, or `options` is invalid
   */
  lease(key: QuotaKey, limit: string, options: LeaseOptions): Lease {
    if (!isKey(key)) throw keyError(key, "key");
    const first = this.#rules.get(limit);
    if (first === undefined) throw new RangeError(`lease: no limit named ${JSON.stringify(limit)}`);
    const names = this.#names;
    const tag = names.tag(key);
    // The limit as it is at each call (replaced, or overridden for this key, since); a limit
    // removed since leaves the lease on the last one it had.
    let last = first;
    const target = (now: number): LeaseTarget => {
      const base = this.#rules.get(limit) ?? last;
      last = base;
      const rule = base.overrides?.get(key.id) ?? base;
      const keys = [names.state(tag, BUCKET, limit, key, rule.numbers.oneNumber, rule.suffix)];
      if (rule.versions.length === 0 || !live(rule, now)) return { keys, rule, versions: [] };
      const section = new Section();
      section.add(1, rule, BUCKET, now, 2, names, tag, key);
      return { keys: [...keys, ...section.keys], rule, versions: section.args };
    };
    return new Lease(leaseCall(this.#runner, target, this.#serverClock, this.#margin), options);
  }

  // ── batches ───────────────────────────────────────────────────────────────────────────────

  /**
   * Checks inputs one after another in input order (not atomically) against one limit, many per
   * script call: the batch path. On a cluster (`RedisPolicy.cluster`) the inputs are split by
   * slot, each key's inputs keeping their order.
   *
   * @returns a promise rejected with a TypeError or RangeError naming `inputs[i]` and the field
   *   when an input is malformed (nothing is sent)
   */
  async checkMany(
    limit: string,
    inputs: readonly EvaluationInput[],
    kind: ChargeKind = "bucket",
  ): Promise<RedisBatchReport> {
    if (typeof limit !== "string") throw limitError(limit, "limit");
    const k = readKind(kind, "kind");
    const inputsRead = readInputs(inputs, isKey);
    const rule = this.#rules.get(limit);
    if (rule === undefined) return unknownBatch(k, limit, inputsRead.costs);
    return runBatch(k, rule, limit, inputsRead, {
      runner: this.#runner,
      names: this.#names,
      cluster: this.policy.cluster,
      serverClock: this.#serverClock,
      margin: this.#margin,
      outage: (outcome, key, now, cost) => this.#outageSingle(outcome, k, key, rule, now, cost),
    });
  }
}
