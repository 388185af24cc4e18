import { check } from "@tideward/time/internal";

/**
 * A boolean option: `fallback` when it is left out, or a `TypeError` naming `what` and the value
 * for anything but `true` or `false` (a `"no"` would otherwise read as true, or be ignored).
 */
export function flag(value: unknown, what: string, fallback = false): boolean {
  if (value === undefined) return fallback;
  if (typeof value === "boolean") return value;
  throw new TypeError(`${what} must be true or false, got ${check.describe(value)}`);
}
