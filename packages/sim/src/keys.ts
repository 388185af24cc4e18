import { check } from "@tideward/time/internal";
import type { Random } from "@tideward/time";

/**
 * Who makes the calls: a fixed set of keys (users, API keys, client addresses) and how often
 * each is picked. Keys are numbered `0 … count − 1`; {@link KeyModel.name} gives each its text.
 */
export interface KeyModel {
  /** How many keys. */
  readonly count: number;
  /** What it is, for reports: `"zipf(10000 keys, s 1.1)"`. */
  readonly label: string;
  /** The text of key `i`, as a log or a quota would see it. */
  readonly name: (i: number) => string;
  /** One key, drawn with `random`. */
  readonly pick: (random: Random) => number;
}

function namer(prefix: string): (i: number) => string {
  return (i) => `${prefix}${i}`;
}

/** One key, named `name` (`"key-0"` by default): every call from the same caller. */
export function single(name = "key-0"): KeyModel {
  if (typeof name !== "string" || name.length === 0)
    throw new TypeError(`single key name must be a non-empty string, got ${check.describe(name)}`);
  return Object.freeze({ count: 1, label: "one key", name: () => name, pick: () => 0 });
}

/** Options of {@link uniform} and {@link zipf}. */
export interface ManyKeysOptions {
  /** How many keys, a whole number from 1. */
  readonly count: number;
  /** Keys are named `${prefix}${i}`. @defaultValue "key-" */
  readonly prefix?: string;
}

/** `count` keys, each as likely as the others. */
export function uniform(options: ManyKeysOptions): KeyModel {
  const o = check.options(options, ["count", "prefix"], "keys.uniform");
  const count = check.integer(o.count, "keys.uniform count", 1);
  return Object.freeze({
    count,
    label: `uniform(${count} keys)`,
    name: namer(o.prefix ?? "key-"),
    pick: (random: Random) => {
      const i = Math.floor(random() * count);
      return i < count ? i : count - 1;
    },
  });
}

/** Options of {@link zipf}. */
export interface ZipfOptions extends ManyKeysOptions {
  /** The skew `s`: key `i` is picked in proportion to `1 / (i + 1)^s`; 0 is uniform, 1 is classic Zipf. @defaultValue 1 */
  readonly exponent?: number;
}

/**
 * `count` keys with Zipf popularity: a few hot keys and a long tail, as real users are. Key 0 is
 * the hottest. Drawn in constant time by Walker's alias method (one draw a pick), from a table
 * built once (16 bytes a key).
 */
export function zipf(options: ZipfOptions): KeyModel {
  const o = check.options(options, ["count", "prefix", "exponent"], "keys.zipf");
  const count = check.integer(o.count, "keys.zipf count", 1);
  const s = check.nonNegative(o.exponent ?? 1, "keys.zipf exponent");
  const weights = new Float64Array(count);
  let sum = 0;
  for (let i = 0; i < count; i++) sum += weights[i] = (i + 1) ** -s;
  const { prob, alias } = aliasTable(weights, sum);
  return Object.freeze({
    count,
    label: `zipf(${count} keys, s ${s})`,
    name: namer(o.prefix ?? "key-"),
    pick: (random: Random) => {
      const u = random() * count;
      const i = Math.floor(u);
      const column = i < count ? i : count - 1;
      return u - column < prob[column] ? column : alias[column];
    },
  });
}

/** Vose's construction of Walker's alias table for weights summing to `sum`. */
function aliasTable(weights: Float64Array, sum: number): { prob: Float64Array; alias: Int32Array } {
  const n = weights.length;
  const prob = new Float64Array(n);
  const alias = new Int32Array(n);
  const scaled = Float64Array.from(weights, (w) => (w * n) / sum);
  const small: number[] = [];
  const large: number[] = [];
  for (let i = n - 1; i >= 0; i--) (scaled[i] < 1 ? small : large).push(i);
  while (small.length > 0 && large.length > 0) {
    const l = small.pop() as number;
    const g = large.pop() as number;
    prob[l] = scaled[l];
    alias[l] = g;
    scaled[g] = scaled[g] + scaled[l] - 1;
    (scaled[g] < 1 ? small : large).push(g);
  }
  // What is left is 1 up to rounding.
  for (const i of large) prob[i] = 1;
  for (const i of small) prob[i] = 1;
  return { prob, alias };
}
