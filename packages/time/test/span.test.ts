import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { days, formatSpan, hours, minutes, ms, parseSpan, seconds } from "@tideward/time";

describe("span helpers", () => {
  it("convert each unit to milliseconds", () => {
    expect(ms(250)).toBe(250);
    expect(seconds(1.5)).toBe(1_500);
    expect(minutes(2)).toBe(120_000);
    expect(hours(1)).toBe(3_600_000);
    expect(days(1)).toBe(86_400_000);
  });
});

describe("parseSpan", () => {
  it.each([
    ["1.5s", 1_500],
    ["1h30m", 5_400_000],
    ["250ms", 250],
    ["1.1s", 1_100],
    ["0.1h", 360_000],
    ["2d", 172_800_000],
    ["1m 30s", 90_000],
    ["500us", 0.5],
    ["1500ns", 0.0015],
    ["1e3ms", 1_000],
    [".5s", 500],
    ["  3s  ", 3_000],
    ["1H", 3_600_000],
  ])("reads %j as %d ms", (text, expected) => {
    expect(parseSpan(text)).toBe(expected);
  });

  it("takes a number as milliseconds", () => {
    expect(parseSpan(250)).toBe(250);
    expect(parseSpan(0)).toBe(0);
  });

  it.each([
    ["", RangeError, /empty span/],
    ["   ", RangeError, /empty span/],
    ["abc", RangeError, /cannot read "abc"/],
    ["5 parsecs", RangeError, /unknown unit "parsecs"/],
    ["1e400s", RangeError, /"1e400s" is too large/],
    ["250", RangeError, /without a unit/],
    ["-5s", RangeError, /cannot be negative, got "-5s"/],
    ["1s-", RangeError, /cannot read "1s-" at "-"/],
    ["1..5s", RangeError, /cannot read "1..5s"/],
    ["1.s", RangeError, /cannot read "1.s"/],
    ["1s2", RangeError, /without a unit/],
  ] as const)("rejects %j", (text, type, message) => {
    expect(() => parseSpan(text)).toThrow(type);
    expect(() => parseSpan(text)).toThrow(message);
  });

  it("answers at once for parts of any exponent: an overflow refused, a vanishing part kept as a tie-breaker", () => {
    for (const text of ["1e300000000ms 1ms", "1ms 1e300000000ms", `1e${"9".repeat(400)}ms 1ms`])
      expect(() => parseSpan(text)).toThrow(
        new RangeError(`parseSpan: "${text}" is too large to represent in milliseconds`),
      );
    expect(parseSpan("1e-2000000000ms 1ms")).toBe(1);
    expect(parseSpan(`1ms 1e-${"9".repeat(400)}ms`)).toBe(1);
    expect(parseSpan("0e2500ms 1ms")).toBe(1);
    expect(parseSpan("1e-400ms 1e-400ms")).toBe(0);
    // 1 + 2^-53 ms is halfway between two doubles and rounds to the even one, 1; any more,
    // however little, rounds up.
    const half = "1.00000000000000011102230246251565404236316680908203125ms";
    expect(parseSpan(half)).toBe(1);
    expect(parseSpan(`${half} 1e-30ms`)).toBe(1 + 2 ** -52);
    expect(parseSpan(`${half} 1e-3000ms`)).toBe(1 + 2 ** -52);
    expect(parseSpan(`${half} 1e-2000000000ms`)).toBe(1 + 2 ** -52);
  });

  it("rejects NaN, infinities and negative numbers naming the value", () => {
    expect(() => parseSpan(Number.NaN)).toThrow(RangeError);
    expect(() => parseSpan(Number.NaN)).toThrow(/got NaN/);
    expect(() => parseSpan(Infinity)).toThrow(/got Infinity/);
    expect(() => parseSpan(-1)).toThrow(/cannot be negative, got -1/);
  });

  it("rejects what is neither text nor number with a TypeError", () => {
    expect(() => parseSpan(null as unknown as string)).toThrow(TypeError);
    expect(() => parseSpan({} as unknown as string)).toThrow(/got object \[object Object\]/);
  });
});

describe("formatSpan", () => {
  it.each([
    [168, "168ms"],
    [1_500, "1.5s"],
    [0, "0ms"],
    [0.5, "0.5ms"],
    [59_999, "59.999s"],
    [60_000, "1m"],
    [90_000, "1m30s"],
    [5_400_000, "1h30m"],
    [90_061_500, "1d1h1m1.5s"],
    [3_600_250, "1h250ms"],
    [-1_500, "-1.5s"],
    [59_999.9999, "59.9999999s"],
    [1_234.567, "1.234567s"],
    [0.0015, "0.0015ms"],
    [61_000.5, "1m1.0005s"],
    [123_456_789.123, "1d10h17m36.789123s"],
    [1e306, "1e+306ms"],
    [2 ** 53, "9007199254740992ms"],
    [5e-324, "5e-324ms"],
  ])("writes %d ms as %j", (span, text) => {
    expect(formatSpan(span)).toBe(text);
  });

  it("rejects NaN and infinities", () => {
    expect(() => formatSpan(Number.NaN)).toThrow(/got NaN/);
    expect(() => formatSpan(-Infinity)).toThrow(RangeError);
  });

  it("is read back by parseSpan to exactly the same number, fractions and huge spans included", () => {
    const span = fc.oneof(
      fc.integer({ min: 0, max: 10 * 365 * 86_400_000 }),
      fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }),
      fc.double({ min: 0, max: 1e7, noNaN: true }), // performance.now() magnitudes and below
      fc.double({ min: 1e12, max: 1e13, noNaN: true }), // Date.now() magnitudes
      fc.integer({ min: 0, max: 10 ** 9 }).map((n) => n / 1_000), // three decimals, as people write them
    );
    fc.assert(
      fc.property(span, (n) => {
        expect(parseSpan(formatSpan(n))).toBe(n);
        expect(formatSpan(-n)).toBe(n === 0 ? "0ms" : `-${formatSpan(n)}`);
      }),
      { numRuns: 2_000 },
    );
  }, 20_000);

  it("writes whole units, then the fewest decimals that read back", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 9 }), fc.integer({ min: 0, max: 999 }), (whole, thousandths) => {
        const n = (whole * 1_000 + thousandths) / 1_000; // the double nearest the decimal
        const text = formatSpan(n);
        // A span written to the microsecond is written back to the microsecond, not with the
        // float noise of its remainder after the whole units.
        const seconds = /(\d+)(?:\.(\d+))?s$/.exec(text);
        const millis = /(\d+)(?:\.(\d+))?ms$/.exec(text);
        if (seconds) expect(seconds[2]?.length ?? 0).toBeLessThanOrEqual(6);
        if (millis) expect(millis[2]?.length ?? 0).toBeLessThanOrEqual(3);
        expect(text).toMatch(/^(\d+d)?(\d+h)?(\d+m)?(\d+(\.\d+)?(s|ms))?$/);
      }),
    );
  });
});

describe("parseSpan exactness", () => {
  it("reads decimal seconds exactly as the decimal text says", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 3 }), (whole, places) => {
        const text = (whole / 10 ** places).toFixed(places);
        expect(parseSpan(`${text}s`)).toBe(Number(`${text}e3`));
        expect(parseSpan(`${text}ms`)).toBe(Number(text));
      }),
    );
  });
});
