import { QuotaEngine, QuotaKey } from "@tideward/quota-engine";
import type { ChargeKind, Decision, EvaluationInput, LimitSpec, LinkCode, QuotaCharge, QuotaLink, QuotaStore, Reason, Result } from "@tideward/quota-engine";
import { check } from "@tideward/time";
import type { ScriptClient } from "./client";
import { RedisVerdict } from "./decision";
import type { RedisAtomicReport, RedisBatchReport, RedisDecision, Shadow } from "./decision";
import { DeniedCache } from "./denied";
import { Fallback } from "./fallback";
import { resolvePolicy } from "./policy";
import type { Path, RedisPolicy } from "./policy";
import { ANSWERED, FAILED, Runner, ScriptError, UNKNOWN } from "./runner";
import type { Outcome } from "./runner";
import { Lease } from "./lease";
import type { LeaseOptions } from "./lease";
import { lease as leaseScript, quota } from "./scripts";
import { slotOf } from "./slot";

const KINDS: readonly ChargeKind[] = ["bucket", "window", "gcra"];
const REASONS: readonly Reason[] = ["ok", "exhausted", "too_large"];
/** Charges a batch script call carries at most. */
const BATCH_CHUNK = 256;

function kindIndex(kind: unknown): number {
  return kind === undefined || kind === "bucket" ? 0 : kind === "window" ? 1 : kind === "gcra" ? 2 : -1;
}

/** The hash tag of a key this engine made, braces included. */
function tagOf(key: string): string {
  return key.slice(key.indexOf("{"), key.indexOf("}") + 1);
}

function num(text: string): number {
  return text === "inf" ? Infinity : text === "-inf" ? -Infinity : Number(text);
}

function keyError(key: unknown, what: string): TypeError {
  return new TypeError(`${what} must be a QuotaKey (new QuotaKey(scope, subject, resource)), got ${check.describe(key)}`);
}
function nowError(now: unknown, what = "now"): Error {
  return typeof now === "number" ? new RangeError(`${what} must be a finite number of milliseconds, got ${check.describe(now)}`) : new TypeError(`${what} must be a number of milliseconds, got ${typeof now} ${check.describe(now)}`);
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

/** Thrown when the keys of one charge set cannot share a Redis Cluster slot; nothing was sent. */
export class CrossSlotError extends RangeError {
  override readonly name = "CrossSlotError";
  /** The Redis keys of the set, each with its slot. */
  readonly keys: readonly { readonly key: string; readonly slot: number }[];
  constructor(keys: readonly { key: string; slot: number }[]) {
    super(
      `[tideward] [redis] a charge set's keys must share one cluster slot, and these do not: ${keys.map((k) => `${k.key} (slot ${k.slot})`).join(", ")}. Give them one hash tag (RedisPolicy.hashTag).`,
    );
    this.keys = keys;
  }
}

/** Options of one call: a request id makes a repeat of the same charge a no-op. */
export interface CallOptions {
  /**
   * An id for this charge (a request id, an idempotency key): a repeat with the same id within
   * {@link RedisPolicy.requestTtl} answers what the first committed and charges nothing.
   * Use it to retry an `"indeterminate"` decision safely.
   */
  readonly requestId?: string;
}

/** Options of a limit added to a {@link RedisQuotaEngine}. */
export interface LimitOptions {
  /** Decide and report, never refuse: the decision's `shadow` says what enforcing would have answered. @defaultValue false */
  readonly shadow?: boolean;
}

interface Rule {
  readonly spec: LimitSpec;
  readonly shadow: boolean;
  readonly args: readonly string[];
  /** The whole argument list of a one-charge call, per kind, with the clock and cost to fill in. */
  readonly single: readonly (readonly string[])[];
  /** The short form's tail for a bucket: capacity, refill, window, margin. */
  readonly bucket: readonly string[];
  readonly traces: readonly (readonly string[])[];
}

/**
 * The quota engine on Redis: the in-process {@link QuotaEngine}'s checks — token bucket, fixed
 * window, GCRA, atomic charge sets, hierarchy, batches — with the same names and answers,
 * returning promises. Every decision is one round trip through a Lua script.
 *
 * Limits and links are configuration, held in process (every instance adds the same ones);
 * key state lives in Redis. Each decision says which part answered it (`path`): the store, the
 * denied-key cache, or the outage mode when Redis cannot answer in time.
 *
 * @example
 * const engine = new RedisQuotaEngine(ioredisClient(redis), { prefix: "api:" });
 * await engine.addLimit(perSecond("requests", 10));
 * const d = await engine.checkTokenBucket(new QuotaKey("acme", "alice", "api"), "requests", Date.now());
 * d.allowed; d.path; // true "store"
 */
export class RedisQuotaEngine implements QuotaStore {
  /** The policy in force. */
  readonly policy: RedisPolicy;
  readonly #runner: Runner;
  readonly #rules = new Map<string, Rule>();
  // Validates limits and links and builds hierarchy chains exactly as the in-process engine does.
  readonly #registry = new QuotaEngine();
  readonly #fallback: Fallback;
  readonly #denied: DeniedCache;
  readonly #prefix: string;
  readonly #tag: (key: QuotaKey) => string;
  readonly #ttl: string;
  readonly #serverClock: boolean;
  readonly #margin: string;

  /**
   * An engine with no limits over `client`.
   *
   * @throws TypeError or RangeError naming a policy field that is invalid
   */
  constructor(client: ScriptClient, policy?: Partial<RedisPolicy>) {
    if (client === null || typeof client !== "object" || typeof client.evalsha !== "function") {
      throw new TypeError(`RedisQuotaEngine client must be a ScriptClient (ioredisClient(redis) or nodeRedisClient(client)), got ${check.describe(client)}`);
    }
    this.policy = resolvePolicy(policy, "RedisQuotaEngine");
    const p = this.policy;
    this.#runner = new Runner(client, { timeout: p.timeout, breaker: p.breaker, clock: p.monotonic, roll: p.random });
    this.#fallback = new Fallback(p.outage, p.instances);
    this.#denied = new DeniedCache(p.deniedCache);
    this.#prefix = p.prefix;
    this.#tag = p.hashTag;
    this.#ttl = String(Math.ceil(p.requestTtl));
    this.#serverClock = p.clock === "redis";
    this.#margin = String(p.expiryMargin);
  }

  /** The breaker Redis calls sit behind (to read its ratio, say). */
  get breaker(): Runner["breaker"] {
    return this.#runner.breaker;
  }

  // ── configuration ─────────────────────────────────────────────────────────────────────────

  /** Adds a limit, or says why not (`"duplicate_limit"`, `"invalid_limit"`). */
  addLimit(spec: LimitSpec, options?: LimitOptions): Promise<Result<"duplicate_limit" | "invalid_limit">> {
    const o = check.options(options, ["shadow"], "RedisQuotaEngine.addLimit");
    const shadow = o.shadow ?? false;
    if (typeof shadow !== "boolean") throw new TypeError(`RedisQuotaEngine.addLimit shadow must be a boolean, got ${typeof shadow}`);
    const result = this.#registry.addLimit(spec);
    if (result.ok) {
      const s = this.#registry.limit(spec.name) as LimitSpec;
      const args = [String(s.capacity), String(s.refill), String(s.window), String(s.burst), s.align ? "1" : "0"];
      const traces = KINDS.map((kind) => ["ok", "exhausted", "too_large", "unknown_limit", "not_committed"].map((r) => Object.freeze([`${kind} ${s.name}: ${r}`])));
      const single = [0, 1, 2].map((kind) => ["", "c", "0", "1", this.#margin, String(kind), "1", "1", ...args, "", shadow ? "1" : "0"]);
      const bucket = [String(s.capacity), String(s.refill), String(s.window), this.#margin];
      this.#rules.set(s.name, { spec: s, shadow, args, single, bucket, traces: traces.flat() });
      this.#fallback.add(s);
    }
    return Promise.resolve(result);
  }

  /** The limit named `name`, or undefined. */
  limit(name: string): LimitSpec | undefined {
    return this.#rules.get(name)?.spec;
  }

  /** Links `child` to `parent` for one limit (see the in-process engine's `addLink`). */
  addLink(link: QuotaLink): Promise<Result<LinkCode>> {
    return Promise.resolve(this.#registry.addLink(link));
  }

  /** The charges a hierarchical check of `key` makes (see the in-process engine's `chain`). */
  chain(key: QuotaKey, limit: string, cost = 1, kind: ChargeKind = "bucket"): QuotaCharge[] {
    return this.#registry.chain(key, limit, cost, kind);
  }

  /** The Redis key holding `key`'s state for `limit` under `kind`. */
  redisKey(key: QuotaKey, limit: string, kind: ChargeKind = "bucket"): string {
    return this.#stateKey(kindIndex(kind), limit, key);
  }

  #stateKey(kind: number, limit: string, key: QuotaKey): string {
    const tag = this.#tag(key);
    if (typeof tag !== "string" || tag.length === 0 || tag.includes("}")) {
      throw new TypeError(`RedisPolicy hashTag must return a non-empty string without "}", got ${check.describe(tag)} for ${key.id}`);
    }
    return `${this.#prefix}{${tag}}${"bwg"[kind]}${limit.length}:${limit}${key.id}`;
  }

  // ── single checks ─────────────────────────────────────────────────────────────────────────

  /** A token-bucket check of `cost` units at `now` (ms); see the in-process engine. */
  checkTokenBucket(key: QuotaKey, limit: string, now: number, cost = 1, options?: CallOptions): Promise<RedisDecision> {
    return this.#single(0, key, limit, now, cost, options);
  }

  /** A fixed-window check of `cost` units at `now` (ms); see the in-process engine. */
  checkWindow(key: QuotaKey, limit: string, now: number, cost = 1, options?: CallOptions): Promise<RedisDecision> {
    return this.#single(1, key, limit, now, cost, options);
  }

  /** A GCRA check of `cost` units at `now` (ms); see the in-process engine. */
  checkGcra(key: QuotaKey, limit: string, now: number, cost = 1, options?: CallOptions): Promise<RedisDecision> {
    return this.#single(2, key, limit, now, cost, options);
  }

  #single(kind: number, key: QuotaKey, limit: string, now: number, cost: number, options: CallOptions | undefined): Promise<RedisDecision> {
    if (!(key instanceof QuotaKey)) throw keyError(key, "key");
    if (!Number.isFinite(now)) throw nowError(now);
    if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, "cost");
    const rule = this.#rules.get(limit);
    if (rule === undefined) return Promise.resolve(this.#unknown(kind, limit, cost));
    const stateKey = this.#stateKey(kind, limit, key);
    const clock = this.#serverClock ? this.policy.monotonic() : now;
    const denied = this.#denied;
    if (denied.size > 0 && !rule.shadow && cost <= (kind === 2 ? rule.spec.burst : rule.spec.capacity)) {
      const hit = denied.get(stateKey, clock, cost);
      if (hit !== undefined) {
        const reset = hit.reset - (clock - hit.at);
        return Promise.resolve(new RedisVerdict(false, "exhausted", cost, hit.remaining, hit.until - clock, reset > 0 ? reset : 0, rule.traces[kind * 5 + 1], "cache", undefined));
      }
    }
    const rid = options?.requestId;
    if (kind === 0 && rid === undefined && !this.#serverClock) {
      // The short form of the hot path: one bucket, the caller's clock, no request id.
      const args = [String(now), cost === 1 ? "1" : String(cost), ...rule.bucket];
      return this.#runner.run(quota, [stateKey], args).then((outcome) => {
        if (outcome.status !== ANSWERED) return this.#outageSingle(outcome, kind, key, rule, now, cost);
        const f = (outcome.reply as string).split(",");
        const code = Number(f[0]);
        const d = this.#verdict(0, rule, cost, code, Number(f[1]), num(f[2]), num(f[3]), "store");
        if (code === 1 && denied.size > 0) denied.add(stateKey, clock, cost, d.remaining, d.retryAfter, d.resetAfter);
        return d;
      });
    }
    // The one-charge arguments are a template per kind; only the clock and the cost vary.
    const args = (rule.single[kind] as string[]).slice();
    if (!this.#serverClock) args[0] = String(now);
    if (cost !== 1) args[7] = String(cost);
    let keys: string[];
    if (rid === undefined) keys = [stateKey];
    else {
      keys = [stateKey, this.#ridKey(key, rid)];
      args[2] = this.#ttl;
    }
    return this.#runner.run(quota, keys, args).then((outcome) => {
      if (outcome.status !== ANSWERED) return this.#outageSingle(outcome, kind, key, rule, now, cost);
      const reply = outcome.reply as string;
      const replayed = reply.charCodeAt(0) === 82; // "R"
      const f = (replayed ? reply.slice(1) : reply).split(",");
      const code = Number(f[4]);
      const d = this.#verdict(kind, rule, cost, code, num(f[5]), num(f[6]), num(f[7]), "store");
      if (code === 1 && denied.size > 0) denied.add(stateKey, clock, cost, d.remaining, d.retryAfter, d.resetAfter);
      return d;
    });
  }

  #ridKey(key: QuotaKey, requestId: string): string {
    if (typeof requestId !== "string" || requestId.length === 0) throw new TypeError(`requestId must be a non-empty string, got ${check.describe(requestId)}`);
    return `${this.#prefix}{${this.#tag(key)}}r${requestId}`;
  }

  #verdict(kind: number, rule: Rule, cost: number, code: number, remaining: number, retry: number, reset: number, path: Path): RedisVerdict {
    const trace = rule.traces[kind * 5 + code];
    if (rule.shadow) {
      const shadow: Shadow = { allowed: code === 0, reason: REASONS[code], retryAfter: retry };
      return new RedisVerdict(true, "ok", cost, remaining, 0, reset, trace, path, shadow);
    }
    return new RedisVerdict(code === 0, REASONS[code], cost, remaining, retry, reset, trace, path, undefined);
  }

  #unknown(kind: number, limit: string, cost: number): RedisDecision {
    if (typeof limit !== "string") throw limitError(limit, "limit");
    return new RedisVerdict(false, "unknown_limit", cost, 0, Infinity, 0, [`${KINDS[kind]} ${limit}: unknown_limit (no limit of that name)`], "store", undefined);
  }

  #outagePath(outcome: Outcome): Path {
    if (outcome.status === FAILED && outcome.error instanceof ScriptError) throw outcome.error;
    return outcome.status === UNKNOWN ? "indeterminate" : this.#fallback.path;
  }

  #outageSingle(outcome: Outcome, kind: number, key: QuotaKey, rule: Rule, now: number, cost: number): RedisDecision {
    const path = this.#outagePath(outcome);
    const d = this.#fallback.check(kind, key, rule.spec, now, cost);
    return this.#fromLocal(d, rule, path);
  }

  #fromLocal(d: Decision, rule: Rule, path: Path): RedisDecision {
    if (rule.shadow) return new RedisVerdict(true, "ok", d.cost, d.remaining, 0, d.resetAfter, d.trace, path, { allowed: d.allowed, reason: d.reason, retryAfter: d.retryAfter });
    return new RedisVerdict(d.allowed, d.reason, d.cost, d.remaining, d.retryAfter, d.resetAfter, d.trace, path, undefined);
  }

  // ── charge sets ───────────────────────────────────────────────────────────────────────────

  /**
   * Charges every charge at `now` (ms), or none, in one script call: the in-process engine's
   * `checkAtomic`, on Redis. Every key of the set must map to one cluster slot.
   *
   * @throws TypeError or RangeError naming the charge and field when a charge is malformed;
   *   {@link CrossSlotError} naming the keys when they cannot share a slot (nothing is sent)
   */
  checkAtomic(charges: readonly QuotaCharge[], now: number, options?: CallOptions): Promise<RedisAtomicReport> {
    return this.#atomic(charges, now, true, options);
  }

  /** What {@link RedisQuotaEngine.checkAtomic} would answer at `now` (ms), charging nothing. */
  peekAtomic(charges: readonly QuotaCharge[], now: number): Promise<RedisAtomicReport> {
    return this.#atomic(charges, now, false, undefined);
  }

  async #atomic(charges: readonly QuotaCharge[], now: number, commit: boolean, options: CallOptions | undefined): Promise<RedisAtomicReport> {
    if (!Array.isArray(charges)) throw new TypeError(`charges must be an array of QuotaCharge, got ${check.describe(charges)}`);
    if (!Number.isFinite(now)) throw nowError(now);
    const n = charges.length;
    const kinds: number[] = [];
    const copy: QuotaCharge[] = [];
    for (let i = 0; i < n; i++) {
      const c = charges[i] as QuotaCharge | undefined;
      if (c === null || typeof c !== "object") throw new TypeError(`charges[${i}] must be a QuotaCharge, got ${check.describe(c)}`);
      const { key, limit, cost, kind } = c;
      if (!(key instanceof QuotaKey)) throw keyError(key, `charges[${i}].key`);
      if (typeof limit !== "string") throw limitError(limit, `charges[${i}].limit`);
      if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, `charges[${i}].cost`);
      const k = kindIndex(kind);
      if (k < 0) throw kindError(kind, `charges[${i}].kind`);
      kinds.push(k);
      copy.push({ key, limit, cost, kind: KINDS[k] });
    }
    const rules = copy.map((c) => this.#rules.get(c.limit));
    const unknown = rules.findIndex((r) => r === undefined);
    // Distinct states, in first-seen order: repeated charges to one bucket share a KEYS slot.
    const index = new Map<string, number>();
    const keys: string[] = [];
    const at: number[] = [];
    for (let i = 0; i < n; i++) {
      if (rules[i] === undefined) continue;
      const c = copy[i];
      const name = this.#stateKey(kinds[i], c.limit, c.key);
      let j = index.get(name);
      if (j === undefined) {
        j = keys.length;
        index.set(name, j);
        keys.push(name);
      }
      at.push(j);
    }
    this.#sameSlot(keys);
    const rid = options?.requestId;
    const committing = commit && unknown < 0;
    if (rid !== undefined && committing && n > 0) {
      const ridKey = this.#ridKey((copy[0]).key, rid);
      this.#sameSlot([...keys, ridKey]);
      keys.push(ridKey);
    }
    const known = n - (unknown < 0 ? 0 : rules.filter((r) => r === undefined).length);
    let f: string[] | undefined;
    let path: Path = "store";
    let replayed = false;
    if (known > 0) {
      const args: string[] = [this.#serverClock ? "" : String(now), committing ? "c" : "p", rid !== undefined && committing ? this.#ttl : "0", String(known), this.#margin];
      let j = 0;
      for (let i = 0; i < n; i++) {
        const rule = rules[i];
        if (rule === undefined) continue;
        args.push(String(kinds[i]), String((at[j++]) + 1), String((copy[i]).cost), ...rule.args, "", rule.shadow ? "1" : "0");
      }
      const outcome = await this.#runner.run(quota, keys, args);
      if (outcome.status !== ANSWERED) return this.#outageAtomic(outcome, copy, kinds, rules, now, commit);
      const reply = outcome.reply as string;
      replayed = reply.charCodeAt(0) === 82;
      f = (replayed ? reply.slice(1) : reply).split(",");
    }
    const decisions: RedisDecision[] = [];
    let failed = -1;
    let j = 0;
    for (let i = 0; i < n; i++) {
      const rule = rules[i];
      const k = kinds[i];
      const c = copy[i];
      if (rule === undefined) {
        if (failed < 0) failed = i;
        decisions.push(this.#unknown(k, c.limit, c.cost));
        continue;
      }
      const o = 4 + j++ * 4;
      const fields = f as string[];
      const code = Number(fields[o]);
      if (code !== 0 && !rule.shadow && failed < 0) failed = i;
      decisions.push(this.#verdict(k, rule, c.cost, code, num(fields[o + 1]), num(fields[o + 2]), num(fields[o + 3]), path));
    }
    if (failed >= 0) {
      // Charges that fit in a set that did not commit say so, as in process.
      for (let i = 0; i < n; i++) {
        const d = decisions[i];
        if (d.allowed && d.shadow === undefined) decisions[i] = new RedisVerdict(false, "not_committed", d.cost, d.remaining, 0, d.resetAfter, (rules[i] as Rule).traces[(kinds[i]) * 5 + 4], path, undefined);
      }
    }
    const retryAfter = failed < 0 ? 0 : unknown >= 0 ? Infinity : num((f as string[])[2]);
    path = "store";
    return { allowed: failed < 0, committed: commit && failed < 0, failedIndex: failed, retryAfter, decisions, path, replayed };
  }

  #sameSlot(keys: readonly string[]): void {
    if (keys.length < 2) return;
    // Keys that share a hash tag share a slot: compare the tags, hash only when they differ.
    const shared = tagOf(keys[0]);
    let same = true;
    for (let i = 1; i < keys.length && same; i++) same = tagOf(keys[i]) === shared;
    if (same) return;
    const first = slotOf(keys[0]);
    for (let i = 1; i < keys.length; i++) {
      if (slotOf(keys[i]) !== first) throw new CrossSlotError(keys.map((key) => ({ key, slot: slotOf(key) })));
    }
  }

  #outageAtomic(outcome: Outcome, charges: readonly QuotaCharge[], kinds: readonly number[], rules: readonly (Rule | undefined)[], now: number, commit: boolean): RedisAtomicReport {
    const path = this.#outagePath(outcome);
    const report = this.#fallback.atomic(charges, kinds, now, commit);
    const decisions = report.decisions.map((d, i) => {
      const rule = rules[i];
      return rule === undefined ? new RedisVerdict(d.allowed, d.reason, d.cost, d.remaining, d.retryAfter, d.resetAfter, d.trace, path, undefined) : this.#fromLocal(d, rule, path);
    });
    return { ...report, decisions, path, replayed: false };
  }

  // ── hierarchy ─────────────────────────────────────────────────────────────────────────────

  /**
   * Charges `key` and its linked ancestors for `limit` as one atomic set and folds the answer
   * into one decision, as the in-process engine's `checkHierarchy` does.
   */
  async checkHierarchy(key: QuotaKey, limit: string, now: number, cost = 1, kind: ChargeKind = "bucket", options?: CallOptions): Promise<RedisDecision> {
    const charges = this.chain(key, limit, cost, kind);
    const report = await this.#atomic(charges, now, true, options);
    let remaining = Infinity;
    let resetAfter = 0;
    const trace: string[] = [];
    for (let i = 0; i < charges.length; i++) {
      const c = charges[i];
      const d = report.decisions[i];
      const scale = c.cost / cost;
      const held = d.reason === "not_committed" || d.reason === "key_limit" ? d.remaining + c.cost : d.remaining;
      remaining = Math.min(remaining, Math.floor(held / scale));
      if (d.resetAfter > resetAfter) resetAfter = d.resetAfter;
      trace.push(`${c.kind ?? "bucket"} ${limit} @ ${c.key.id}: ${d.reason}`);
    }
    const reason = report.allowed ? "ok" : (report.decisions[report.failedIndex]).reason;
    return new RedisVerdict(report.allowed, reason, cost, remaining === Infinity ? 0 : remaining, report.retryAfter, resetAfter, trace, report.path, undefined);
  }

  // ── leases ─────────────────────────────────────────────────────────────────────────────────

  /**
   * A {@link Lease} on `key`'s token bucket of `limit`: a slice of the global quota this process
   * spends at in-process speed. Leases and `checkTokenBucket` share the same bucket.
   *
   * @throws RangeError when `limit` is unknown, or `options` is invalid
   */
  lease(key: QuotaKey, limit: string, options: LeaseOptions): Lease {
    if (!(key instanceof QuotaKey)) throw keyError(key, "key");
    const rule = this.#rules.get(limit);
    if (rule === undefined) throw new RangeError(`lease: no limit named ${JSON.stringify(limit)}`);
    const stateKey = this.#stateKey(0, limit, key);
    const { capacity, refill, window } = rule.spec;
    const spec = [String(capacity), String(refill), String(window)];
    return new Lease(async (op, now, n) => {
      const outcome = await this.#runner.run(leaseScript, [stateKey], [op, this.#serverClock ? "" : String(now), this.#margin, String(n), ...spec]);
      if (outcome.status !== ANSWERED) {
        if (outcome.status === FAILED && outcome.error instanceof ScriptError) throw outcome.error;
        return undefined;
      }
      const [granted, retry] = (outcome.reply as string).split(",");
      return { granted: Number(granted), retryAfter: num(retry) };
    }, options);
  }

  // ── batches ───────────────────────────────────────────────────────────────────────────────

  /**
   * Checks inputs one after another in input order (not atomically) against one limit, many per
   * script call: the batch path. On a cluster (`RedisPolicy.cluster`) the inputs are split by
   * slot, each key's inputs keeping their order.
   *
   * @throws TypeError or RangeError naming `inputs[i]` and the field when an input is malformed
   */
  async checkMany(limit: string, inputs: readonly EvaluationInput[], kind: ChargeKind = "bucket"): Promise<RedisBatchReport> {
    if (typeof limit !== "string") throw limitError(limit, "limit");
    if (!Array.isArray(inputs)) throw new TypeError(`inputs must be an array of EvaluationInput, got ${check.describe(inputs)}`);
    const k = kindIndex(kind);
    if (k === -1) throw kindError(kind, "kind");
    const copy: { key: QuotaKey; now: number; cost: number }[] = [];
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i] as EvaluationInput | undefined;
      if (input === null || typeof input !== "object") throw new TypeError(`inputs[${i}] must be an EvaluationInput, got ${check.describe(input)}`);
      const { key, now } = input;
      const cost = input.cost ?? 1;
      if (!(key instanceof QuotaKey)) throw keyError(key, `inputs[${i}].key`);
      if (!Number.isFinite(now)) throw nowError(now, `inputs[${i}].now`);
      if (!Number.isSafeInteger(cost) || cost < 1) throw costError(cost, `inputs[${i}].cost`);
      copy.push({ key, now, cost });
    }
    const rule = this.#rules.get(limit);
    const decisions = new Array<RedisDecision>(copy.length);
    if (rule === undefined) {
      for (let i = 0; i < copy.length; i++) decisions[i] = this.#unknown(k, limit, (copy[i] as { cost: number }).cost);
    } else {
      // Groups of input indexes, each sent as one call: by slot on a cluster, else in order.
      const names = copy.map((c) => this.#stateKey(k, limit, c.key));
      const groups = new Map<number, number[]>();
      for (let i = 0; i < copy.length; i++) {
        const g = this.policy.cluster ? slotOf(names[i]) : 0;
        let list = groups.get(g);
        if (list === undefined) groups.set(g, (list = []));
        list.push(i);
      }
      const calls: Promise<void>[] = [];
      for (const list of groups.values()) {
        for (let s = 0; s < list.length; s += BATCH_CHUNK) calls.push(this.#batchCall(k, rule, list.slice(s, s + BATCH_CHUNK), copy, names, decisions));
      }
      await Promise.all(calls);
    }
    let allowed = 0;
    for (const d of decisions) if (d.allowed) allowed++;
    return { total: copy.length, allowed, denied: copy.length - allowed, decisions };
  }

  async #batchCall(kind: number, rule: Rule, list: readonly number[], inputs: readonly { key: QuotaKey; now: number; cost: number }[], names: readonly string[], out: RedisDecision[]): Promise<void> {
    const index = new Map<string, number>();
    const keys: string[] = [];
    const first = inputs[list[0]] as { now: number };
    const args: string[] = [this.#serverClock ? "" : String(first.now), "s", "0", String(list.length), this.#margin, String(kind), ...rule.args];
    for (const i of list) {
      const name = names[i];
      let j = index.get(name);
      if (j === undefined) {
        j = keys.length;
        index.set(name, j);
        keys.push(name);
      }
      const input = inputs[i] as { now: number; cost: number };
      args.push(String(j + 1), input.cost === 1 ? "1" : String(input.cost), this.#serverClock ? "" : String(input.now));
    }
    const outcome = await this.#runner.run(quota, keys, args);
    if (outcome.status !== ANSWERED) {
      for (const i of list) {
        const input = inputs[i];
        out[i] = this.#outageSingle(outcome, kind, input.key, rule, input.now, input.cost);
      }
      return;
    }
    const f = (outcome.reply as string).split(",");
    for (let x = 0; x < list.length; x++) {
      const o = 4 + x * 4;
      const i = list[x];
      out[i] = this.#verdict(kind, rule, (inputs[i] as { cost: number }).cost, Number(f[o]), num(f[o + 1]), num(f[o + 2]), num(f[o + 3]), "store");
    }
  }
}
