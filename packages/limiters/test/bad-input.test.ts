// Invalid configuration throws at construction naming the field and the value; a bad cost or a
// clock reading that is not a number of milliseconds throws on the hot path with the same shape.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Bucket, Gate, Gcra, Period, Sliding } from "@tideward/limiters";

const nonPositive = [0, -1, -0.5, NaN, Infinity, -Infinity];

describe("bad input at construction", () => {
  it.each(nonPositive)("rejects a rate of %s", (rate) => {
    expect(() => new Bucket(rate)).toThrow(RangeError);
    expect(() => new Bucket(rate)).toThrow(/^Bucket rate \(tokens per second\) must be/);
    expect(() => new Gcra(rate)).toThrow(/^Gcra rate \(per second\) must be/);
  });

  it.each(nonPositive)("rejects a burst of %s", (burst) => {
    expect(() => new Bucket(10, { burst })).toThrow(/^Bucket burst \(tokens\) must be/);
    expect(() => new Gcra(10, { burst })).toThrow(/^Gcra burst must be/);
  });

  it("names the value it got", () => {
    expect(() => new Bucket(-1)).toThrow("Bucket rate (tokens per second) must be above 0, got -1");
    expect(() => new Sliding(2.5, 1_000)).toThrow("Sliding quota must be a whole number, got 2.5");
    expect(() => new Period(0, 1_000)).toThrow("Period quota must be 1 or more, got 0");
    expect(() => new Period(1, NaN)).toThrow("Period period (ms) must be a finite number, got NaN");
    expect(() => new Gate(1.5)).toThrow("Gate limit must be a whole number, got 1.5");
  });

  it.each([0, -3, 1.5, NaN, Infinity, -Infinity])("rejects a quota of %s", (quota) => {
    expect(() => new Sliding(quota, 1_000)).toThrow(RangeError);
    expect(() => new Period(quota, 1_000)).toThrow(RangeError);
  });

  it.each(nonPositive)("rejects a window or period of %s ms", (span) => {
    expect(() => new Sliding(5, span)).toThrow(/^Sliding window \(ms\) must be/);
    expect(() => new Period(5, span)).toThrow(/^Period period \(ms\) must be/);
  });

  it("rejects a gate limit that is NaN, -Infinity or a fraction, and a starting clock that is not finite", () => {
    expect(() => new Gate(NaN)).toThrow(RangeError);
    expect(() => new Gate(-Infinity)).toThrow(RangeError);
    expect(() => new Gate(0.5)).toThrow(RangeError);
    expect(() => new Bucket(1, { now: NaN })).toThrow("Bucket now must be a finite number of milliseconds, got NaN");
  });

  it("rejects what is not a number at all with a TypeError", () => {
    expect(() => new Bucket("10" as unknown as number)).toThrow(TypeError);
    expect(() => new Sliding(5, "1s" as unknown as number)).toThrow(TypeError);
    expect(() => new Period(5, 1_000, { align: "yes" as unknown as boolean })).toThrow(TypeError);
  });
});

describe("bad input on the hot path", () => {
  it.each([-1, -0.001, NaN])("a cost of %s throws a RangeError naming the method", (n) => {
    expect(() => new Bucket(10).take(0, n)).toThrow(/^Bucket\.take n must be/);
    expect(() => new Bucket(10).peek(0, n)).toThrow(/^Bucket\.peek n must be/);
    expect(() => new Bucket(10).next(0, n)).toThrow(/^Bucket\.next n must be/);
    expect(() => new Gcra(10).take(0, n)).toThrow(/^Gcra\.take n must be/);
    expect(() => new Gcra(10).peek(0, n)).toThrow(/^Gcra\.peek n must be/);
    expect(() => new Gcra(10).next(0, n)).toThrow(/^Gcra\.next n must be/);
  });

  it("a cost above the burst is refused, not thrown, and next says never (Infinity)", () => {
    const b = new Bucket(10);
    const g = new Gcra(10);
    for (const n of [10.5, 11, 1e9, Infinity]) {
      expect([b.take(0, n), b.peek(0, n), b.next(0, n)]).toEqual([false, false, Infinity]);
      expect([g.take(0, n), g.peek(0, n), g.next(0, n)]).toEqual([false, false, Infinity]);
    }
    expect(b.tokens(0)).toBe(10);
    expect(g.remaining(0)).toBe(10);
  });

  it.each([NaN, Infinity, -Infinity])("a clock reading of %s throws and changes nothing", (now) => {
    const b = new Bucket(10);
    const s = new Sliding(1, 1_000);
    const p = new Period(1, 1_000);
    const g = new Gcra(10);
    const calls: (() => unknown)[] = [
      () => b.take(now),
      () => b.peek(now),
      () => b.next(now),
      () => b.tokens(now),
      () => b.rateLimit(now),
      () => s.take(now),
      () => s.peek(now),
      () => s.left(now),
      () => s.next(now),
      () => s.rateLimit(now),
      () => p.take(now),
      () => p.peek(now),
      () => p.left(now),
      () => p.next(now),
      () => p.rateLimit(now),
      () => g.take(now),
      () => g.peek(now),
      () => g.next(now),
      () => g.remaining(now),
      () => g.rateLimit(now),
    ];
    const thrown = calls.filter((call) => {
      try {
        call();
        return false;
      } catch (e) {
        return e instanceof RangeError && /now must be a finite number/.test(e.message);
      }
    });
    expect(thrown.length).toBe(calls.length);
    expect([b.tokens(0), s.left(0), p.left(0), g.remaining(0)]).toEqual([10, 1, 1, 10]);
  });
});

// One table of bad input across every limiter: each case with its exact error (or its documented
// tolerant answer), and every limiter's state, read at a later instant, unchanged after it.
describe("bad input, table-driven: the exact error, and no state changed", () => {
  const any = <T>(x: unknown): T => x as T;
  type Limiters = { bucket: Bucket; gcra: Gcra; sliding: Sliding; period: Period; gate: Gate };
  type Expected = { throws: ErrorConstructor; message: string } | { returns: unknown };
  const T = 1_700_000_000_123.25; // a Date.now()-scale reading with a fraction

  function limiters(): Limiters {
    const l = {
      bucket: new Bucket(10, { burst: 5, now: T }),
      gcra: new Gcra(10, { burst: 5 }),
      sliding: new Sliding(3, 1_000),
      period: new Period(3, 1_000),
      gate: new Gate(2),
    };
    l.bucket.take(T, 2);
    l.gcra.take(T, 2);
    l.sliding.take(T);
    l.period.take(T);
    l.gate.enter();
    return l;
  }

  // Everything each limiter would answer a moment later: a write by a failed call would show.
  const state = (l: Limiters): string => {
    const t = T + 150.5;
    return JSON.stringify([
      l.bucket.tokens(t),
      l.bucket.rateLimit(t),
      l.bucket.next(t, 5),
      l.bucket.tokens(T),
      l.gcra.tat,
      l.gcra.rateLimit(t),
      l.gcra.next(t, 5),
      l.sliding.rateLimit(t),
      l.sliding.next(t),
      l.period.rateLimit(t),
      l.period.next(t),
      l.gate.held,
    ]);
  };

  const reads = { burst: 0 };
  const cases: [name: string, run: (l: Limiters) => unknown, expected: Expected][] = [
    [
      "a Bucket's options given first, as other libraries take them",
      () => new Bucket(any({ rate: 5, burst: 5 })),
      {
        throws: TypeError,
        message:
          "Bucket takes the rate first and its options second: new Bucket(5, { burst: 5 }), got an object as the rate",
      },
    ],
    [
      "a Gcra's options given first, without a rate",
      () => new Gcra(any({ burst: 2 })),
      {
        throws: TypeError,
        message:
          "Gcra takes the rate first and its options second: new Gcra(rate, { burst: 2 }), got an object as the rate",
      },
    ],
    [
      "a Sliding window's numbers given as one object",
      () => new Sliding(any({ quota: 10, window: 60_000 }), any(undefined)),
      {
        throws: TypeError,
        message:
          "Sliding takes the quota first and the window second: new Sliding(10, 60000), got an object as the quota",
      },
    ],
    [
      "a Period's numbers and options given as one object",
      () => new Period(any({ quota: 100, period: 3_600_000, align: true }), any(undefined)),
      {
        throws: TypeError,
        message:
          "Period takes the quota first and the period second: new Period(100, 3600000, { align: true }), got an object as the quota",
      },
    ],
    [
      "a rate too large to be the burst it leaves out",
      () => new Bucket(1e308),
      {
        throws: RangeError,
        message:
          "Bucket burst (tokens), which is the rate when left out, must be at most 9007199254740991 (2^53 − 1), got 1e+308",
      },
    ],
    [
      "a misspelt Bucket option",
      () => new Bucket(50, any({ brust: 10 })),
      { throws: TypeError, message: 'Bucket has no option "brust"; did you mean "burst"?' },
    ],
    [
      "null Bucket options",
      () => new Bucket(50, any(null)),
      { throws: TypeError, message: "Bucket options must be an object, got null" },
    ],
    [
      "a string where Bucket options go",
      () => new Bucket(50, any("abc")),
      { throws: TypeError, message: 'Bucket options must be an object, got string "abc"' },
    ],
    [
      "an array where Gcra options go",
      () => new Gcra(10, any([2])),
      { throws: TypeError, message: "Gcra options must be an object, got an array" },
    ],
    [
      "a misspelt Period option",
      () => new Period(5, 1_000, any({ aling: true })),
      { throws: TypeError, message: 'Period has no option "aling"; did you mean "align"?' },
    ],
    [
      "a Gcra rate whose interval overflows",
      () => new Gcra(1e-306),
      {
        throws: RangeError,
        message:
          "Gcra rate (per second) must be at least 5.6843418860808015e-11 for a burst of 1 (it must refill within 17592186044416 ms, 2^44), got 1e-306",
      },
    ],
    [
      "a Bucket that would take centuries to refill",
      () => new Bucket(1e-9, { burst: 100 }),
      {
        throws: RangeError,
        message:
          "Bucket rate (tokens per second) must be at least 5.6843418860808015e-9 for a burst of 100 (it must refill within 17592186044416 ms, 2^44), got 1e-9",
      },
    ],
    [
      "a burst past 2^53",
      () => new Bucket(10, { burst: 2 ** 60 }),
      {
        throws: RangeError,
        message: "Bucket burst (tokens) must be at most 9007199254740991 (2^53 − 1), got 1152921504606847000",
      },
    ],
    [
      "a starting clock past 2^45 ms",
      () => new Bucket(10, { now: 1e20 }),
      {
        throws: RangeError,
        message:
          "Bucket now must be within ±35184372088832 ms (±2^45, about 1 115 years either side of 1970), got 100000000000000000000",
      },
    ],
    [
      "a period shorter than the clock can tell apart",
      () => new Period(5, 1e-5),
      {
        throws: RangeError,
        message:
          "Period period (ms) must be at least 0.0625 ms (2^-4; a shorter span is too close to a clock reading's own step), got 0.00001",
      },
    ],
    [
      "a window of 1e308 ms",
      () => new Sliding(5, 1e308),
      {
        throws: RangeError,
        message: "Sliding window (ms) must be at most 17592186044416 ms (2^44, about 557 years), got 1e+308",
      },
    ],
    [
      "a sliding quota past its bound",
      () => new Sliding(2 ** 25, 1_000),
      { throws: RangeError, message: "Sliding quota must be at most 16777216 (2^24 stamps, 128 MiB), got 33554432" },
    ],
    [
      "a gate limit of 1e308",
      () => new Gate(1e308),
      {
        throws: RangeError,
        message: "Gate limit must be at most 9007199254740991 (2^53 − 1; Infinity for no ceiling), got 1e+308",
      },
    ],
    [
      "a null cost",
      (l) => l.bucket.take(T + 10, any(null)),
      { throws: TypeError, message: "Bucket.take n must be a number, got object null" },
    ],
    [
      "a bigint cost",
      (l) => l.bucket.take(T + 10, any(1n)),
      { throws: TypeError, message: "Bucket.take n must be a number, got bigint 1n" },
    ],
    [
      "a string cost",
      (l) => l.bucket.peek(T + 10, any("1")),
      { throws: TypeError, message: 'Bucket.peek n must be a number, got string "1"' },
    ],
    [
      "a boolean cost",
      (l) => l.gcra.take(T + 10, any(true)),
      { throws: TypeError, message: "Gcra.take n must be a number, got boolean true" },
    ],
    [
      "a Symbol cost",
      (l) => l.gcra.take(T + 10, any(Symbol("x"))),
      { throws: TypeError, message: "Gcra.take n must be a number, got symbol Symbol(x)" },
    ],
    [
      "a negative cost",
      (l) => l.gcra.next(T + 10, -1),
      { throws: RangeError, message: "Gcra.next n must be 0 or more, got -1" },
    ],
    [
      "a NaN cost",
      (l) => l.bucket.next(T + 10, NaN),
      { throws: RangeError, message: "Bucket.next n must be 0 or more, got NaN" },
    ],
    [
      "a clock reading that is a string",
      (l) => l.bucket.take(any("5")),
      { throws: TypeError, message: 'Bucket.take now must be a number of milliseconds, got string "5"' },
    ],
    [
      "a clock reading past 2^45 ms",
      (l) => l.sliding.take(1e20),
      {
        throws: RangeError,
        message:
          "Sliding.take now must be within ±35184372088832 ms (±2^45, about 1 115 years either side of 1970), got 100000000000000000000",
      },
    ],
    [
      "a NaN clock reading",
      (l) => l.period.next(NaN),
      { throws: RangeError, message: "Period.next now must be a finite number of milliseconds, got NaN" },
    ],
    [
      "a null clock reading",
      (l) => l.gcra.remaining(any(null)),
      { throws: TypeError, message: "Gcra.remaining now must be a number of milliseconds, got object null" },
    ],
    // Documented tolerant answers: a cost no wait can meet is refused, not thrown.
    [
      "a cost of Infinity (refused: never satisfiable)",
      (l) => [l.bucket.take(T, Infinity), l.bucket.next(T, Infinity), l.gcra.peek(T, Infinity)],
      { returns: [false, Infinity, false] },
    ],
    [
      "a cost above the burst (refused)",
      (l) => [l.bucket.take(T, 5.5), l.gcra.take(T, 6), l.gcra.next(T, 6)],
      { returns: [false, false, Infinity] },
    ],
    // An option given by a getter is read once, into the copy that is checked and used.
    [
      "an option getter that changes its answer",
      () => {
        const b = new Bucket(
          10,
          any({
            get burst() {
              return ++reads.burst === 1 ? 5 : 1e9;
            },
          }),
        );
        return [b.burst, reads.burst];
      },
      { returns: [5, 1] },
    ],
  ];

  it("the table has at least 15 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(15);
  });

  it.each(cases)("%s", (_, run, expected) => {
    const l = limiters();
    const before = state(l);
    if ("throws" in expected) {
      let error: unknown;
      try {
        run(l);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(expected.throws);
      expect((error as Error).message).toBe(expected.message);
    } else {
      expect(run(l)).toEqual(expected.returns);
    }
    expect(state(l)).toBe(before);
  });
});

describe("hostile traffic (property)", () => {
  const hostile: unknown[] = [
    null,
    undefined,
    true,
    "1",
    1n,
    Symbol("x"),
    NaN,
    -1,
    -0,
    Infinity,
    -Infinity,
    1e300,
    -1e20,
    {},
    [],
  ];

  it("bad costs and clocks mixed into real traffic, both ways in time, never put a bucket over its burst or a window over its quota", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: -300, max: 600 }),
            fc.double({ min: 0, max: 4, noNaN: true }),
            fc.integer({ min: 0, max: hostile.length * 2 }),
          ),
          { maxLength: 150 },
        ),
        fc.constantFrom(0, 1_700_000_000_000.5),
        (ops, origin) => {
          const b = new Bucket(20, { burst: 5, now: origin });
          const g = new Gcra(20, { burst: 5 });
          const s = new Sliding(5, 250);
          const admitted: number[] = []; // the stamps: a reading that stepped back is stamped at the latest
          let now = origin;
          for (const [dt, cost, bad] of ops) {
            now += dt;
            const x = bad < hostile.length ? hostile[bad] : undefined;
            const n = x !== undefined && bad % 2 === 0 ? x : cost;
            const t = x !== undefined && bad % 2 === 1 ? x : now;
            for (const call of [
              () => b.take(t as number, n as number),
              () => g.take(t as number, n as number),
              () => (s.take(t as number) ? admitted.push(Math.max(t as number, admitted.at(-1) ?? -Infinity)) : 0),
            ]) {
              try {
                call();
              } catch (error) {
                if (!(error instanceof TypeError || error instanceof RangeError)) throw error;
              }
            }
            if (b.tokens(now) > b.burst || g.remaining(now) > 5) return false;
          }
          return admitted.every((a) => admitted.filter((u) => u >= a && u - a < 250).length <= 5);
        },
      ),
    );
  });
});
