import { check } from "@tideward/time/internal";
import type { Random } from "@tideward/time";
import { DEFAULT_MAX_BYTES, formatBytes, formatCount, maxBytesOf } from "./memory";

/** The most keys a model may have: keys are kept in 32-bit integers. */
const MAX_KEY_COUNT = 2 ** 31 - 1;
/** What a Zipf model's alias table costs a key while it is built, bytes. */
const ZIPF_BYTES = 44;

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
  /** How many keys, a whole number from 1 to 2 147 483 647. */
  readonly count: number;
  /** Keys are named `${prefix}${i}`. @defaultValue "key-" */
  readonly prefix?: string;
}

/** `count` keys, each as likely as the others. */
export function uniform(options: ManyKeysOptions): KeyModel {
  const o = check.options(options, ["count", "prefix"], "keys.uniform");
  const count = keyCount(o.count, "keys.uniform count");
  const prefix = prefixOf(o.prefix, "keys.uniform prefix");
  return Object.freeze({
    count,
    label: `uniform(${count} keys)`,
    name: namer(prefix),
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
  /**
   * The most memory its table may take, bytes (about 44 a key while it is built, 12 after): a
   * count that would need more is refused before anything is allocated. `Infinity` lifts the
   * ceiling. @defaultValue 536 870 912 (512 MiB, about 12 million keys)
   */
  readonly maxBytes?: number;
}

/**
 * `count` keys with Zipf popularity: a few hot keys and a long tail, as real users are. Key 0 is
 * the hottest. Drawn in constant time by Walker's alias method (one draw a pick), from a table
 * built once (12 bytes a key, 44 while it is built).
 *
 * @throws RangeError when the table would take more than `maxBytes`, naming `count`
 */
export function zipf(options: ZipfOptions): KeyModel {
  const o = check.options(options, ["count", "prefix", "exponent", "maxBytes"], "keys.zipf");
  const count = keyCount(o.count, "keys.zipf count");
  const s = check.nonNegative(check.or(o.exponent, 1), "keys.zipf exponent");
  const prefix = prefixOf(o.prefix, "keys.zipf prefix");
  const max = maxBytesOf(o.maxBytes, "keys.zipf maxBytes");
  if (count * ZIPF_BYTES > max)
    throw new RangeError(
      `keys.zipf count ${formatCount(count)} needs about ${formatBytes(count * ZIPF_BYTES)} for its table (${ZIPF_BYTES} bytes a key), past keys.zipf maxBytes (${formatBytes(max)}${max === DEFAULT_MAX_BYTES ? ", the default" : ""}): lower count, or raise maxBytes`,
    );
  const weights = new Float64Array(count);
  let sum = 0;
  for (let i = 0; i < count; i++) sum += weights[i] = (i + 1) ** -s;
  const { prob, alias } = aliasTable(weights, sum);
  return Object.freeze({
    count,
    label: `zipf(${count} keys, s ${s})`,
    name: namer(prefix),
    pick: (random: Random) => {
      const u = random() * count;
      const i = Math.floor(u);
      const column = i < count ? i : count - 1;
      return u - column < prob[column] ? column : alias[column];
    },
  });
}

function keyCount(value: unknown, what: string): number {
  const n = check.integer(value, what, 1);
  if (n > MAX_KEY_COUNT) throw new RangeError(`${what} must be at most ${formatCount(MAX_KEY_COUNT)}, got ${n}`);
  return n;
}

function prefixOf(value: unknown, what: string): string {
  if (value === undefined) return "key-";
  if (typeof value !== "string") throw new TypeError(`${what} must be text, got ${check.describe(value)}`);
  return value;
}

/**
 * Vose's construction of Walker's alias table for weights summing to `sum`, in typed arrays only:
 * its work lists as plain arrays grew on V8's heap, and past about 110 million keys one could not
 * grow at all, which ended the process (no error to catch).
 */
function aliasTable(weights: Float64Array, sum: number): { prob: Float64Array; alias: Int32Array } {
  const n = weights.length;
  const prob = new Float64Array(n);
  const alias = new Int32Array(n);
  // Filled in place: Float64Array.from with a function collects its values in a plain array first.
  const scaled = new Float64Array(n);
  for (let i = 0; i < n; i++) scaled[i] = (weights[i] * n) / sum;
  // Each key is on one of the two stacks at a time, so each holds at most n.
  const small = new Int32Array(n);
  const large = new Int32Array(n);
  let smalls = 0;
  let larges = 0;
  for (let i = n - 1; i >= 0; i--) {
    if (scaled[i] < 1) small[smalls++] = i;
    else large[larges++] = i;
  }
  while (smalls > 0 && larges > 0) {
    const l = small[--smalls];
    const g = large[--larges];
    prob[l] = scaled[l];
    alias[l] = g;
    scaled[g] = scaled[g] + scaled[l] - 1;
    if (scaled[g] < 1) small[smalls++] = g;
    else large[larges++] = g;
  }
  // What is left is 1 up to rounding.
  for (let j = 0; j < larges; j++) prob[large[j]] = 1;
  for (let j = 0; j < smalls; j++) prob[small[j]] = 1;
  return { prob, alias };
}
