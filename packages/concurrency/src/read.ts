// Readers of untrusted snapshot data: each returns the value it checked or throws a
// SnapshotError naming the path, so a reader builds fresh state and a bad snapshot changes nothing.
import { check } from "@tideward/time/internal";
import { SnapshotError } from "./errors";

/** Throws a {@link SnapshotError} for `path`. */
export function fail(path: string, problem: string): never {
  throw new SnapshotError(path, problem);
}

/**
 * An own-data-property record with exactly `fields`: a plain object (or one without a
 * prototype), no getters, no other keys (so `"__proto__"` or `"constructor"` arriving as own
 * keys are refused).
 */
export function record(value: unknown, path: string, fields: readonly string[]): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    fail(path, `must be an object, got ${check.describe(value)}`);
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

/** A number from `min` to `max`, both included. */
export function within(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== "number" || !(value >= min && value <= max))
    fail(path, `must be a number from ${min} to ${max}, got ${check.describe(value)}`);
  return value;
}

/** A whole number from `min` to `max`, both included. */
export function whole(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max)
    fail(path, `must be a whole number from ${min} to ${max}, got ${check.describe(value)}`);
  return value;
}
