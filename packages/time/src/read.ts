// Readers of an untrusted snapshot (one read back from storage): each returns the value it checked
// or throws a SnapshotError naming the path, so a reader builds fresh state and a bad snapshot
// changes nothing. And the options of a restore, checked as every other argument is.
import { describe, finite as finiteArgument, options as optionsArgument } from "./check";
import { SnapshotError } from "./snapshot";
import type { RestoreOptions } from "./snapshot";

/** Throws a {@link SnapshotError} for `path`. */
export function fail(path: string, problem: string): never {
  throw new SnapshotError(path, problem);
}

/**
 * Runs `read` over an untrusted value. A Proxy (a revoked one included) can throw from any
 * reflection on it, anywhere in the tree: what reading it throws is the snapshot's fault, so it is
 * refused as such, never passed on.
 */
export function guarded<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (e instanceof SnapshotError) throw e;
    return fail("snapshot", `could not be read: ${e instanceof Error ? e.message : describe(e)}`);
  }
}

/**
 * An own-data-property record with exactly `fields`: a plain object (or one without a
 * prototype), no getters, no other keys (so `"__proto__"` or `"constructor"` arriving as own
 * keys are refused).
 */
export function record(value: unknown, path: string, fields: readonly string[]): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    fail(path, `must be an object, got ${describe(value)}`);
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) fail(path, "must be a plain object");
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key !== "string" || !fields.includes(key))
      fail(path, `has an unexpected field ${typeof key === "string" ? JSON.stringify(key) : String(key)}`);
  }
  const out = Object.create(null) as Record<string, unknown>;
  for (const field of fields) {
    const d = Object.getOwnPropertyDescriptor(value, field);
    if (d === undefined) fail(`${path}.${field}`, "is missing");
    else if (!("value" in d)) fail(`${path}.${field}`, "must be a plain value, not an accessor");
    else out[field] = d.value;
  }
  return out;
}

/**
 * A plain array of `min` to `max` elements with no holes, its elements read once each (as data
 * properties, so no getter runs). The length is checked before anything is read.
 */
export function list(value: unknown, path: string, min: number, max: number): unknown[] {
  if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype)
    fail(path, `must be an array, got ${describe(value)}`);
  const array = value as unknown[];
  const n = array.length;
  if (n < min || n > max)
    fail(path, `must hold ${min === max ? min : `${min} to ${max}`} ${max === 1 ? "element" : "elements"}, got ${n}`);
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const d = Object.getOwnPropertyDescriptor(array, i);
    if (d === undefined) fail(`${path}[${i}]`, "is missing (a hole)");
    else if (!("value" in d)) fail(`${path}[${i}]`, "must be a plain value, not an accessor");
    else out.push(d.value);
  }
  return out;
}

/** A number from `min` to `max`, both included (so never NaN, and finite when both bounds are). */
export function within(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== "number" || !(value >= min && value <= max))
    fail(path, `must be a number from ${min} to ${max}, got ${describe(value)}`);
  return value;
}

/** A whole number from `min` to `max`, both included. */
export function whole(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max)
    fail(path, `must be a whole number from ${min} to ${max}, got ${describe(value)}`);
  return value;
}

/** A finite number. */
export function finite(value: unknown, path: string): number {
  if (typeof value !== "number" || !Number.isFinite(value))
    fail(path, `must be a finite number, got ${describe(value)}`);
  return value;
}

/**
 * The root of a snapshot: a record with `version`, `kind`, `clock` and `fields`, of this
 * `version` and `kind` (a breaker's snapshot handed to a shedder is refused by its kind). The
 * version is checked before the fields, so a snapshot of another version is refused as such
 * rather than for a field that version has.
 */
export function root(
  value: unknown,
  kind: string,
  version: number,
  fields: readonly string[],
): Record<string, unknown> & { clock: number } {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const d = Object.getOwnPropertyDescriptor(value, "version");
    if (d !== undefined && "value" in d && d.value !== version)
      fail("snapshot.version", `must be ${version}, got ${describe(d.value)}`);
  }
  const r = record(value, "snapshot", ["version", "kind", "clock", ...fields]);
  if (r.version !== version) fail("snapshot.version", `must be ${version}, got ${describe(r.version)}`);
  if (r.kind !== kind)
    fail("snapshot.kind", `must be ${JSON.stringify(kind)} (what this restores), got ${describe(r.kind)}`);
  finite(r.clock, "snapshot.clock");
  return r as Record<string, unknown> & { clock: number };
}

/** A restore's options, checked: the age given (undefined when none) or `sameClock`. */
export interface Restoring {
  readonly age: number | undefined;
  readonly sameClock: boolean;
}

/**
 * Checks a restore's `now` and options as arguments (a `TypeError` or `RangeError` naming them,
 * before the snapshot is read).
 *
 * @param owner - how messages name the method, such as `"Breaker.restore"`
 */
export function restoring(now: unknown, options: RestoreOptions | undefined, owner: string): Restoring {
  finiteArgument(now, `${owner} now (ms)`);
  const o = optionsArgument(options, ["age", "sameClock"], owner);
  const sameClock = o.sameClock ?? false;
  if (typeof sameClock !== "boolean")
    throw new TypeError(`${owner} sameClock must be true or false, got ${describe(sameClock)}`);
  if (o.age !== undefined) {
    if (sameClock)
      throw new TypeError(`${owner} takes age or sameClock, not both: with sameClock the age is now − snapshot.clock`);
    const age = finiteArgument(o.age, `${owner} age (ms)`);
    if (age < 0) throw new RangeError(`${owner} age (ms) must be 0 or more, got ${describe(age)}`);
  }
  return { age: o.age, sameClock };
}

/** How long before `now` a snapshot taken at `clock` was taken, in milliseconds: 0 or more. */
export function ageOf(r: Restoring, now: number, clock: number): number {
  if (r.sameClock) return now > clock ? now - clock : 0;
  return r.age ?? 0;
}
