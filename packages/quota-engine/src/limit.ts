import { MAX_SPAN, spanProblem } from "@tideward/limiters/math";
import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";

/** The longest a limit name may be, in UTF-16 code units. */
export const MAX_LIMIT_NAME = 256;

/**
 * A named rule, shared by every key charged against it. One spec serves all three algorithms;
 * each reads the fields it needs:
 *
 * | algorithm | admits | reads |
 * | --- | --- | --- |
 * | token bucket | while the key's bucket holds `cost` tokens | `capacity`, `refill`, `window` |
 * | fixed window | while the window's count plus `cost` is at most `capacity` | `capacity`, `window`, `align` |
 * | GCRA | while the key is at most `burst` units ahead of its schedule | `refill`, `window`, `burst` |
 *
 * All amounts are whole units (requests, tokens, bytes: whatever the caller's `cost` counts).
 */
export interface LimitSpec {
  /** The name charges refer to; 1 to {@link MAX_LIMIT_NAME} characters, unique in an engine. */
  readonly name: string;
  /**
   * Units: the most a token bucket holds (a bucket starts full), and the most a fixed window
   * admits per window. A whole number of at least 1.
   */
  readonly capacity: number;
  /**
   * Units regained per `window`: a token bucket accrues `refill / window` tokens per millisecond,
   * continuously (not in steps); GCRA's steady rate is the same. A whole number of at least 1.
   */
  readonly refill: number;
  /**
   * Milliseconds: the length of a fixed window, and the period `refill` is counted over. From
   * 2^-4 (62.5 µs) to 2^44 (about 557 years): a shorter window is too close to a clock reading's
   * own step near `Date.now()` and beyond; and `capacity · window / refill` and
   * `burst · window / refill` (the time to refill) must not pass 2^44 either.
   */
  readonly window: Span;
  /**
   * Units: how many GCRA admits back to back from rest, i.e. its tolerance is
   * `burst · window / refill` milliseconds ahead of schedule. A whole number of at least 1.
   */
  readonly burst: number;
  /**
   * Fixed windows only: `true` opens windows on multiples of `window` on the caller's clock (with
   * a Unix clock, a daily window resets at midnight UTC); `false` opens a window at the first
   * charge after the last one closed.
   */
  readonly align: boolean;
}

/** The fields of a {@link LimitSpec} a caller gives: everything but the name and capacity may be left out. */
export interface LimitFields {
  /** See {@link LimitSpec.name}. */
  readonly name: string;
  /** Units; see {@link LimitSpec.capacity}. */
  readonly capacity: number;
  /** @defaultValue `capacity` */
  readonly refill?: number;
  /** Milliseconds. @defaultValue 1000 */
  readonly window?: Span;
  /** @defaultValue `capacity` */
  readonly burst?: number;
  /** @defaultValue false */
  readonly align?: boolean;
}

/**
 * What a per-key override sets (see `setOverride`): any of a limit's fields but its name. A field
 * left out is the limit's own, and follows it when the limit is replaced.
 */
export type OverrideFields = Partial<Omit<LimitSpec, "name">>;

/** The fields an override may set, in the order they are read. */
export const OVERRIDE_FIELDS = ["capacity", "refill", "window", "burst", "align"] as const;

/** The fields of a {@link LimitSpec}, in the order they are read and checked. */
export const FIELDS = ["name", "capacity", "refill", "window", "burst", "align"] as const;

/**
 * The fields of `spec` read once into a plain record: own properties only (nothing inherited
 * through the prototype), each read exactly once, so a getter cannot answer one value to the
 * check and another to the use. Anything but an object gives `undefined`.
 */
export function readSpec(spec: unknown): Record<(typeof FIELDS)[number], unknown> | undefined {
  if (spec === null || typeof spec !== "object") return undefined;
  const copy = {} as Record<(typeof FIELDS)[number], unknown>;
  for (const name of FIELDS)
    copy[name] = Object.prototype.hasOwnProperty.call(spec, name) ? (spec as Record<string, unknown>)[name] : undefined;
  return copy;
}

/**
 * Why `spec` is not a valid {@link LimitSpec}, or `undefined` when it is. Checks a record that is
 * already a copy (see {@link readSpec}); a value that is not an object is described as such.
 */
export function limitProblem(spec: unknown): string | undefined {
  if (spec === null || typeof spec !== "object") return `LimitSpec must be an object, got ${check.describe(spec)}`;
  const field = (name: string): unknown =>
    Object.prototype.hasOwnProperty.call(spec, name) ? (spec as Record<string, unknown>)[name] : undefined;
  const name = field("name");
  if (typeof name !== "string") return `LimitSpec name must be a string, got ${check.describe(name)}`;
  if (name.length === 0 || name.length > MAX_LIMIT_NAME)
    return `LimitSpec name must be 1 to ${MAX_LIMIT_NAME} characters, got ${name.length}`;
  for (const whole of ["capacity", "refill", "burst"]) {
    const value = field(whole);
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      return `LimitSpec ${whole} of ${JSON.stringify(name)} must be a whole number of at least 1, got ${check.describe(value)}`;
    }
  }
  const window = field("window");
  if (typeof window !== "number" || !Number.isFinite(window) || window <= 0) {
    return `LimitSpec window of ${JSON.stringify(name)} must be a finite number of milliseconds above 0, got ${check.describe(window)}`;
  }
  const span = spanProblem(window);
  if (span !== undefined) return `LimitSpec window of ${JSON.stringify(name)} ${span}`;
  const refill = field("refill") as number;
  const most = Math.max(field("capacity") as number, field("burst") as number);
  // A bucket refills `capacity` and GCRA catches up `burst` units at `refill` per window: both
  // must come back within MAX_SPAN, or the waits the engine answers would leave the clock's range.
  if ((most * window) / refill > MAX_SPAN) {
    const least = Math.ceil((most * window) / MAX_SPAN);
    return `LimitSpec refill of ${JSON.stringify(name)} must be at least ${least} for ${most} units over a window of ${window} ms (they must refill within ${MAX_SPAN} ms, 2^44), got ${refill}`;
  }
  const align = field("align");
  if (typeof align !== "boolean")
    return `LimitSpec align of ${JSON.stringify(name)} must be true or false, got ${check.describe(align)}`;
  return undefined;
}

/**
 * A validated {@link LimitSpec} from its fields, the left-out ones defaulted.
 *
 * @example
 * limitSpec({ name: "tokens", capacity: 4, refill: 2, window: 1_000 }); // 2 a second, saving up to 4
 * @throws RangeError or TypeError naming the field and the value when a field is invalid
 */
export function limitSpec(fields: LimitFields): LimitSpec {
  // Each field read once, into the copy that is checked and returned.
  const given = check.options(
    fields,
    ["name", "capacity", "refill", "window", "burst", "align"],
    "limitSpec",
    "fields",
  );
  const spec: LimitSpec = {
    name: given.name as string,
    capacity: given.capacity as number,
    refill: given.refill ?? (given.capacity as number),
    window: given.window ?? 1_000,
    burst: given.burst ?? (given.capacity as number),
    align: given.align ?? false,
  };
  const problem = limitProblem(spec);
  if (problem === undefined) return Object.freeze(spec);
  const notNumber = ["capacity", "refill", "window", "burst"].some(
    (k) => typeof spec[k as keyof LimitSpec] !== "number",
  );
  throw typeof spec.name !== "string" || typeof spec.align !== "boolean" || notNumber
    ? new TypeError(problem)
    : new RangeError(problem);
}

/** `capacity` units a second: a bucket of `capacity` refilled at `capacity` a second, a one-second window, GCRA burst `capacity`. */
export function perSecond(name: string, capacity: number): LimitSpec {
  return limitSpec({ name, capacity, refill: capacity, window: 1_000, burst: capacity });
}

/** `capacity` units a minute: a bucket of `capacity` refilled at `capacity` a minute, a one-minute window, GCRA burst `capacity`. */
export function perMinute(name: string, capacity: number): LimitSpec {
  return limitSpec({ name, capacity, refill: capacity, window: 60_000, burst: capacity });
}
