import type { Breaker } from "@tideward/breaker";
import { badInstant } from "@tideward/limiters/math";
import { QuotaEngine } from "@tideward/quota-engine";
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
  EXHAUSTED,
  GCRA,
  OK,
  WINDOW,
  costError,
  decide,
  foldChain,
  freshAmount,
  freshInstant,
  isCost,
  isInstant,
  keyError,
  limitError,
  readInputs,
  readKind,
  step,
} from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import { check } from "@tideward/time/internal";
import { runBatch, unknownBatch } from "./batch";
import { bytes } from "./bytes";
import { SetReports, readSet } from "./charge-set";
import type { ScriptClient } from "./client";
import { SINGLE, isKey, requestIdOf } from "./call-options";
import type { CallOptions, LimitOptions } from "./call-options";
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
import { Reservations } from "./reservations";
import type { RedisReserveReport } from "./reservations";
import { disagree, fromLocal, overrideHash, ruleOf, unknownVerdict, verdict } from "./rules";
import type { Rule } from "./rules";
import { ANSWERED, FAILED, Runner, ScriptError, UNKNOWN } from "./runner";
import type { Outcome } from "./runner";
import { move, quota } from "./scripts";
import { Section, live, succeed } from "./versions";
import { COMMITTED, SHORT_STATES, STATE, moveWire, setWire, singleArgs } from "./wire";
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
 * const engine = new RedisQuotaEngine(ioredisClient(redis), { prefix: "api:" });
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
  readonly #rules = new Map<string, Rule>();
  // The version each removed limit had, by name: one added again under that name starts after it.
  readonly #retired = new Map<string, number>();
  // Validates limits and links and builds hierarchy chains exactly as the in-process engine does.
  readonly #registry = new QuotaEngine();
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
   * engine does.
   *
   * @param options - read once; an unknown option is a `TypeError` naming the closest known one
   * @throws TypeError when `options` is not an object, names an unknown option, or `shadow` is
   *   not a boolean
   */
  addLimit(spec: LimitSpec, options?: LimitOptions): Promise<Result<"duplicate_limit" | "invalid_limit">> {
    const o = check.options(options, ["shadow"], "RedisQuotaEngine.addLimit");
    const shadow = o.shadow ?? false;
    if (typeof shadow !== "boolean")
      throw new TypeError(
        `RedisQuotaEngine.addLimit shadow must be a boolean, got ${typeof shadow} ${check.describe(shadow)}`,
      );
    const result = this.#registry.addLimit(spec);
    if (result.ok) {
      // The registry's copy: read once and checked there.
      const s = this.#registry.limit(spec.name) as LimitSpec;
      // A name removed before starts past the versions it had, so its keys start fresh.
      const retired = this.#retired.get(s.name);
      this.#rules.set(s.name, ruleOf(s, shadow, retired === undefined ? 0 : retired + 1));
      this.#fallback.add(s);
    }
    return Promise.resolve(result);
  }

  /**
   * Replaces the limit of `spec`'s name at `now` (ms), as the in-process engine's `replaceLimit`
   * does: every key keeps its state, re-based (a bucket its level, clamped to the new capacity; a
   * window its count, closing no later than a new window from `now`; a GCRA flow its TAT), and
   * overrides keep the fields they set. Refused, with a reason and nothing changed, when no limit
   * has that name (`"unknown_limit"`) or the spec, or an override under it, is invalid
   * (`"invalid_limit"`).
   *
   * Nothing is written: the limit takes a new version, whose keys' state lives under names of their
   * own. A key's first call after the replace finds no state under them and reads the version
   * before, re-based at `now` by the script. So every instance makes the same replace (with the
   * same `now`, or near it: the first to reach a key re-bases it, at its own `now`), and each key's
   * state is re-based exactly once however many do. Until an instance has replaced the limit it
   * charges the old version's state, which the new version no longer reads once it holds a state
   * of its own. The old names are read until any state left there must have expired (the old
   * limit's longest life from `now`, plus twice the expiry margin); a limit never replaced reads
   * none. With `clock: "redis"`, `now` is still the instant of the re-base: pass `Date.now()`.
   *
   * @param now - the caller's clock, in milliseconds
   * @throws RangeError when `now` is not a clock reading
   */
  replaceLimit(spec: LimitSpec, now: number): Promise<Result<"unknown_limit" | "invalid_limit">> {
    const result = this.#registry.replaceLimit(spec, now);
    if (!result.ok) return Promise.resolve(result);
    // The limit the registry replaced: the one whose spec is no longer the registry's (the
    // caller's spec is read once, there).
    let old: Rule | undefined;
    for (const rule of this.#rules.values()) if (this.#registry.limit(rule.spec.name) !== rule.spec) old = rule;
    const o = old as Rule;
    const s = this.#registry.limit(o.spec.name) as LimitSpec;
    const margin = this.policy.expiryMargin;
    const next = ruleOf(s, o.shadow, o.version + 1);
    succeed(o, next, now, margin);
    if (o.overrides !== undefined) {
      next.overrides = new Map();
      for (const [id, was] of o.overrides) {
        const key = was.own as QuotaKey;
        const os = this.#registry.override(key, s.name) as LimitSpec;
        const to = ruleOf(os, o.shadow, next.version, key, overrideHash(os));
        succeed(was, to, now, margin);
        next.overrides.set(id, to);
      }
    }
    this.#rules.set(s.name, next);
    this.#fallback.replace(s, now);
    return Promise.resolve(result);
  }

  /**
   * Removes the limit named `name`: a check of it answers `"unknown_limit"` from then on, its links
   * and overrides are gone, and a reservation that charged it settles its other charges. Its keys'
   * state is left to expire; added again, the limit starts every key fresh (a new version). Refused
   * (`"unknown_limit"`) when there is none.
   *
   * @throws TypeError when `name` is not a string
   */
  removeLimit(name: string): Promise<Result<"unknown_limit">> {
    const result = this.#registry.removeLimit(name);
    if (result.ok) {
      const rule = this.#rules.get(name) as Rule;
      this.#rules.delete(name);
      this.#retired.set(name, rule.version);
      this.#fallback.remove(name);
    }
    return Promise.resolve(result);
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
  async setOverride(
    key: QuotaKey,
    limit: string,
    fields: OverrideFields,
    now: number,
  ): Promise<Result<"unknown_limit" | "invalid_override" | "override_limit">> {
    if (!isKey(key)) throw keyError(key, "key");
    const result = this.#registry.setOverride(key, limit, fields, now);
    if (!result.ok) return result;
    const base = this.#rules.get(limit) as Rule;
    const from = base.overrides?.get(key.id) ?? base;
    const os = this.#registry.override(key, limit) as LimitSpec;
    const to = ruleOf(os, base.shadow, base.version, key, overrideHash(os));
    if (from !== base && from.suffix === to.suffix) {
      // The same numbers again: the same names, and their earlier versions still to read.
      to.versions = from.versions;
      to.readUntil = from.readUntil;
    }
    (base.overrides ??= new Map()).set(key.id, to);
    this.#fallback.override(key, os, limit, now);
    await this.#move(key, from, to, now);
    return result;
  }

  /**
   * Takes `key`'s override of `limit` away: the key is held to the limit again, its state moved
   * back at `now` (ms) and re-based, as {@link RedisQuotaEngine.setOverride} moves it. Refused
   * (`"unknown_limit"`, `"unknown_override"`) when there is no such limit or override.
   *
   * @returns a promise rejected with a TypeError or RangeError when `key`, `limit` or `now` is malformed
   */
  async removeOverride(
    key: QuotaKey,
    limit: string,
    now: number,
  ): Promise<Result<"unknown_limit" | "unknown_override">> {
    if (!isKey(key)) throw keyError(key, "key");
    const result = this.#registry.removeOverride(key, limit, now);
    if (!result.ok) return result;
    const base = this.#rules.get(limit) as Rule;
    const from = base.overrides?.get(key.id) as Rule;
    base.overrides?.delete(key.id);
    if (base.overrides?.size === 0) base.overrides = undefined;
    this.#fallback.override(key, undefined, limit, now);
    await this.#move(key, from, base, now);
    return result;
  }

  /** The limit `key` is held to under the name `limit` by an override, or undefined when it has none. */
  override(key: QuotaKey, limit: string): LimitSpec | undefined {
    return this.#registry.override(key, limit);
  }

  // Moves `key`'s state of every kind from the names of `from` to those of `to` at `now` (move.lua).
  async #move(key: QuotaKey, from: Rule, to: Rule, now: number): Promise<void> {
    const names = this.#names;
    const tag = names.tag(key);
    const limit = to.spec.name;
    const into: string[] = [];
    const out: string[] = [];
    for (let k = 0; k < 3; k++) {
      into.push(names.state(tag, k as Kind, limit, key, to.numbers.oneNumber, to.suffix));
      out.push(names.state(tag, k as Kind, limit, key, from.numbers.oneNumber, from.suffix));
    }
    if (into.every((n, k) => n === out[k])) return;
    const versions = new Section();
    if (live(from, now)) for (let k = 0; k < 3; k++) versions.add(k + 1, from, k as Kind, now, 7, names, tag, key);
    const wire = moveWire({ into, from: out, rules: [from, to], now, versions }, this.#serverClock, this.#margin);
    const outcome = await this.#runner.run(move, wire.keys, wire.args);
    if (outcome.status === FAILED && outcome.error instanceof ScriptError) throw outcome.error;
  }

  /** The limit named `name`, or undefined. */
  limit(name: string): LimitSpec | undefined {
    return this.#rules.get(name)?.spec;
  }

  /** Every limit, in the order added. */
  limits(): LimitSpec[] {
    return [...this.#rules.values()].map((r) => r.spec);
  }

  /** Links `child` to `parent` for one limit (see the in-process engine's `addLink`). */
  addLink(link: QuotaLink): Promise<Result<LinkCode>> {
    return Promise.resolve(this.#registry.addLink(link));
  }

  /** The charges a hierarchical check of `key` makes (see the in-process engine's `chain`). */
  chain(key: QuotaKey, limit: string, cost = 1, kind: ChargeKind = "bucket"): QuotaCharge[] {
    return this.#registry.chain(key, limit, cost, kind);
  }

  /**
   * The Redis key holding `key`'s state for `limit` under `kind`.
   *
   * @throws TypeError when `key` is not a QuotaKey, or {@link RedisPolicy.hashTag} throws or
   *   answers other than a non-empty string
   */
  redisKey(key: QuotaKey, limit: string, kind: ChargeKind = "bucket"): string {
    if (!isKey(key)) throw keyError(key, "key");
    const k = readKind(kind, "kind");
    const base = this.#rules.get(limit);
    const rule = base?.overrides?.get(key.id) ?? base;
    return this.#names.state(this.#names.tag(key), k, limit, key, rule?.numbers.oneNumber, rule?.suffix);
  }

  // ── single checks ─────────────────────────────────────────────────────────────────────────

  /**
   * A token-bucket check of `cost` units at `now` (ms); see the in-process engine.
   *
   * @throws TypeError or RangeError when `key`, `now` or `cost` is malformed, or when
   *   {@link RedisPolicy.hashTag} throws or answers other than a non-empty string (nothing is sent)
   */
  checkTokenBucket(key: QuotaKey, limit: string, now: number, cost = 1, options?: CallOptions): Promise<RedisDecision> {
    return this.#single(BUCKET, key, limit, now, cost, options);
  }

  /** A fixed-window check of `cost` units at `now` (ms); see {@link RedisQuotaEngine.checkTokenBucket}. */
  checkWindow(key: QuotaKey, limit: string, now: number, cost = 1, options?: CallOptions): Promise<RedisDecision> {
    return this.#single(WINDOW, key, limit, now, cost, options);
  }

  /** A GCRA check of `cost` units at `now` (ms); see {@link RedisQuotaEngine.checkTokenBucket}. */
  checkGcra(key: QuotaKey, limit: string, now: number, cost = 1, options?: CallOptions): Promise<RedisDecision> {
    return this.#single(GCRA, key, limit, now, cost, options);
  }

  #single(
    kind: Kind,
    key: QuotaKey,
    limit: string,
    now: number,
    cost: number,
    options: CallOptions | undefined,
  ): Promise<RedisDecision> {
    if (!isKey(key)) throw keyError(key, "key");
    if (!isInstant(now)) throw badInstant(now, "now");
    if (!isCost(cost)) throw costError(cost, "cost");
    const rid = requestIdOf(options, SINGLE[kind]);
    let rule = this.#rules.get(limit);
    if (rule === undefined) {
      if (typeof limit !== "string") throw limitError(limit, "limit");
      return Promise.resolve(unknownVerdict(kind, limit, cost));
    }
    if (rule.overrides !== undefined) rule = rule.overrides.get(key.id) ?? rule;
    const tag = this.#names.tag(key);
    const stateKey = this.#names.state(tag, kind, limit, key, rule.numbers.oneNumber, rule.suffix);
    const clock = this.#serverClock ? this.#runner.now() : now;
    const denied = this.#denied;
    if (denied.size > 0 && !rule.shadow && cost <= (kind === GCRA ? rule.spec.burst : rule.spec.capacity)) {
      const hit = denied.get(stateKey, clock, cost);
      if (hit !== undefined) {
        const reset = hit.reset - (clock - hit.at);
        return Promise.resolve(
          new RedisVerdict({
            allowed: false,
            reason: "exhausted",
            cost,
            remaining: hit.remaining,
            retryAfter: hit.until - clock,
            resetAfter: reset > 0 ? reset : 0,
            trace: rule.traces[kind * 5 + EXHAUSTED],
            path: "cache",
            shadow: undefined,
            replayed: false,
          }),
        );
      }
    }
    let versions: Section | undefined;
    if (rule.versions.length !== 0 && live(rule, now)) {
      versions = new Section();
      versions.add(1, rule, kind, now, 2, this.#names, tag, key);
    }
    if (rid !== undefined || this.#serverClock || versions !== undefined) {
      // A set of one: the general form, which reads the server's clock, keeps a request id's
      // answer and reads a replaced limit's earlier versions.
      const call: SetCall = {
        n: 1,
        charges: [key, limit, cost, kind, rule],
        names: [stateKey],
        oneTag: true,
        unknown: -1,
        now,
        commit: true,
        versions,
      };
      const ridKey = rid === undefined ? undefined : this.#names.request(key, rid);
      return this.#sendSet(call, ridKey, rid).then((report) => {
        const d = report.decisions[0];
        if (d.reason === "exhausted" && denied.size > 0 && !report.replayed && d.path === "store")
          denied.add(stateKey, clock, cost, d.remaining, d.retryAfter, d.resetAfter);
        return d;
      });
    }
    // The short form: committed on the caller's clock, no request id (see wire.ts).
    return this.#runner.run(quota, [stateKey], singleArgs(now, this.#margin, cost, rule, kind)).then((outcome) => {
      if (outcome.status !== ANSWERED) return this.#outageSingle(outcome, kind, key, rule, now, cost);
      const r = bytes(outcome.reply, quota.name, SHORT_STATES + STATE);
      return this.#decided(r[0] === COMMITTED, r, kind, rule, stateKey, clock, now, cost);
    });
  }

  // A single check's decision from the short form's reply (whether the set of one committed: it
  // fit, or its limit is in shadow mode; and the state it read): the figures from the in-process
  // formulas, at the caller's clock `now`.
  #decided(
    committed: boolean,
    r: Buffer,
    kind: Kind,
    rule: Rule,
    stateKey: string,
    clock: number,
    now: number,
    cost: number,
  ): RedisDecision {
    const sa = r.readDoubleLE(SHORT_STATES);
    const fresh = sa !== sa;
    const sb = fresh ? 0 : r.readDoubleLE(SHORT_STATES + 8);
    const t = kind === BUCKET && !fresh && sb > now && !rule.numbers.oneNumber ? sb : now;
    const code = fresh
      ? decide(kind, rule.numbers, freshAmount(kind, rule.numbers), freshInstant(kind, t), t, cost)
      : decide(kind, rule.numbers, sa, sb, t, cost);
    if ((code === OK || rule.shadow) !== committed) throw disagree(quota.name);
    const d = verdict({ rule, kind, cost, code, figures: step, now, at: t, path: "store", replayed: false });
    const denied = this.#denied;
    if (code === EXHAUSTED && denied.size > 0)
      denied.add(stateKey, clock, cost, d.remaining, d.retryAfter, d.resetAfter);
    return d;
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
