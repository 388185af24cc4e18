import { describe, finite } from "./check";

/**
 * A duration in milliseconds (fractions allowed): the unit of `Date.now()` and `performance.now()`.
 * An instant on the caller's clock is also a number of milliseconds.
 */
export type Span = number;

/** A span given as milliseconds or as text such as `"1.5s"`, `"1h30m"` or `"250ms"`. */
export type SpanInput = Span | string;

/** `n` milliseconds. */
export const ms = (n: number): Span => n;
/** `n` seconds, in milliseconds. */
export const seconds = (n: number): Span => n * 1_000;
/** `n` minutes, in milliseconds. */
export const minutes = (n: number): Span => n * 60_000;
/** `n` hours, in milliseconds. */
export const hours = (n: number): Span => n * 3_600_000;
/** `n` days of 24 hours, in milliseconds. */
export const days = (n: number): Span => n * 86_400_000;

// Each unit is a power-of-ten shift times a whole multiplier. The digits are read as a whole
// number and shifted by one exact multiplication or one correctly rounded division, so "1.1s"
// is 1100, not the 1100.0000000000002 that 1.1 * 1000 gives.
const UNITS: ReadonlyMap<string, readonly [shift: number, times: number]> = new Map([
  ["ns", [-6, 1]],
  ["us", [-3, 1]],
  ["µs", [-3, 1]],
  ["ms", [0, 1]],
  ["s", [3, 1]],
  ["m", [3, 60]],
  ["h", [3, 3_600]],
  ["d", [3, 86_400]],
]);

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i); // exact up to 1e22

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

function isLetter(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 181;
}

function fail(input: string, at: string): never {
  throw new RangeError(
    `parseSpan: cannot read ${describe(input)} at ${describe(at)}; write e.g. "250ms", "1.5s" or "1h30m"`,
  );
}

/** A number as an exact decimal: `digits × 10^exponent`. */
type Exact = readonly [digits: bigint, exponent: number];

/** The exact value of a part: the decimal digits of `text` (a point and an exponent dropped) times `times`, shifted. */
function exactPart(text: string, times: number, shift: number): Exact {
  return [BigInt(text.replace(/e.*$/i, "").replace(".", "")) * BigInt(times), shift];
}

/** Decimal orders below the other part past which a part can only break a tie in the rounding. */
const GAP = 2_000;

function addExact(a: Exact, b: Exact): Exact {
  if (a[0] === 0n) return b;
  if (b[0] === 0n) return a;
  const high = a[1] <= b[1] ? b : a;
  let low = high === a ? b : a;
  // So far down, the low part's only effect on the rounded sum is that it is not zero: it is kept
  // as the least amount that far down, so the power below stays small ("1e-2000000000ms 1ms").
  if (high[1] - low[1] - String(low[0]).length > GAP) low = [1n, high[1] - GAP];
  return [low[0] + high[0] * 10n ** BigInt(high[1] - low[1]), low[1]];
}

/**
 * Reads a span: a number of milliseconds as it is, or text made of one or more
 * `<number><unit>` parts with units `ns`, `us`, `ms`, `s`, `m`, `h`, `d`.
 *
 * @example
 * parseSpan("1.5s")  // 1500
 * parseSpan("1h30m") // 5_400_000
 * parseSpan(250)     // 250
 * @param input - text such as `"250ms"`, or a span in milliseconds
 * @returns the span in milliseconds, finite and never negative
 * @throws TypeError when the input is neither a string nor a number;
 *   RangeError when it is empty, malformed, has no or an unknown unit, is negative, or overflows
 */
export function parseSpan(input: SpanInput): Span {
  if (typeof input === "number") {
    const n = finite(input, "parseSpan input");
    if (n < 0) throw new RangeError(`parseSpan: a span cannot be negative, got ${n}`);
    return n;
  }
  if (typeof input !== "string") {
    throw new TypeError(
      `parseSpan expects a string such as "1.5s" or a number of milliseconds, got ${typeof input} ${describe(input)}`,
    );
  }
  const len = input.length;
  let i = 0;
  let total = 0;
  let parts = 0;
  let firstFrom = 0;
  let firstEnd = 0;
  let firstTimes = 1;
  let firstShift = 0;
  let exact: Exact | undefined;
  for (;;) {
    while (i < len && isSpace(input.charCodeAt(i))) i++;
    if (i === len) break;
    const from = i;
    let c = input.charCodeAt(i);
    if (c === 45 && parts === 0) throw new RangeError(`parseSpan: a span cannot be negative, got ${describe(input)}`);
    // Digits, with at most one point: the mantissa as a whole number and how many decimals it had.
    let whole = 0;
    let digits = 0;
    let decimals = -1;
    while (i < len) {
      c = input.charCodeAt(i);
      if (isDigit(c)) {
        whole = whole * 10 + (c - 48);
        digits++;
        if (decimals >= 0) decimals++;
      } else if (c === 46 && decimals < 0) {
        decimals = 0;
      } else break;
      i++;
    }
    if (digits === 0 || decimals === 0) fail(input, input.slice(from));
    let exponent = 0;
    if (i < len && (input.charCodeAt(i) | 32) === 101 && i + 1 < len) {
      let j = i + 1;
      const sign = input.charCodeAt(j);
      const negative = sign === 45;
      if (sign === 43 || negative) j++;
      const e0 = j;
      // Saturated: past 10^9 any exponent overflows or rounds to 0 alike.
      while (j < len && isDigit(input.charCodeAt(j))) {
        const d = input.charCodeAt(j++) - 48;
        if (exponent < 1e9) exponent = exponent * 10 + d;
      }
      if (j > e0) {
        if (negative) exponent = -exponent;
        i = j;
      } else exponent = 0;
    }
    const numberEnd = i;
    while (i < len && isSpace(input.charCodeAt(i))) i++;
    const unitStart = i;
    while (i < len && isLetter(input.charCodeAt(i))) i++;
    if (i === unitStart) {
      if (i === len)
        throw new RangeError(
          `parseSpan: ${describe(input)} has a number without a unit; add one of ns, us, ms, s, m, h, d`,
        );
      fail(input, input.slice(unitStart));
    }
    const unit = input.slice(unitStart, i);
    const scale = UNITS.get(unit) ?? UNITS.get(unit.toLowerCase());
    if (scale === undefined)
      throw new RangeError(
        `parseSpan: unknown unit ${describe(unit)} in ${describe(input)}; use ns, us, ms, s, m, h or d`,
      );
    const shift = scale[0] + exponent - (decimals > 0 ? decimals : 0);
    const times = scale[1];
    // The part is digits × times × 10^shift. Multiplying the whole numbers first and shifting
    // once rounds once, so "1.23456789m" is the double nearest to what the text says.
    const product = whole * times;
    let value: number;
    if (digits <= 15 && product <= Number.MAX_SAFE_INTEGER && shift >= -22 && shift <= 22) {
      value = shift >= 0 ? product * POW10[shift] : product / POW10[-shift];
    } else {
      // Past 2^53 the whole number is no longer exact: let Number round the exact decimal text.
      value = Number(
        `${BigInt(input.slice(from, numberEnd).replace(/e.*$/i, "").replace(".", "")) * BigInt(times)}e${shift}`,
      );
    }
    parts++;
    if (parts === 1) {
      total = value;
      firstFrom = from;
      firstEnd = numberEnd;
      firstTimes = times;
      firstShift = shift;
    } else {
      // Several parts are summed exactly and rounded once at the end, so that "1m47.838414s"
      // is 107838.414 and not the sum of two rounded parts, an ulp away.
      exact = addExact(
        exact ?? exactPart(input.slice(firstFrom, firstEnd), firstTimes, firstShift),
        exactPart(input.slice(from, numberEnd), times, shift),
      );
      // Every part is at least 0, so one that overflows makes the sum overflow: said before
      // the exact sum is made, which for such a part would be a number of a billion digits.
      total += value;
      if (!Number.isFinite(total))
        throw new RangeError(`parseSpan: ${describe(input)} is too large to represent in milliseconds`);
    }
  }
  if (exact !== undefined) total = Number(`${exact[0]}e${exact[1]}`);
  if (parts === 0) throw new RangeError(`parseSpan: empty span ${describe(input)}; write e.g. "250ms" or "1.5s"`);
  if (!Number.isFinite(total))
    throw new RangeError(`parseSpan: ${describe(input)} is too large to represent in milliseconds`);
  return total;
}

// Largest first: a span is written in the largest whole units that fit, then what is left in
// seconds or milliseconds, with every decimal it needs.
const STEPS: readonly (readonly [unit: string, size: number])[] = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
];

/** Past 2^53 ms a span is a whole number too large to cut into units exactly: it is written in ms. */
const WHOLE = 2 ** 53;

/**
 * `text`, the plain decimal form of a number of milliseconds from 1000 up, as seconds: the
 * point moved three places left in the text, so no digit is lost to a division.
 */
function asSeconds(text: string): string {
  const point = text.indexOf(".");
  const whole = point < 0 ? text : text.slice(0, point);
  const fraction = point < 0 ? "" : text.slice(point + 1);
  return `${whole.slice(0, -3)}.${whole.slice(-3)}${fraction}`.replace(/\.?0+$/, "");
}

/**
 * Writes a span the way a person would read it, in text {@link parseSpan} reads back to exactly
 * the same number: whole days, hours and minutes, then seconds or milliseconds with every decimal
 * the number has (the shortest that reads back, as `String` writes a number).
 *
 * @example
 * formatSpan(168)       // "168ms"
 * formatSpan(1500)      // "1.5s"
 * formatSpan(1234.567)  // "1.234567s"
 * formatSpan(5_400_000) // "1h30m"
 * formatSpan(1e306)     // "1e+306ms"
 * @param span - milliseconds; negative spans get a leading minus
 * @returns text such that `parseSpan(formatSpan(x)) === x` for every finite `x` from 0 up
 * @throws RangeError for NaN or an infinite span; TypeError for what is not a number
 */
export function formatSpan(span: Span): string {
  const n = finite(span, "formatSpan span");
  if (n < 0) return `-${formatSpan(-n)}`;
  if (n < 1_000 || n >= WHOLE) return `${String(n)}ms`;
  // The shortest decimal that reads back as n, cut in the text: the whole units come out of its
  // integer part, and what is left keeps n's own decimals, so nothing is rounded twice.
  const text = String(n);
  if (n < 60_000) return `${asSeconds(text)}s`;
  const point = text.indexOf(".");
  const fraction = point < 0 ? "" : text.slice(point);
  let rest = point < 0 ? n : Number(text.slice(0, point));
  let out = "";
  for (const [unit, size] of STEPS) {
    // A whole number under 2^53 divided by a whole unit: correct a quotient rounded up by one.
    let whole = Math.floor(rest / size);
    if (whole * size > rest) whole--;
    if (whole > 0) {
      out += `${whole}${unit}`;
      rest -= whole * size;
    }
  }
  if (rest >= 1_000) out += `${asSeconds(`${rest}${fraction}`)}s`;
  else if (rest > 0 || fraction !== "") out += `${rest}${fraction}ms`;
  return out;
}
