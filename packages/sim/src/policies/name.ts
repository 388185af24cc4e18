import { check } from "@tideward/time/internal";

/**
 * A policy's name, `name` as given (`fallback` when left out), checked to be text: results name
 * the policy by it, and its refusals by it (or by it and a suffix).
 *
 * @param what - how messages name the option: `"policy.bucket name"`
 */
export function nameOf(name: unknown, fallback: string, what: string): string {
  if (name === undefined) return fallback;
  if (typeof name !== "string") throw new TypeError(`${what} must be text, got ${check.describe(name)}`);
  return name;
}
