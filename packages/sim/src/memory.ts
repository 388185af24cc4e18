import { check } from "@tideward/time/internal";

// What a run may set aside, in bytes, and the estimates that are checked against it before
// anything is allocated: the size of a thing is refused where it is given, naming its option.

/** The ceiling a run (or a key model, or a herd) may set aside unless told otherwise: 512 MiB. */
export const DEFAULT_MAX_BYTES = 536_870_912;

/**
 * What one bucket of the series costs, bytes: about twenty typed-array counters and levels kept
 * during the run, four latency figures, and the plain arrays the result hands back.
 */
export const BUCKET_BYTES = 600;
/** What a refusal reason adds to every bucket: its counter, and its array in the result. */
export const REASON_BYTES = 16;
/** What a key costs with `perKey`: three totals kept during the run, and their arrays and its name in the result. */
export const KEY_BYTES = 112;
/** What a call being made costs (its row of the call table, at the table's doubling). */
export const CALL_BYTES = 128;
/** What an attempt in flight costs, bytes, before its policies' tokens: its row, its events, its place in a queue. */
export const ATTEMPT_BYTES = 224;

/** `bytes` for a person: `"1.5 GiB"`. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let n = bytes;
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  if (n >= 1e6) return `${n.toExponential(2)} ${units[u]}`;
  return `${u === 0 ? Math.round(n) : Number(n.toPrecision(3))} ${units[u]}`;
}

/** A whole number for a person, in groups of three: `1 000 000 000`. */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n)) return String(n);
  const digits = String(Math.abs(n));
  const head = digits.length % 3 || 3;
  const groups = [digits.slice(0, head)];
  for (let i = head; i < digits.length; i += 3) groups.push(digits.slice(i, i + 3));
  return (n < 0 ? "-" : "") + groups.join(" ");
}

/** Errors the simulator raises about sizes, told apart from what a user's callback threw. */
const OWN = new WeakSet<object>();

/** `error`, marked as the simulator's own (so a run passes it on as it is). */
export function own<E extends Error>(error: E): E {
  OWN.add(error);
  return error;
}

/**
 * `thrown`, marked to pass out of a run as it is (an abort's reason, a progress listener's
 * error): what the caller stopped the run with is theirs to read, not a callback's failure.
 * A thrown primitive cannot be marked, and is passed on as any callback's would be.
 */
export function passThrough(thrown: unknown): unknown {
  if (typeof thrown === "object" && thrown !== null) OWN.add(thrown);
  return thrown;
}

/** Whether `error` is one of the simulator's own, marked by {@link own}. */
export function isOwn(error: unknown): boolean {
  return typeof error === "object" && error !== null && OWN.has(error);
}

/**
 * The bytes one run has set aside, against its ceiling. Sizes known up front (the series, the
 * per-key totals) are charged before the run allocates them; what grows with the traffic (calls
 * and attempts in flight, a policy's per-key state) is charged before each growth.
 */
export class Budget {
  /** The ceiling, bytes. */
  readonly max: number;
  /** Bytes set aside so far. */
  used = 0;
  // The option that sets the ceiling, for messages: "simulate maxBytes".
  readonly #option: string;

  constructor(max: number, option: string) {
    this.max = max;
    this.#option = option;
  }

  /**
   * Sets `bytes` aside for `what`, or throws a `RangeError` saying what it would cost and which
   * option to change; nothing is charged then.
   */
  reserve(bytes: number, what: string): void {
    if (!(bytes >= 0)) throw own(new RangeError(`${what}: a size of ${String(bytes)} bytes cannot be set aside`));
    if (this.used + bytes > this.max) {
      const held = this.used > 0 ? ` beside the ${formatBytes(this.used)} already set aside` : "";
      throw own(
        new RangeError(
          `${what} needs about ${formatBytes(bytes)}${held}, past ${this.#option} (${formatBytes(this.max)})`,
        ),
      );
    }
    this.used += bytes;
  }

  /** Gives back `bytes` set aside earlier (a table that grew replaced the smaller one). */
  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}

/** Checks a `maxBytes` option: a whole number of bytes from 1, or Infinity for no ceiling. */
export function maxBytesOf(value: unknown, what: string): number {
  if (value === undefined) return DEFAULT_MAX_BYTES;
  if (value === Infinity) return Infinity;
  if (typeof value !== "number") throw new TypeError(`${what} must be a number of bytes, got ${check.describe(value)}`);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${what} must be a whole number of bytes from 1, or Infinity for no ceiling, got ${value}`);
  return value;
}
