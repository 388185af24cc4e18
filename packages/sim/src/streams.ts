import { seededRandom } from "@tideward/time";
import type { Random } from "@tideward/time";

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
 * @param seed - the run's seed; only its low 32 bits after truncation matter
 * @param name - the stream's name, such as `"traffic"`
 */
export function stream(seed: number, name: string): Random {
  return seededRandom(mix(Math.trunc(seed), name));
}
