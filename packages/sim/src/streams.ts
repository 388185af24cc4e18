import { seededRandom } from "@tideward/time";
import { check } from "@tideward/time/internal";
import type { Random } from "@tideward/time";

/** The largest seed: seeds are the 2^32 whole numbers from 0, each its own run. */
export const MAX_SEED = 4_294_967_295;

/**
 * A seed, checked: a whole number from 0 to 2^32 − 1. Anything else is refused rather than
 * folded onto one of them, so two distinct seeds never give the same run.
 */
export function seedOf(value: unknown, what: string): number {
  const n = check.finite(value, what);
  if (!Number.isInteger(n) || n < 0 || n > MAX_SEED)
    throw new RangeError(`${what} must be a whole number from 0 to ${MAX_SEED}, got ${check.describe(n)}`);
  return n;
}

// FNV-1a over the name's UTF-16 code units, then one splitmix32 round with the seed: a stream's
// seed depends on the run's seed and its own name only, never on how many other streams exist.
function mix(seed: number, name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  let z = (h ^ Math.imul(seed >>> 0, 0x9e3779b9)) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/**
 * An independent, reproducible random source named `name` within the run seeded by `seed`: the
 * same pair always gives the same draws in [0, 1).
 *
 * Each part of a simulation draws from a stream of its own (traffic, backend, client, each
 * policy), so a change to one part never shifts the draws of another: the same seed offers the
 * same traffic to a tideward policy and to its baseline.
 *
 * Distinct seeds give distinct streams for every name (the mixing is a bijection of the seed).
 *
 * @param seed - the run's seed, a whole number from 0 to 4 294 967 295
 * @param name - the stream's name, such as `"traffic"`
 * @throws RangeError (TypeError for a non-number) for any other seed
 */
export function stream(seed: number, name: string): Random {
  const s = seedOf(seed, "stream seed");
  if (typeof name !== "string") throw new TypeError(`stream name must be text, got ${check.describe(name)}`);
  return seededRandom(mix(s, name));
}
