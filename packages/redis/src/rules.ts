// A limit as the Redis engine holds it (its numbers, how a charge of it crosses the wire, its
// traces), and the decisions made from a step's figures: the one shape every answer has.
import { until } from "@tideward/limiters/math";
import type { Decision, LimitSpec, Reason } from "@tideward/quota-engine";
import { KIND_NAMES, Rule as Numbers, OK, step } from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import { RedisVerdict } from "./decision";
import type { Shadow } from "./decision";
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
}

/** The rule of `spec` (the registry's checked copy). */
export function ruleOf(spec: LimitSpec, shadow: boolean): Rule {
  const numbers = new Numbers(spec);
  const wire: (readonly [number, number])[] = [
    // A bucket of one number: its capacity and a half (so the script tells it apart), its tick.
    numbers.oneNumber ? [spec.capacity + 0.5, numbers.tick] : [spec.capacity, numbers.perMs],
    [-spec.capacity, spec.align ? -spec.window : spec.window],
    [spec.burst, -numbers.interval],
  ];
  // Shortest round-trip decimals: the script reads back these very doubles.
  const args = wire.map(([a, b]) => [String(a), String(b)] as const);
  const traces = KIND_NAMES.flatMap((kind) => REASONS.map((r) => Object.freeze([`${kind} ${spec.name}: ${r}`])));
  return { spec, numbers, shadow, wire, args, traces };
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

/** The decision of a step just taken (its figures in `step`), with its waits from the caller's `now`. */
export function verdict(
  kind: Kind,
  rule: Rule,
  cost: number,
  code: number,
  now: number,
  t: number,
  path: Path,
  replayed: boolean,
): RedisVerdict {
  const trace = rule.traces[kind * 5 + code];
  const remaining = step.remaining;
  const retry = code === OK ? 0 : until(now, t, step.passAt);
  const reset = until(now, t, step.resetAt);
  if (rule.shadow) {
    const shadow: Shadow = { allowed: code === OK, reason: REASONS[code], retryAfter: retry };
    return new RedisVerdict(true, "ok", cost, remaining, 0, reset, trace, path, shadow, replayed);
  }
  return new RedisVerdict(code === OK, REASONS[code], cost, remaining, retry, reset, trace, path, undefined, replayed);
}

/** The decision of a charge to a limit of no such name. */
export function unknownVerdict(kind: Kind, limit: string, cost: number): RedisVerdict {
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
    false,
  );
}

/** A decision of the in-process outage engine, as a Redis decision of `path`. */
export function fromLocal(d: Decision, shadow: boolean, path: Path): RedisVerdict {
  if (shadow)
    return new RedisVerdict(
      true,
      "ok",
      d.cost,
      d.remaining,
      0,
      d.resetAfter,
      d.trace,
      path,
      { allowed: d.allowed, reason: d.reason, retryAfter: d.retryAfter },
      false,
    );
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
    false,
  );
}
