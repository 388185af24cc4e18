// A limit as the Redis engine holds it (its numbers, how a charge of it crosses the wire, its
// traces), and the decisions made from a step's figures: the one shape every answer has.
import { until } from "@tideward/limiters/math";
import type { Decision, LimitSpec, QuotaKey, Reason } from "@tideward/quota-engine";
import { KIND_NAMES, Rule as Numbers, OK } from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import { RedisVerdict } from "./decision";
import type { Path } from "./policy";
import { ScriptError } from "./runner";

export const REASONS: readonly Reason[] = ["ok", "exhausted", "too_large", "unknown_limit", "not_committed"];

/** A limit added to a Redis engine. */
export interface Rule {
  readonly spec: LimitSpec;
  readonly numbers: Numbers;
  readonly shadow: boolean;
  /** Per kind, a charge's two numbers as the script reads them, their signs saying the kind (see quota.lua). */
  readonly wire: readonly (readonly [number, number])[];
  /** {@link Rule.wire} as sent: the shortest decimals that read back as those doubles. */
  readonly args: readonly (readonly [string, string])[];
  /** The one-entry traces, by `kind · 5 + code`. */
  readonly traces: readonly (readonly string[])[];
  /** Its version: as given, else how many times it was replaced (or added again after its removal). */
  readonly version: number;
  /**
   * What the names of its keys' state carry besides the limit's name: `""` at version 0 (a limit
   * never replaced), else its version (and, for an override, the override's) — see {@link versionPart}.
   */
  readonly suffix: string;
  /**
   * The versions before this one whose names may still hold a key's state, newest first (see
   * versions.ts); empty for a limit never replaced here (added at any version), and once every
   * earlier state must have expired.
   */
  versions: readonly Link[];
  /** The caller's clock (ms) after which no earlier version is read: the latest of `versions`' `until`. */
  readUntil: number;
  /** A limit's overrides, by key id; undefined while it has none (and for an override). */
  overrides: Map<string, Rule> | undefined;
  /** For an override: the key it is for; undefined for a limit. */
  readonly own: QuotaKey | undefined;
}

/** An earlier version of a limit, as a key's state may still be held under its names. */
export interface Link {
  /** Its names' {@link Rule.suffix}. */
  readonly suffix: string;
  readonly numbers: Numbers;
  /** Per kind, its numbers as sent (see {@link Rule.args}). */
  readonly args: readonly (readonly [string, string])[];
  /** Per kind, whether the replace that ended it kept that kind's numbers (then nothing is re-based). */
  readonly same: readonly boolean[];
  /** The instant it was replaced at (ms), as sent. */
  readonly at: string;
  /** The caller's clock (ms) after which no state of it can be left. */
  readonly until: number;
}

/**
 * The part of a state's name that says its limit's version: `""` at version 0 with no override,
 * else `@` + the version (+ `o` and the override's hash) + `:`. A name without it has a digit after
 * its kind's letter, so the two never meet.
 */
export function versionPart(version: number, override?: string): string {
  return version === 0 && override === undefined
    ? ""
    : "@" + version + (override === undefined ? "" : "o" + override) + ":";
}

/**
 * The part of an override's names that tells it apart (see {@link versionPart}): 8 hex digits of
 * a 32-bit FNV-1a hash of its numbers. Two overrides of one key in a row with other numbers have
 * other names; the state moves between them (move.lua), so a name met again holds nothing old.
 */
export function overrideHash(spec: LimitSpec): string {
  const text = `${spec.capacity},${spec.refill},${spec.window},${spec.burst},${spec.align ? 1 : 0}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** The rule of `spec` (the registry's checked copy). */
export function ruleOf(spec: LimitSpec, shadow: boolean, version = 0, own?: QuotaKey, override?: string): Rule {
  const numbers = new Numbers(spec);
  const wire: (readonly [number, number])[] = [
    // A bucket of one number: its capacity and a half (so the script tells it apart), its tick.
    numbers.oneNumber ? [spec.capacity + 0.5, numbers.tick] : [spec.capacity, numbers.perMs],
    [-spec.capacity, spec.align ? -spec.window : spec.window],
    [spec.burst, -numbers.interval],
  ];
  // Shortest round-trip decimals: the script reads back these very doubles.
  const args = wire.map(([a, b]) => [String(a), String(b)] as const);
  const label = own === undefined ? spec.name : `${spec.name} (override)`;
  const traces = KIND_NAMES.flatMap((kind) => REASONS.map((r) => Object.freeze([`${kind} ${label}: ${r}`])));
  return {
    spec,
    numbers,
    shadow,
    wire,
    args,
    traces,
    version,
    suffix: versionPart(version, override),
    versions: [],
    readUntil: -Infinity,
    overrides: undefined,
    own,
  };
}

/** A charge's cost as the script reads it: negative for a shadow limit's (never refusing a set). */
export function costArg(cost: number, shadow: boolean): string {
  return shadow ? String(-cost) : cost === 1 ? "1" : String(cost);
}

/** The error of a script whose decision the in-process formulas do not reproduce. */
export function disagree(script: string): ScriptError {
  return new ScriptError(
    script,
    new Error("the script's decision and the in-process formulas disagree (a script of another version?)"),
  );
}

/** A step's figures: the quota engine's `step` after a decide, or a set's staged ones. */
export interface Figures {
  /** Whole units remaining after the step. */
  readonly remaining: number;
  /** The instant (ms) at which the same charge would pass; `Infinity`: never. */
  readonly passAt: number;
  /** The instant (ms) at which the key is back to a fresh key's state. */
  readonly resetAt: number;
}

/** What a decision is made of: the limit and the charge, what its step came to, and the clocks. */
export interface Charged {
  readonly rule: Rule;
  readonly kind: Kind;
  /** The charge's cost, in units. */
  readonly cost: number;
  /** What the step came to: OK, EXHAUSTED, … (an index into {@link REASONS}). */
  readonly code: number;
  readonly figures: Figures;
  /** The caller's clock (ms): the waits count from it. */
  readonly now: number;
  /** The instant (ms) the limit was read at: `now`, or a bucket's later reading. */
  readonly at: number;
  readonly path: Path;
  readonly replayed: boolean;
}

/** The decision of a step just taken, with its waits from the caller's clock. */
export function verdict(c: Charged): RedisVerdict {
  const { rule, code, figures, now, at } = c;
  const trace = rule.traces[c.kind * 5 + code];
  const retry = code === OK ? 0 : until(now, at, figures.passAt);
  const reset = until(now, at, figures.resetAt);
  if (rule.shadow)
    return new RedisVerdict({
      allowed: true,
      reason: "ok",
      cost: c.cost,
      remaining: figures.remaining,
      retryAfter: 0,
      resetAfter: reset,
      trace,
      path: c.path,
      shadow: { allowed: code === OK, reason: REASONS[code], retryAfter: retry },
      replayed: c.replayed,
    });
  return new RedisVerdict({
    allowed: code === OK,
    reason: REASONS[code],
    cost: c.cost,
    remaining: figures.remaining,
    retryAfter: retry,
    resetAfter: reset,
    trace,
    path: c.path,
    shadow: undefined,
    replayed: c.replayed,
  });
}

/** The decision of a charge to a limit of no such name. */
export function unknownVerdict(kind: Kind, limit: string, cost: number): RedisVerdict {
  return new RedisVerdict({
    allowed: false,
    reason: "unknown_limit",
    cost,
    remaining: 0,
    retryAfter: Infinity,
    resetAfter: 0,
    trace: [`${KIND_NAMES[kind]} ${limit}: unknown_limit (no limit of that name)`],
    path: "store",
    shadow: undefined,
    replayed: false,
  });
}

/** A decision of the in-process outage engine, as a Redis decision of `path`. */
export function fromLocal(d: Decision, shadow: boolean, path: Path): RedisVerdict {
  if (shadow)
    return new RedisVerdict({
      ...d,
      allowed: true,
      reason: "ok",
      retryAfter: 0,
      path,
      shadow: { allowed: d.allowed, reason: d.reason, retryAfter: d.retryAfter },
      replayed: false,
    });
  return new RedisVerdict({ ...d, path, shadow: undefined, replayed: false });
}
