// The Redis engine's configuration: its limits, links and overrides, held in process (every
// instance makes the same changes), each limit as a Rule with the version its keys' names carry.
// A change writes nothing to Redis but an override's move; see RedisQuotaEngine's replaceLimit.
import { QuotaEngine } from "@tideward/quota-engine";
import type {
  ChargeKind,
  LimitSpec,
  LinkCode,
  OverrideFields,
  QuotaCharge,
  QuotaKey,
  QuotaLink,
  Result,
} from "@tideward/quota-engine";
import { isInstant, keyError, nowError, parseLimit, readKind, refused } from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import { check } from "@tideward/time/internal";
import { isKey } from "./call-options";
import type { LimitOptions, ReplaceOptions } from "./call-options";
import type { Fallback } from "./fallback";
import type { Names } from "./names";
import { overrideHash, ruleOf } from "./rules";
import type { Rule } from "./rules";
import { FAILED, ScriptError } from "./runner";
import type { Runner } from "./runner";
import { move } from "./scripts";
import { Section, live, nextVersion, readVersion, succeed } from "./versions";
import { moveWire } from "./wire";

/** What the book works with: the engine's connection, names and outage mode. */
export interface BookParts {
  readonly runner: Runner;
  readonly names: Names;
  readonly fallback: Fallback;
  readonly serverClock: boolean;
  /** The expiry margin (ms), as a number and as the scripts read it. */
  readonly margin: number;
  readonly marginArg: string;
}

/** The limits of one Redis engine, by name, and the operations that change them. */
export class LimitBook {
  /** Each limit's rule, by name, in the order added. */
  readonly rules = new Map<string, Rule>();
  // The version each removed limit had, by name: one added again under that name starts after it.
  readonly #retired = new Map<string, number>();
  // Validates limits and links and builds hierarchy chains exactly as the in-process engine does.
  readonly #registry = new QuotaEngine();
  readonly #p: BookParts;

  constructor(parts: BookParts) {
    this.#p = parts;
  }

  add(spec: LimitSpec, options: LimitOptions | undefined): Result<"duplicate_limit" | "invalid_limit"> {
    const o = check.options(options, ["shadow", "version"], "RedisQuotaEngine.addLimit");
    const shadow = o.shadow ?? false;
    if (typeof shadow !== "boolean")
      throw new TypeError(
        `RedisQuotaEngine.addLimit shadow must be a boolean, got ${typeof shadow} ${check.describe(shadow)}`,
      );
    const what = "RedisQuotaEngine.addLimit version";
    const given = o.version === undefined ? undefined : readVersion(o.version, what);
    // Read once here (the registry reads this frozen copy), so the version is checked by name first.
    const s = parseLimit(spec);
    if (typeof s === "string") return refused("invalid_limit", s);
    // A name removed before starts past the versions it had, so its keys start fresh.
    const retired = this.rules.has(s.name) ? undefined : this.#retired.get(s.name);
    const version =
      retired === undefined
        ? (given ?? 0)
        : nextVersion(given, retired, what, `the version ${JSON.stringify(s.name)} had when removed`);
    const result = this.#registry.addLimit(s);
    if (result.ok) {
      this.rules.set(s.name, ruleOf(s, shadow, version));
      this.#p.fallback.add(s);
    }
    return result;
  }

  replace(
    spec: LimitSpec,
    now: number,
    options: ReplaceOptions | undefined,
  ): Result<"unknown_limit" | "invalid_limit"> {
    if (!isInstant(now)) throw nowError(now);
    const what = "RedisQuotaEngine.replaceLimit version";
    const v = check.options(options, ["version"], "RedisQuotaEngine.replaceLimit").version;
    const given = v === undefined ? undefined : readVersion(v, what);
    // Read once here (the registry reads this frozen copy), so the version is checked by name first.
    const s = parseLimit(spec);
    if (typeof s === "string") return refused("invalid_limit", s);
    const o = this.rules.get(s.name);
    const version =
      o === undefined ? 0 : nextVersion(given, o.version, what, `the version of ${JSON.stringify(s.name)} now`);
    const result = this.#registry.replaceLimit(s, now);
    if (!result.ok || o === undefined) return result;
    const margin = this.#p.margin;
    const next = ruleOf(s, o.shadow, version);
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
    this.rules.set(s.name, next);
    this.#p.fallback.replace(s, now);
    return result;
  }

  remove(name: string): Result<"unknown_limit"> {
    const result = this.#registry.removeLimit(name);
    if (result.ok) {
      const rule = this.rules.get(name) as Rule;
      this.rules.delete(name);
      this.#retired.set(name, rule.version);
      this.#p.fallback.remove(name);
    }
    return result;
  }

  async setOverride(
    key: QuotaKey,
    limit: string,
    fields: OverrideFields,
    now: number,
  ): Promise<Result<"unknown_limit" | "invalid_override" | "override_limit">> {
    if (!isKey(key)) throw keyError(key, "key");
    const result = this.#registry.setOverride(key, limit, fields, now);
    if (!result.ok) return result;
    const base = this.rules.get(limit) as Rule;
    const from = base.overrides?.get(key.id) ?? base;
    const os = this.#registry.override(key, limit) as LimitSpec;
    const to = ruleOf(os, base.shadow, base.version, key, overrideHash(os));
    if (from !== base && from.suffix === to.suffix) {
      // The same numbers again: the same names, and their earlier versions still to read.
      to.versions = from.versions;
      to.readUntil = from.readUntil;
    }
    (base.overrides ??= new Map()).set(key.id, to);
    this.#p.fallback.override(key, os, limit, now);
    await this.#move(key, from, to, now);
    return result;
  }

  async removeOverride(
    key: QuotaKey,
    limit: string,
    now: number,
  ): Promise<Result<"unknown_limit" | "unknown_override">> {
    if (!isKey(key)) throw keyError(key, "key");
    const result = this.#registry.removeOverride(key, limit, now);
    if (!result.ok) return result;
    const base = this.rules.get(limit) as Rule;
    const from = base.overrides?.get(key.id) as Rule;
    base.overrides?.delete(key.id);
    if (base.overrides?.size === 0) base.overrides = undefined;
    this.#p.fallback.override(key, undefined, limit, now);
    await this.#move(key, from, base, now);
    return result;
  }

  override(key: QuotaKey, limit: string): LimitSpec | undefined {
    return this.#registry.override(key, limit);
  }

  // Moves `key`'s state of every kind from the names of `from` to those of `to` at `now` (move.lua).
  async #move(key: QuotaKey, from: Rule, to: Rule, now: number): Promise<void> {
    const names = this.#p.names;
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
    const wire = moveWire(
      { into, from: out, rules: [from, to], now, versions },
      this.#p.serverClock,
      this.#p.marginArg,
    );
    const outcome = await this.#p.runner.run(move, wire.keys, wire.args);
    if (outcome.status === FAILED && outcome.error instanceof ScriptError) throw outcome.error;
  }

  limit(name: string): LimitSpec | undefined {
    return this.rules.get(name)?.spec;
  }

  limits(): LimitSpec[] {
    return [...this.rules.values()].map((r) => r.spec);
  }

  addLink(link: QuotaLink): Result<LinkCode> {
    return this.#registry.addLink(link);
  }

  chain(key: QuotaKey, limit: string, cost: number, kind: ChargeKind): QuotaCharge[] {
    return this.#registry.chain(key, limit, cost, kind);
  }

  redisKey(key: QuotaKey, limit: string, kind: ChargeKind): string {
    if (!isKey(key)) throw keyError(key, "key");
    const k = readKind(kind, "kind");
    const base = this.rules.get(limit);
    const rule = base?.overrides?.get(key.id) ?? base;
    const names = this.#p.names;
    return names.state(names.tag(key), k, limit, key, rule?.numbers.oneNumber, rule?.suffix);
  }
}
