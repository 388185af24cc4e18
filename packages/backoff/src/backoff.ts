import { check } from "@tideward/time/internal";
import type { OptionError, Span } from "@tideward/time";
import { Jitter, toJitter } from "./jitter";

/**
 * The numbers of a backoff policy, as a plain record: what {@link Backoff} is built from and
 * what it exposes. Every field is optional when building; the preset {@link backoff} fills the rest.
 */
export interface BackoffPolicy {
  /** The ceiling of the first retry, in milliseconds; 0 or more. @defaultValue 100 */
  readonly base: Span;
  /** What each ceiling is multiplied by to get the next; 1 or more (1 is a constant wait). @defaultValue 2 */
  readonly factor: number;
  /** The most a ceiling may grow to, in milliseconds; finite and at least `base`. @defaultValue 1000 */
  readonly cap: Span;
  /** Calls allowed in total, the first one included; a whole number, 1 or more. @defaultValue 3 */
  readonly attempts: number;
  /** How much of each wait is randomised. @defaultValue `Jitter.spread(0.2)` */
  readonly jitter: Jitter;
}

/** What {@link Backoff.delay} takes besides the retry number. */
export interface DelayOptions {
  /**
   * A draw in `[0, 1)` the jitter scales; the same draw gives the same delay. A draw outside
   * `[0, 1]` (or NaN) is held to the nearest end, so a bad source cannot push a wait out of bounds.
   * @defaultValue 0, the low end of whatever jitter is in force
   */
  readonly random?: number;
  /**
   * What the last wait turned out to be, in milliseconds; only `decorrelated` reads it.
   * @defaultValue the policy's `base`, where a decorrelated run starts
   */
  readonly previous?: Span;
}

// How many ceilings each Backoff keeps precomputed: 32 retries covers every schedule anyone runs.
const TABLE = 32;
/** The most waits {@link Backoff.schedule} lists: a plan longer than this is not read by anyone. */
const LONGEST_PLAN = 1_000_000;
const KNOWN = ["base", "factor", "cap", "attempts", "jitter"] as const;

// What other retry libraries call the number of tries, and whether it counts the first one.
const COUNTS: Readonly<Record<string, "retries" | "attempts">> = {
  retries: "retries",
  maxRetries: "retries",
  retryCount: "retries",
  attempts: "attempts",
  times: "attempts",
  maxAttempts: "attempts",
  tries: "attempts",
};

/**
 * @internal The error for a count of tries given under another library's name (`retries: 3`),
 * pointing at `attempts` (the first attempt included) and where it goes: `where` wraps the field,
 * such as `{ attempts: 4 }` or `retry(fn, { backoff: { attempts: 4 } })`, and `field` names it.
 */
export function countHint(
  options: unknown,
  owner: string,
  field: string,
  where: (field: string) => string,
  known: readonly string[],
): OptionError | undefined {
  if (typeof options !== "object" || options === null) return undefined;
  for (const key of Object.keys(options)) {
    const kind = COUNTS[key];
    if (kind === undefined || known.includes(key)) continue;
    const value = (options as Record<string, unknown>)[key];
    const n = typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
    const attempts = n === undefined ? "n" : String(kind === "retries" ? n + 1 : n);
    const example = n === undefined || kind === "attempts" ? "" : ` for ${n} ${n === 1 ? "retry" : "retries"}`;
    return check.typeError(
      owner,
      `has no option ${JSON.stringify(key)}; the count is ${field}, the first attempt included: ${where(`attempts: ${attempts}`)}${example}`,
      value,
    );
  }
  return undefined;
}

const PRESET = { base: 100, factor: 2, cap: 1_000, attempts: 3, jitter: Jitter.spread(0.2) } as const;

/**
 * When to try again, and how long to wait first: an exponential backoff with a cap and a jitter.
 *
 * The ceiling of retry `n` (the first retry being 1) is `min(base × factor^(n − 1), cap)`; the
 * jitter turns it into a delay with a draw the caller supplies, so the same draw always gives
 * the same delay and a whole run is reproducible. Nothing here reads a clock or draws a number.
 *
 * A `Backoff` is an immutable record of its policy (it spreads like one:
 * `new Backoff({ ...backoff, attempts: 5 })`), validated once when built.
 *
 * @example
 * const b = new Backoff({ jitter: Jitter.full, attempts: 5 });
 * b.ceiling(3);                  // 400
 * b.delay(3, { random: 0.5 });   // 200
 * b.schedule([0.5, 0.5, 0.5, 0.5]); // [50, 100, 200, 400]
 */
export class Backoff implements BackoffPolicy {
  readonly base: Span;
  readonly factor: number;
  readonly cap: Span;
  readonly attempts: number;
  readonly jitter: Jitter;

  // The jitter unpacked into numbers once, so `delay` is a switch and some arithmetic.
  readonly #kind: Jitter["kind"];
  readonly #fraction: number;
  // The ceilings of the first retries, looked up rather than raised to a power each time
  // (which is most of the cost of a delay); computed by the same formula, so identical.
  readonly #table: Float64Array;

  /**
   * A backoff policy: `policy` laid over the preset {@link backoff}, validated once.
   *
   * The policy is read once, into a copy, before anything is checked.
   *
   * @throws RangeError naming the field and the value for NaN anywhere, a negative base, a factor
   *   under 1, a cap that is infinite or under the base, attempts under 1 or not whole;
   *   TypeError for a policy that is not an object or names a field there is not (with the
   *   closest there is), a field that is not a number or a jitter that is not one of the five
   */
  constructor(policy?: Partial<BackoffPolicy>) {
    const count = countHint(policy, "Backoff", "attempts", (f) => `{ ${f} }`, KNOWN);
    if (count !== undefined) throw count;
    const given = check.options(policy, KNOWN, "Backoff", "policy");
    const base = check.nonNegative(check.or(given.base, PRESET.base), "Backoff base (ms)");
    const factor = check.finite(check.or(given.factor, PRESET.factor), "Backoff factor");
    if (factor < 1)
      throw check.rangeError("Backoff factor", `must be 1 or more (1 is a constant wait), got ${factor}`, factor);
    const cap = check.finite(check.or(given.cap, PRESET.cap), "Backoff cap (ms)");
    if (cap < base) throw check.rangeError("Backoff cap (ms)", `must be at least the base (${base}), got ${cap}`, cap);
    this.base = base;
    this.factor = factor;
    this.cap = cap;
    this.attempts = check.integer(check.or(given.attempts, PRESET.attempts), "Backoff attempts", 1);
    this.jitter = toJitter(check.or(given.jitter, PRESET.jitter), "Backoff jitter");
    this.#kind = this.jitter.kind;
    this.#fraction = this.jitter.kind === "spread" ? this.jitter.fraction : 0;
    this.#table = new Float64Array(TABLE);
    for (let i = 0; i < TABLE; i++) this.#table[i] = this.#raise(i + 1);
    Object.freeze(this);
  }

  /**
   * A copy with some fields changed, validated like a new one.
   * @example backoff.with({ attempts: 5 })
   */
  with(changes: Partial<BackoffPolicy>): Backoff {
    return new Backoff({ ...this.policy(), ...check.options(changes, KNOWN, "Backoff", "changes") });
  }

  /** The policy as a plain record, for logging or for spreading into another. */
  policy(): BackoffPolicy {
    return { base: this.base, factor: this.factor, cap: this.cap, attempts: this.attempts, jitter: this.jitter };
  }

  /**
   * The undelayed ceiling before retry `retry`, in milliseconds: `min(base × factor^(retry − 1), cap)`.
   *
   * It is what a jitter-free client sleeps and what the other jitters (bar `decorrelated`) draw
   * within. It saturates at the cap however large `retry` is: never NaN, never Infinity.
   *
   * @param retry - which retry, the first being 1 (a whole number is meant)
   * @returns the ceiling in milliseconds, or `undefined` for a retry below 1 (or NaN): there is no such retry
   */
  ceiling(retry: number): Span | undefined {
    // A retry that is not a number (a Symbol, a string) has no ceiling, like NaN.
    if (!(typeof retry === "number" && retry >= 1)) return undefined;
    const i = retry - 1;
    return i < TABLE && (i | 0) === i ? this.#table[i] : this.#raise(retry);
  }

  #raise(retry: number): Span {
    const raw = this.base * this.factor ** (retry - 1);
    // factor^(retry−1) overflows to Infinity, which the cap absorbs. NaN comes only from
    // 0 × Infinity (base 0) or 1^Infinity (factor 1): both mean the ceiling is the base.
    return raw < this.cap ? raw : raw >= this.cap ? this.cap : this.base;
  }

  /**
   * How long to wait before retry `retry`, in milliseconds: the jitter applied to the ceiling
   * with the caller's draw. Always finite and within the jitter's bounds.
   *
   * @param retry - which retry this is, the first being 1
   * @param options - the draw in `[0, 1)` (0 when left out, or not a number) and, for
   *   `decorrelated`, the previous wait
   * @returns the wait in milliseconds, or `undefined` for a retry below 1 (or NaN)
   * @throws TypeError when `options` is given and is not an object (a draw passed on its own)
   */
  delay(retry: number, options?: DelayOptions): Span | undefined {
    // A draw handed over where the options go (`delay(2, Math.random())`) would silently read 0.
    if (typeof options !== "object" && options !== undefined) {
      throw new TypeError(
        `Backoff.delay options must be an object such as { random: 0.5 }, got ${typeof options} ${check.describe(options)}`,
      );
    }
    const c = this.ceiling(retry);
    if (c === undefined) return undefined;
    const raw = options?.random;
    // `raw > 0` is false for NaN; a draw that is not a number is never compared, and reads as 0.
    const r = typeof raw === "number" && raw > 0 ? (raw < 1 ? raw : 1) : 0;
    switch (this.#kind) {
      case "rigid":
        return c;
      case "full":
        return r * c;
      case "equal": {
        const half = c / 2;
        const d = half + r * half;
        // Only a ceiling of a few subnormal ulps can round c / 2 up and this sum past c.
        return d < c ? d : c;
      }
      case "spread": {
        const f = this.#fraction * c;
        const d = c - f + r * (f + f);
        if (d <= Number.MAX_VALUE) return d;
        // A ceiling past half the largest number: f + f, or the top of the spread, overflows.
        const e = c + (r + r - 1) * f;
        return e < Number.MAX_VALUE ? e : Number.MAX_VALUE;
      }
      case "decorrelated": {
        const base = this.base;
        const given = options?.previous;
        const previous = typeof given === "number" ? given : base;
        // A previous wait that is NaN, negative or under a third of the base starts over at the
        // base; an infinite one is held to the largest finite number so the draw stays finite.
        let high = previous * 3;
        if (!(high > base)) high = base;
        else if (high > Number.MAX_VALUE) high = Number.MAX_VALUE;
        const d = base + r * (high - base);
        return d < this.cap ? d : this.cap;
      }
    }
  }

  /**
   * Whether a call that has made `made` attempts may make another.
   * The first attempt is 1, so the preset's three attempts allow two retries.
   *
   * @param made - attempts made so far, the first attempt being 1
   */
  more(made: number): boolean {
    return typeof made === "number" && made < this.attempts;
  }

  /**
   * Every delay a full run would wait, in milliseconds, one per retry (`attempts − 1` of them):
   * for a test, or a log line explaining a plan. `decorrelated` grows each from the one before.
   *
   * @param randoms - the draws in `[0, 1)`, one per retry; when they run short the rest use 0,
   *   the low end of whatever jitter is in force
   * @throws TypeError when `randoms` is not an array (or array-like); RangeError when the policy
   *   allows more than 1 000 000 retries, a list that would only exhaust memory
   */
  schedule(randoms: ArrayLike<number> = []): Span[] {
    if (typeof (randoms as { length?: unknown } | null)?.length !== "number") {
      throw new TypeError(
        `Backoff.schedule randoms must be an array of draws in [0, 1), got ${randoms === null ? "null" : `${typeof randoms} ${check.describe(randoms)}`}`,
      );
    }
    if (this.attempts - 1 > LONGEST_PLAN) {
      throw new RangeError(
        `Backoff.schedule lists at most ${LONGEST_PLAN} waits, and attempts is ${this.attempts}; ask delay(retry) for the ones you need`,
      );
    }
    const out: Span[] = [];
    let previous = this.base;
    for (let retry = 1; retry < this.attempts; retry++) {
      const d = this.delay(retry, { random: retry <= randoms.length ? randoms[retry - 1] : 0, previous }) as Span;
      out.push(d);
      previous = d;
    }
    return out;
  }
}

/**
 * The preset: three attempts, 100 ms doubling to a 1 s cap, each wait spread by a fifth either way.
 *
 * A plan of 0.8 to 1.2 of the schedule is easy to explain to whoever asks why the second retry
 * waited 168 ms and not 200. Change a field with `backoff.with({ attempts: 5 })` or
 * `new Backoff({ ...backoff, attempts: 5 })`.
 */
export const backoff: Backoff = new Backoff();
