// The argument checks the engine's entry points share: the single checks, charge sets, batches and
// chains. Each is a fast comparison; the error (naming the argument, the value and what was
// expected) is built only when it fails.
import { MAX_INSTANT, badInstant } from "@tideward/limiters/math";
import { check } from "@tideward/time/internal";
import type { ChargeKind, EvaluationInput } from "./charge";
import { isQuotaKey } from "./key";
import type { QuotaKey } from "./key";
import { kindOf } from "./kinds";
import type { Kind } from "./kinds";

/** Whether `now` is a clock reading the engine accepts: a number within ±2^45 ms. */
export function isInstant(now: unknown): now is number {
  return typeof now === "number" && now <= MAX_INSTANT && now >= -MAX_INSTANT;
}

/** Whether `cost` is a cost the engine accepts: a whole number of at least 1 (below 2^53). */
export function isCost(cost: unknown): cost is number {
  return Number.isSafeInteger(cost) && (cost as number) >= 1;
}

export function keyError(key: unknown, what: string): TypeError {
  return new TypeError(
    `${what} must be a QuotaKey (new QuotaKey(scope, subject, resource)), got ${check.describe(key)}`,
  );
}

export function nowError(now: unknown, what = "now"): Error {
  return badInstant(now, what);
}

export function costError(cost: unknown, what: string): Error {
  return typeof cost === "number"
    ? new RangeError(`${what} must be a whole number of at least 1, got ${check.describe(cost)}`)
    : new TypeError(`${what} must be a number, got ${typeof cost} ${check.describe(cost)}`);
}

export function limitError(limit: unknown, what: string): TypeError {
  return new TypeError(`${what} must be a limit name (a string), got ${typeof limit} ${check.describe(limit)}`);
}

/** A field of `what` not among `known`, with the closest that is. */
export function strayError(field: string, known: readonly string[], what: string): TypeError {
  const near = check.closest(field, known);
  return new TypeError(
    `${what} has no field ${JSON.stringify(field)}${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}`,
  );
}

export function kindError(kind: unknown, what: string): TypeError {
  return new TypeError(`${what} must be "bucket", "window" or "gcra", got ${check.describe(kind)}`);
}

/** Throws unless `key`, `now` and `cost` are what a check takes (the limit name is checked once looked up). */
export function checkArgs(key: unknown, now: unknown, cost: unknown): void {
  if (!isQuotaKey(key)) throw keyError(key, "key");
  if (!isInstant(now)) throw nowError(now);
  if (!isCost(cost)) throw costError(cost, "cost");
}

/** The {@link Kind} of `kind`, or the error naming `what`. */
export function readKind(kind: unknown, what: string): Kind {
  const k = kindOf(kind);
  if (k === -1) throw kindError(kind, what);
  return k;
}

/** A chain's arguments, checked: what `chain` and `checkHierarchy` take. */
export function checkChainArgs(key: unknown, limit: unknown, cost: unknown, kind: ChargeKind): void {
  if (!isQuotaKey(key)) throw keyError(key, "key");
  if (typeof limit !== "string") throw limitError(limit, "limit");
  if (!isCost(cost)) throw costError(cost, "cost");
  readKind(kind, "kind");
}

/** A batch's inputs, each read once and checked, before any is evaluated. */
export interface BatchInputs {
  readonly keys: QuotaKey[];
  /** Milliseconds on the caller's clock, by input. */
  readonly nows: Float64Array;
  readonly costs: Float64Array;
}

/** The most inputs a batch may hold: 2^24, some 400 MB of arrays while it is read. */
export const MAX_INPUTS = 2 ** 24;

/**
 * Reads every input of a batch once into arrays, checking each field there: nothing later reads
 * the caller's objects again, so a getter gets one say. `isKey` checks a key: the engine's brand
 * check, or the Redis engine's own (a brand check holds only within one build of this module).
 *
 * @throws TypeError or RangeError naming `inputs[i]` and the field
 */
export function readInputs(inputs: unknown, isKey: (key: unknown) => key is QuotaKey): BatchInputs {
  if (!Array.isArray(inputs))
    throw new TypeError(`inputs must be an array of EvaluationInput, got ${check.describe(inputs)}`);
  const n = inputs.length;
  // Before the arrays are made: a sparse array's length costs its maker nothing.
  if (n > MAX_INPUTS) throw new RangeError(`inputs must hold at most ${MAX_INPUTS} inputs (split the batch), got ${n}`);
  const keys = new Array<QuotaKey>(n);
  const nows = new Float64Array(n);
  const costs = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const input = inputs[i] as EvaluationInput | undefined;
    if (input === null || typeof input !== "object")
      throw new TypeError(`inputs[${i}] must be an EvaluationInput, got ${check.describe(input)}`);
    const { key, now, cost = 1 } = input;
    if (!isKey(key)) throw keyError(key, `inputs[${i}].key`);
    if (!isInstant(now)) throw nowError(now, `inputs[${i}].now`);
    if (!isCost(cost)) throw costError(cost, `inputs[${i}].cost`);
    keys[i] = key;
    nows[i] = now;
    costs[i] = cost;
  }
  return { keys, nows, costs };
}

/** What a caught value says, for a message: an Error's message, else the value; never throws. */
export function describeError(e: unknown): string {
  try {
    return e instanceof Error ? String(e.message) : check.describe(e);
  } catch {
    return typeof e;
  }
}

/** Throws unless `key`, `limit` and `now` are what an override call takes. */
export function checkOverrideArgs(key: unknown, limit: unknown, now: unknown): void {
  if (!isQuotaKey(key)) throw keyError(key, "key");
  if (typeof limit !== "string") throw limitError(limit, "limit");
  if (!isInstant(now)) throw nowError(now);
}
