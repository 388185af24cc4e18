import type { Breaker } from "@tideward/breaker";
import { badInstant, bucketReady, firstAfter, until } from "@tideward/limiters/math";
import { QuotaEngine, QuotaKey } from "@tideward/quota-engine";
import type {
  ChargeKind,
  Decision,
  EvaluationInput,
  LimitSpec,
  LinkCode,
  QuotaCharge,
  QuotaLink,
  QuotaStore,
  Reason,
  Result,
} from "@tideward/quota-engine";
import { check } from "@tideward/time/internal";
import type { ScriptClient } from "./client";
import { RedisVerdict } from "./decision";
import type { RedisAtomicReport, RedisBatchReport, RedisDecision, Shadow } from "./decision";
import { DeniedCache } from "./denied";
import { Fallback } from "./fallback";
import { Lease } from "./lease";
import type { LeaseOptions } from "./lease";
import { resolvePolicy } from "./policy";
import type { Path, RedisPolicy } from "./policy";
import { ANSWERED, FAILED, Runner, ScriptError, UNKNOWN } from "./runner";
import type { Outcome } from "./runner";
import { lease as leaseScript, quota } from "./scripts";
import { slotOf } from "./slot";
import {
  BUCKET,
  EXHAUSTED,
  GCRA,
  KIND_NAMES,
  NOT_COMMITTED,
  OK,
  Rule as Numbers,
  WINDOW,
  costError,
  decide,
  foldChain,
  freshAmount,
  freshInstant,
  isCost,
  isInstant,
  keyError,
  kindError,
  kindOf,
  limitError,
  readInputs,
  readKind,
  step,
} from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import { bytes } from "./bytes";

const REASONS: readonly Reason[] = ["ok", "exhausted", "too_large", "unknown_limit", "not_committed"];
/** Charges a batch script call carries at most. */
const BATCH_CHUNK = 256;
/** Charge sets larger than this find repeated buckets with a Map instead of a scan (the script does the same). */
const SMALL_SET = 16;
/** The reply's first byte: "1" committed (or answered), "R" the stored answer of a request id. */
const YES = 49;
const REPLAYED = 82;

/** The hash tag of a key this engine made, braces included. */
function tagOf(key: string): string {
  return key.slice(key.indexOf("{"), key.indexOf("}") + 1);
}

// A charge's cost as the script reads it: negative for a shadow limit's (never refusing a set).
function costArg(cost: number, shadow: boolean): string {
  return shadow ? String(-cost) : cost === 1 ? "1" : String(cost);
}

// A key the QuotaKey constructor made: the class's own and frozen as it leaves the constructor
// (a look-alike made with Object.create is neither, so it cannot stand in for another key). Not
// the in-process engine's brand check: that holds only for keys of its own build of QuotaKey,
// and /internal is built apart from the package's main entry, where users' keys come from.
function isKey(key: unknown): key is QuotaKey {
  return key instanceof QuotaKey && Object.isFrozen(key);
}
function disagree(script: string): ScriptError {
  return new ScriptError(
    script,
    new Error("the script's decision and the in-process formulas disagree (a script of another version?)"),
  );
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
  readonly numbers: Numbers;
  readonly shadow: boolean;
  /** Per kind, a charge's two numbers as the script reads them, their signs saying the kind (see quota.lua). */
  readonly args: readonly (readonly [string, string])[];
  /** The one-entry traces, by `kind · 5 + code`. */
  readonly traces: readonly (readonly string[])[];
}

// Per-charge working space for evaluating a set's reply, kept between calls: a reply is evaluated
// synchronously in its callback, so one scratch serves every call in flight.
class Scratch {
  size = 0;
  names: string[] = [];
  numbers: Numbers[] = [];
  kinds = new Uint8Array(0);
  shadow = new Uint8Array(0);
  present = new Uint8Array(0);
  codes = new Uint8Array(0);
  costs = new Float64Array(0);
  a = new Float64Array(0);
  b = new Float64Array(0);
  sa = new Float64Array(0);
  sb = new Float64Array(0);
  rem = new Float64Array(0);
  retry = new Float64Array(0);
  reset = new Float64Array(0);

  fit(n: number): this {
    if (n > this.size) {
      const size = Math.max(8, n, this.size * 2);
      this.kinds = new Uint8Array(size);
      this.shadow = new Uint8Array(size);
      this.present = new Uint8Array(size);
      this.codes = new Uint8Array(size);
      this.costs = new Float64Array(size);
      this.a = new Float64Array(size);
      this.b = new Float64Array(size);
      this.sa = new Float64Array(size);
      this.sb = new Float64Array(size);
      this.rem = new Float64Array(size);
      this.retry = new Float64Array(size);
      this.reset = new Float64Array(size);
      this.size = size;
    }
    return this;
  }
}

/** A charge set as read, once, from the caller's objects: everything the call uses after. */
interface SetCall {
  readonly n: number;
  /** Per charge, five entries: the key, the limit's name, the cost, the kind, the rule (undefined: unknown). */
  readonly charges: unknown[];
  /** The Redis key of each charge to a known limit, in order. */
  readonly names: string[];
  /** Whether every name has the same hash tag (so one slot, with nothing hashed). */
  readonly oneTag: boolean;
  /** The index of the first charge naming an unknown limit, or -1. */
  readonly unknown: number;
  readonly now: number;
  readonly commit: boolean;
}

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
  readonly #scratch = new Scratch();

  /**
   * An engine with no limits over `client`.
   *
   * @param client - the connection (see {@link ioredisClient} and {@link nodeRedisClient})
   * @param policy - read once; an unknown field is a `TypeError` naming the closest known one
   * @throws TypeError or RangeError naming a policy field that is invalid, or when `client` is
   *   not a {@link ScriptClient}
   */
  constructor(client: ScriptClient, policy?: Partial<RedisPolicy>) {
    if (client === null || typeof client !== "object" || typeof client.evalsha !== "function") {
      throw new TypeError(
        `RedisQuotaEngine client must be a ScriptClient (ioredisClient(redis) or nodeRedisClient(client)), got ${check.describe(client)}`,
      );
    }
    this.policy = resolvePolicy(policy, "RedisQuotaEngine");
    const p = this.policy;
    this.#runner = new Runner(client, { timeout: p.timeout, breaker: p.breaker, clock: p.monotonic, roll: p.random });
    this.#fallback = new Fallback(p.outage, p.instances, this.#runner.breaker.policy.probe);
    this.#denied = new DeniedCache(p.deniedCache);
    this.#prefix = p.prefix;
    this.#tag = p.hashTag;
    this.#ttl = String(Math.ceil(p.requestTtl));
    this.#serverClock = p.clock === "redis";
    this.#margin = String(p.expiryMargin);
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
      const numbers = new Numbers(s);
      // Shortest round-trip decimals: the script reads back these very doubles.
      const args: (readonly [string, string])[] = [
        [String(s.capacity), String(numbers.perMs)],
        [String(-s.capacity), String(s.align ? -s.window : s.window)],
        [String(s.burst), String(-numbers.interval)],
      ];
      const traces = KIND_NAMES.flatMap((kind) => REASONS.map((r) => Object.freeze([`${kind} ${s.name}: ${r}`])));
      this.#rules.set(s.name, { spec: s, numbers, shadow, args, traces });
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
    return this.#stateKey(kindOf(kind) as Kind, limit, key);
  }

  #stateKey(kind: Kind, limit: string, key: QuotaKey): string {
    return this.#nameOf(this.#tag(key), kind, limit, key);
  }

  #nameOf(tag: string, kind: Kind, limit: string, key: QuotaKey): string {
    if (typeof tag !== "string" || tag.length === 0 || tag.includes("}")) {
      throw new TypeError(
        `RedisPolicy hashTag must return a non-empty string without "}", got ${check.describe(tag)} for ${key.id}`,
      );
    }
    // With the scope as its tag (the default) a name leaves the scope out of the key's id, the
    // tag saying it, and marks that with an upper-case kind: shorter names cost Redis less memory
    // (a name of up to 30 characters keeps a bucket at 104 bytes). Either form is unambiguous:
    // the limit and the subject carry their lengths, the resource is the rest.
    if (tag === key.scope)
      return (
        this.#prefix +
        "{" +
        tag +
        "}" +
        "BWG"[kind] +
        limit.length +
        ":" +
        limit +
        key.subject.length +
        ":" +
        key.subject +
        key.resource
      );
    return this.#prefix + "{" + tag + "}" + "bwg"[kind] + limit.length + ":" + limit + key.id;
  }

  // ── single checks ─────────────────────────────────────────────────────────────────────────

  /**
   * A token-bucket check of `cost` units at `now` (ms); see the in-process engine.
   *
   * @throws TypeError or RangeError when `key`, `now` or `cost` is malformed
   */
  checkTokenBucket(key: QuotaKey, limit: string, now: number, cost = 1, options?: CallOptions): Promise<RedisDecision> {
    return this.#single(BUCKET, key, limit, now, cost, options);
  }

  /** A fixed-window check of `cost` units at `now` (ms); see the in-process engine. */
  checkWindow(key: QuotaKey, limit: string, now: number, cost = 1, options?: CallOptions): Promise<RedisDecision> {
    return this.#single(WINDOW, key, limit, now, cost, options);
  }

  /** A GCRA check of `cost` units at `now` (ms); see the in-process engine. */
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
    const rule = this.#rules.get(limit);
    if (rule === undefined) return Promise.resolve(this.#unknown(kind, limit, cost));
    const stateKey = this.#stateKey(kind, limit, key);
    const clock = this.#serverClock ? this.policy.monotonic() : now;
    const denied = this.#denied;
    if (denied.size > 0 && !rule.shadow && cost <= (kind === GCRA ? rule.spec.burst : rule.spec.capacity)) {
      const hit = denied.get(stateKey, clock, cost);
      if (hit !== undefined) {
        const reset = hit.reset - (clock - hit.at);
        return Promise.resolve(
          new RedisVerdict(
            false,
            "exhausted",
            cost,
            hit.remaining,
            hit.until - clock,
            reset > 0 ? reset : 0,
            rule.traces[kind * 5 + EXHAUSTED],
            "cache",
            undefined,
          ),
        );
      }
    }
    const rid = options?.requestId;
    const a = rule.args[kind];
    if (rid === undefined && !this.#serverClock) {
      // The short form: committed on the caller's clock, no request id. The reply is the charged
      // flag and the state read (two NaNs when fresh).
      return this.#runner
        .run(quota, [stateKey], [String(now), this.#margin, costArg(cost, rule.shadow), a[0], a[1]])
        .then((outcome) => {
          if (outcome.status !== ANSWERED) return this.#outageSingle(outcome, kind, key, rule, now, cost);
          const r = bytes(outcome.reply);
          return this.#decided(r[0] === YES, r, 1, kind, rule, stateKey, clock, now, cost);
        });
    }
    let keys: string[];
    let ttl = "0";
    if (rid === undefined) keys = [stateKey];
    else {
      keys = [stateKey, this.#ridKey(key, rid)];
      ttl = this.#ttl;
    }
    const args = [this.#serverClock ? "" : String(now), "c", ttl, this.#margin, costArg(cost, rule.shadow), a[0], a[1]];
    return this.#runner.run(quota, keys, args).then((outcome) => {
      if (outcome.status !== ANSWERED) return this.#outageSingle(outcome, kind, key, rule, now, cost);
      const r = bytes(outcome.reply);
      const o = r[0] === REPLAYED ? 1 : 0;
      // The clock the script used: the server's, or (a replay) the first call's.
      return this.#decided(
        r[o] === YES,
        r,
        o + 9,
        kind,
        rule,
        stateKey,
        clock,
        o === 1 || this.#serverClock ? r.readDoubleLE(o + 1) : now,
        cost,
      );
    });
  }

  // One charge's decision from the script's reply (whether it charged, and the state it read at
  // `at`): the figures from the in-process formulas, at the script's clock `now`.
  #decided(
    charged: boolean,
    r: Buffer,
    at: number,
    kind: Kind,
    rule: Rule,
    stateKey: string,
    clock: number,
    now: number,
    cost: number,
  ): RedisDecision {
    const sa = r.readDoubleLE(at);
    const fresh = sa !== sa;
    const sb = fresh ? 0 : r.readDoubleLE(at + 8);
    const t = kind === BUCKET && !fresh && sb > now ? sb : now;
    const code = fresh
      ? decide(kind, rule.numbers, freshAmount(kind, rule.numbers), freshInstant(kind, t), t, cost)
      : decide(kind, rule.numbers, sa, sb, t, cost);
    if ((code === OK) !== charged) throw disagree(quota.name);
    const d = this.#verdict(kind, rule, cost, code, now, t, "store");
    const denied = this.#denied;
    if (code === EXHAUSTED && denied.size > 0)
      denied.add(stateKey, clock, cost, d.remaining, d.retryAfter, d.resetAfter);
    return d;
  }

  #ridKey(key: QuotaKey, requestId: string): string {
    if (typeof requestId !== "string" || requestId.length === 0)
      throw new TypeError(`requestId must be a non-empty string, got ${check.describe(requestId)}`);
    return `${this.#prefix}{${this.#tag(key)}}r${requestId}`;
  }

  // The decision of a step just taken (its figures in `step`), with its waits from the caller's `now`.
  #verdict(kind: Kind, rule: Rule, cost: number, code: number, now: number, t: number, path: Path): RedisVerdict {
    const trace = rule.traces[kind * 5 + code];
    const remaining = step.remaining;
    const retry = code === OK ? 0 : until(now, t, step.passAt);
    const reset = until(now, t, step.resetAt);
    if (rule.shadow) {
      const shadow: Shadow = { allowed: code === OK, reason: REASONS[code], retryAfter: retry };
      return new RedisVerdict(true, "ok", cost, remaining, 0, reset, trace, path, shadow);
    }
    return new RedisVerdict(code === OK, REASONS[code], cost, remaining, retry, reset, trace, path, undefined);
  }

  #unknown(kind: Kind, limit: string, cost: number): RedisDecision {
    if (typeof limit !== "string") throw limitError(limit, "limit");
    return new RedisVerdict(
      false,
      "unknown_limit",
      cost,
      0,
      Infinity,
      0,
      [`${KIND_NAMES[kind]} ${limit}: unknown_limit (no limit of that name)`],
      "store",
      undefined,
    );
  }

  #outagePath(outcome: Outcome): Path {
    if (outcome.status === FAILED && outcome.error instanceof ScriptError) throw outcome.error;
    return outcome.status === UNKNOWN ? "indeterminate" : this.#fallback.path;
  }

  #outageSingle(outcome: Outcome, kind: Kind, key: QuotaKey, rule: Rule, now: number, cost: number): RedisDecision {
    const path = this.#outagePath(outcome);
    const d = this.#fallback.check(kind, key, rule.spec, now, cost);
    return this.#fromLocal(d, rule.shadow, path);
  }

  #fromLocal(d: Decision, shadow: boolean, path: Path): RedisDecision {
    if (shadow)
      return new RedisVerdict(true, "ok", d.cost, d.remaining, 0, d.resetAfter, d.trace, path, {
        allowed: d.allowed,
        reason: d.reason,
        retryAfter: d.retryAfter,
      });
    return new RedisVerdict(
      d.allowed,
      d.reason,
      d.cost,
      d.remaining,
      d.retryAfter,
      d.resetAfter,
      d.trace,
      path,
      undefined,
    );
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
    let keys: string[];
    let args: string[];
    let short = false;
    try {
      call = this.#readSet(charges, now, commit);
      keys = call.names;
      const m = keys.length;
      if (!call.oneTag) this.#sameSlot(keys);
      if (m === 0) return Promise.resolve(this.#report(call, undefined, 0));
      const rid = options?.requestId;
      const committing = commit && call.unknown < 0;
      let at: number;
      if (committing && rid === undefined && !this.#serverClock) {
        // The short form: the clock and the margin, then the charges.
        short = true;
        args = new Array<string>(2 + 3 * m);
        args[0] = String(now);
        args[1] = this.#margin;
        at = 2;
      } else {
        let ttl = "0";
        if (rid !== undefined && committing) {
          const ridKey = this.#ridKey(call.charges[0] as QuotaKey, rid);
          this.#sameSlot([...keys, ridKey]);
          keys = [...keys, ridKey];
          ttl = this.#ttl;
        }
        args = new Array<string>(4 + 3 * m);
        args[0] = this.#serverClock ? "" : String(now);
        args[1] = committing ? "c" : "p";
        args[2] = ttl;
        args[3] = this.#margin;
        at = 4;
      }
      const c = call.charges;
      for (let i = 0; i < call.n; i++) {
        const rule = c[i * 5 + 4] as Rule | undefined;
        if (rule === undefined) continue;
        const a = rule.args[c[i * 5 + 3] as Kind];
        args[at] = costArg(c[i * 5 + 2] as number, rule.shadow);
        args[at + 1] = a[0];
        args[at + 2] = a[1];
        at += 3;
      }
    } catch (error) {
      // Bad input rejects the promise (as an async method would), before anything is sent.
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return this.#runner.run(quota, keys, args).then((outcome) => {
      if (outcome.status !== ANSWERED) return this.#outageAtomic(outcome, call);
      return this.#report(call, bytes(outcome.reply), short ? 1 : 0);
    });
  }

  // Each charge read once, into the call's own array, and checked there: nothing after reads the
  // caller's objects again.
  #readSet(charges: readonly QuotaCharge[], now: number, commit: boolean): SetCall {
    if (!Array.isArray(charges))
      throw new TypeError(`charges must be an array of QuotaCharge, got ${check.describe(charges)}`);
    if (!isInstant(now)) throw badInstant(now, "now");
    const n = charges.length;
    const copy = new Array<unknown>(n * 5);
    const names: string[] = [];
    let unknown = -1;
    let firstTag: string | undefined;
    let oneTag = true;
    for (let i = 0; i < n; i++) {
      const c = charges[i] as QuotaCharge | undefined;
      if (c === null || typeof c !== "object")
        throw new TypeError(`charges[${i}] must be a QuotaCharge, got ${check.describe(c)}`);
      const { key, limit, cost, kind } = c;
      if (!isKey(key)) throw keyError(key, `charges[${i}].key`);
      if (typeof limit !== "string") throw limitError(limit, `charges[${i}].limit`);
      if (!isCost(cost)) throw costError(cost, `charges[${i}].cost`);
      const k = kindOf(kind);
      if (k === -1) throw kindError(kind, `charges[${i}].kind`);
      const rule = this.#rules.get(limit);
      copy[i * 5] = key;
      copy[i * 5 + 1] = limit;
      copy[i * 5 + 2] = cost;
      copy[i * 5 + 3] = k;
      copy[i * 5 + 4] = rule;
      if (rule === undefined) {
        if (unknown < 0) unknown = i;
        continue;
      }
      const tag = this.#tag(key);
      if (firstTag === undefined) firstTag = tag;
      else if (tag !== firstTag) oneTag = false;
      names.push(this.#nameOf(tag, k, limit, key));
    }
    return { n, charges: copy, names, oneTag, unknown, now, commit };
  }

  // The report of a set from the script's reply (undefined when nothing was sent; `short`: 1 for
  // the short form's reply, with no clock in it): the states staged as the in-process engine
  // stages them, at the script's clock.
  #report(call: SetCall, r: Buffer | undefined, short: number): RedisAtomicReport {
    const m = call.names.length;
    const s = this.#scratch.fit(m);
    const c = call.charges;
    let now = call.now;
    let t = now;
    let replayed = false;
    let failedKnown = -1;
    if (r !== undefined) {
      const o = r[0] === REPLAYED ? 1 : 0;
      replayed = o === 1;
      if (short === 0 && (replayed || this.#serverClock)) now = r.readDoubleLE(o + 1);
      t = now;
      const states = short === 1 ? 1 : o + 9;
      let j = 0;
      for (let i = 0; i < call.n; i++) {
        const rule = c[i * 5 + 4] as Rule | undefined;
        if (rule === undefined) continue;
        const kind = c[i * 5 + 3] as Kind;
        const at = states + j * 16;
        const a = r.readDoubleLE(at);
        s.names[j] = call.names[j];
        s.numbers[j] = rule.numbers;
        s.kinds[j] = kind;
        s.shadow[j] = rule.shadow ? 1 : 0;
        s.costs[j] = c[i * 5 + 2] as number;
        s.present[j] = a === a ? 1 : 0;
        s.a[j] = a;
        s.b[j] = a === a ? r.readDoubleLE(at + 8) : 0;
        if (kind === BUCKET && a === a && s.b[j] > t) t = s.b[j];
        j++;
      }
      failedKnown = this.#stage(m, t);
      const committed = r[o] === YES;
      if (committed !== (failedKnown < 0 || !call.commit || call.unknown >= 0)) throw disagree(quota.name);
    }
    const decisions: RedisDecision[] = new Array<RedisDecision>(call.n);
    let failed = -1;
    let j = 0;
    for (let i = 0; i < call.n; i++) {
      const rule = c[i * 5 + 4] as Rule | undefined;
      const kind = c[i * 5 + 3] as Kind;
      const cost = c[i * 5 + 2] as number;
      if (rule === undefined) {
        if (failed < 0) failed = i;
        decisions[i] = this.#unknown(kind, c[i * 5 + 1] as string, cost);
        continue;
      }
      if (j === failedKnown && failed < 0) failed = i;
      step.remaining = s.rem[j];
      step.passAt = s.retry[j];
      step.resetAt = s.reset[j];
      decisions[i] = this.#verdict(kind, rule, cost, s.codes[j], now, t, "store");
      j++;
    }
    if (failed >= 0) {
      // Charges that fit in a set that did not commit say so, as in process.
      for (let i = 0; i < call.n; i++) {
        const d = decisions[i];
        if (d.allowed && d.shadow === undefined)
          decisions[i] = new RedisVerdict(
            false,
            "not_committed",
            d.cost,
            d.remaining,
            0,
            d.resetAfter,
            (c[i * 5 + 4] as Rule).traces[(c[i * 5 + 3] as Kind) * 5 + NOT_COMMITTED],
            "store",
            undefined,
          );
      }
    }
    // Computed last: it stages the set again at later instants, over the scratch.
    const retryAfter = failed < 0 ? 0 : call.unknown >= 0 ? Infinity : this.#setRetry(m, t, now);
    return {
      allowed: failed < 0,
      committed: call.commit && failed < 0,
      failedIndex: failed,
      retryAfter,
      decisions,
      path: "store",
      replayed,
    };
  }

  // Evaluates the scratch's m charges at `t` on staged state, as the in-process engine's #stage
  // does: each charge sees its bucket after the latest earlier charge to it that fit. Returns the
  // index of the first enforced charge that did not fit, or -1.
  #stage(m: number, t: number): number {
    const s = this.#scratch;
    const latest = m > SMALL_SET ? new Map<string, number>() : undefined;
    let failed = -1;
    for (let j = 0; j < m; j++) {
      const name = s.names[j];
      const kind = s.kinds[j] as Kind;
      const numbers = s.numbers[j];
      let p = -1;
      if (latest !== undefined) p = latest.get(name) ?? -1;
      else {
        for (let q = j - 1; q >= 0; q--) {
          if (s.codes[q] === OK && s.names[q] === name) {
            p = q;
            break;
          }
        }
      }
      let a: number;
      let b: number;
      if (p >= 0) {
        a = s.sa[p];
        b = s.sb[p];
      } else if (s.present[j] === 1) {
        a = s.a[j];
        b = s.b[j];
      } else {
        a = freshAmount(kind, numbers);
        b = freshInstant(kind, t);
      }
      const code = decide(kind, numbers, a, b, t, s.costs[j]);
      s.codes[j] = code;
      s.sa[j] = step.amount;
      s.sb[j] = step.instant;
      s.rem[j] = step.remaining;
      s.retry[j] = step.passAt;
      s.reset[j] = step.resetAt;
      if (code === OK) latest?.set(name, j);
      else if (failed < 0 && s.shadow[j] === 0) failed = j;
    }
    return failed;
  }

  // When the whole set would fit, as a wait from `now`: the in-process engine's #setRetry — the
  // latest, over the buckets the enforced charges touch, of the first instant each holds the
  // set's total demand on it, then confirmed by staging the set there when a bucket is charged
  // twice (their staged roundings can differ from their total's by a float step).
  #setRetry(m: number, t: number, now: number): number {
    const s = this.#scratch;
    let worst = t;
    let repeated = false;
    for (let j = 0; j < m; j++) {
      if (s.shadow[j] === 1) continue;
      const name = s.names[j];
      let first = true;
      for (let q = 0; q < j && first; q++) if (s.names[q] === name) first = false;
      if (!first) continue;
      let total = s.costs[j];
      for (let q = j + 1; q < m; q++) {
        if (s.names[q] === name) {
          total += s.costs[q];
          repeated = true;
        }
      }
      const kind = s.kinds[j] as Kind;
      if (s.present[j] === 1) decide(kind, s.numbers[j], s.a[j], s.b[j], t, total);
      else decide(kind, s.numbers[j], freshAmount(kind, s.numbers[j]), freshInstant(kind, t), t, total);
      if (step.passAt > worst) worst = step.passAt;
    }
    if (worst === Infinity) return Infinity;
    if (repeated && this.#stage(m, worst) >= 0) worst = firstAfter(worst, (x) => this.#stage(m, x) < 0);
    return until(now, t, worst);
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

  #outageAtomic(outcome: Outcome, call: SetCall): RedisAtomicReport {
    const path = this.#outagePath(outcome);
    const c = call.charges;
    const charges: QuotaCharge[] = [];
    const kinds: number[] = [];
    for (let i = 0; i < call.n; i++) {
      charges.push({
        key: c[i * 5] as QuotaKey,
        limit: c[i * 5 + 1] as string,
        cost: c[i * 5 + 2] as number,
        kind: KIND_NAMES[c[i * 5 + 3] as Kind],
      });
      kinds.push(c[i * 5 + 3] as Kind);
    }
    const report = this.#fallback.atomic(charges, kinds, call.now, call.commit);
    const decisions = report.decisions.map((d, i) =>
      this.#fromLocal(d, (c[i * 5 + 4] as Rule | undefined)?.shadow === true, path),
    );
    return { ...report, decisions, path, replayed: false };
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
    return foldChain(
      charges,
      report,
      limit,
      cost,
      (allowed, reason, cost, remaining, retryAfter, resetAfter, trace) =>
        new RedisVerdict(allowed, reason, cost, remaining, retryAfter, resetAfter, trace, report.path, undefined),
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
    const rule = this.#rules.get(limit);
    if (rule === undefined) throw new RangeError(`lease: no limit named ${JSON.stringify(limit)}`);
    const stateKey = this.#stateKey(BUCKET, limit, key);
    const { capacity, perMs, bucketSlack } = rule.numbers;
    const [cap, rate] = rule.args[BUCKET];
    return new Lease(async (op, now, n) => {
      const outcome = await this.#runner.run(
        leaseScript,
        [stateKey],
        [op === "take" ? "t" : "g", this.#serverClock ? "" : String(now), this.#margin, String(n), cap, rate],
      );
      if (outcome.status !== ANSWERED) {
        if (outcome.status === FAILED && outcome.error instanceof ScriptError) throw outcome.error;
        return undefined;
      }
      const r = bytes(outcome.reply);
      const granted = r.readDoubleLE(0);
      const tokens = r.readDoubleLE(8);
      const t = r.readDoubleLE(16);
      // When a dry bucket holds one token again, from the caller's clock (the in-process formula).
      const from = this.#serverClock ? t : now;
      const retryAfter =
        granted === 0 && op === "take" ? until(from, t, bucketReady(tokens, t, t, 1, perMs, capacity, bucketSlack)) : 0;
      return { granted, retryAfter };
    }, options);
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
    const { keys, nows, costs } = readInputs(inputs, isKey);
    const n = keys.length;
    const rule = this.#rules.get(limit);
    const decisions = new Array<RedisDecision>(n);
    if (rule === undefined) {
      for (let i = 0; i < n; i++) decisions[i] = this.#unknown(k, limit, costs[i]);
    } else {
      // Groups of input indexes, each sent as one call: by slot on a cluster, else in order.
      const names = new Array<string>(n);
      for (let i = 0; i < n; i++) names[i] = this.#stateKey(k, limit, keys[i]);
      const groups = new Map<number, number[]>();
      for (let i = 0; i < n; i++) {
        const g = this.policy.cluster ? slotOf(names[i]) : 0;
        let list = groups.get(g);
        if (list === undefined) groups.set(g, (list = []));
        list.push(i);
      }
      const calls: Promise<void>[] = [];
      for (const list of groups.values()) {
        for (let s = 0; s < list.length; s += BATCH_CHUNK)
          calls.push(this.#batchCall(k, rule, list.slice(s, s + BATCH_CHUNK), keys, nows, costs, names, decisions));
      }
      await Promise.all(calls);
    }
    let allowed = 0;
    for (const d of decisions) if (d.allowed) allowed++;
    return { total: n, allowed, denied: n - allowed, decisions };
  }

  async #batchCall(
    kind: Kind,
    rule: Rule,
    list: readonly number[],
    keys: readonly QuotaKey[],
    nows: Float64Array,
    costs: Float64Array,
    names: readonly string[],
    out: RedisDecision[],
  ): Promise<void> {
    const a = rule.args[kind];
    const first = nows[list[0]];
    const server = this.#serverClock;
    const callKeys = new Array<string>(list.length);
    const args = new Array<string>(6 + 2 * list.length);
    args[0] = server ? "" : String(first);
    args[1] = "s";
    args[2] = "0";
    args[3] = this.#margin;
    args[4] = a[0];
    args[5] = a[1];
    for (let x = 0; x < list.length; x++) {
      const i = list[x];
      callKeys[x] = names[i];
      args[6 + 2 * x] = costArg(costs[i], false); // in a batch every input stands alone
      args[7 + 2 * x] = server || nows[i] === first ? "" : String(nows[i]);
    }
    const outcome = await this.#runner.run(quota, callKeys, args);
    if (outcome.status !== ANSWERED) {
      for (const i of list) out[i] = this.#outageSingle(outcome, kind, keys[i], rule, nows[i], costs[i]);
      return;
    }
    // The inputs replayed here as the script took them: each at its own now, never behind the
    // batch's clock nor a bucket's reading, on the state the earlier ones left.
    const r = bytes(outcome.reply);
    const base = r.readDoubleLE(1);
    const numbers = rule.numbers;
    const slot = new Map<string, number>();
    const sa: number[] = [];
    const sb: number[] = [];
    let clock = base;
    for (let x = 0; x < list.length; x++) {
      const i = list[x];
      const name = names[i];
      const now = server ? base : nows[i];
      let t = now < clock ? clock : now;
      let at = slot.get(name);
      if (at === undefined) {
        at = sa.length;
        slot.set(name, at);
        const v = r.readDoubleLE(9 + at * 16);
        sa.push(v === v ? v : freshAmount(kind, numbers));
        sb.push(v === v ? r.readDoubleLE(17 + at * 16) : freshInstant(kind, t));
      }
      if (kind === BUCKET && sb[at] > t) t = sb[at];
      clock = t;
      const code = decide(kind, numbers, sa[at], sb[at], t, costs[i]);
      if (code === OK) {
        sa[at] = step.amount;
        sb[at] = step.instant;
      }
      out[i] = this.#verdict(kind, rule, costs[i], code, now, t, "store");
    }
  }
}
