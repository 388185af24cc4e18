import { describe, expect, it } from "vitest";
import { check } from "@tideward/time/internal";

describe("check", () => {
  it("names the field, the value and the expectation", () => {
    expect(() => check.positive(0, "Bucket rate")).toThrow("Bucket rate must be above 0, got 0");
    expect(() => check.positive(-0, "rate")).toThrow("rate must be above 0, got -0");
    expect(() => check.nonNegative(-1, "base")).toThrow("base must be 0 or more, got -1");
    expect(() => check.finite("7", "size")).toThrow(new TypeError('size must be a number, got string "7"'));
    expect(() => check.finite(Infinity, "size")).toThrow(new RangeError("size must be a finite number, got Infinity"));
    expect(() => check.integer(1.5, "size", 1)).toThrow("size must be a whole number, got 1.5");
    expect(() => check.integer(0, "size", 1)).toThrow("size must be 1 or more, got 0");
    expect(() => check.between(2, 0, 1, "f")).toThrow("f must be between 0 and 1, got 2");
  });

  it("returns the value when it is good", () => {
    expect(check.positive(3, "x")).toBe(3);
    expect(check.nonNegative(0, "x")).toBe(0);
    expect(check.integer(4, "x", 1)).toBe(4);
    expect(check.between(0.5, 0, 1, "x")).toBe(0.5);
  });
});

describe("check.options", () => {
  const known = ["burst", "now"] as const;
  type Opts = { burst?: number; now?: number };

  it("names a misspelt option and the closest known one", () => {
    expect(() => check.options<Opts>({ brust: 10 } as Opts, known, "Bucket")).toThrow(
      new TypeError('Bucket has no option "brust"; did you mean "burst"?'),
    );
    expect(() => check.options<Opts>({ Now: 1 } as Opts, known, "Bucket")).toThrow('did you mean "now"?');
  });

  it("lists the options when nothing is close", () => {
    expect(() => check.options<Opts>({ kk: 2 } as Opts, known, "Bucket")).toThrow(
      new TypeError('Bucket has no option "kk"; its options are "burst", "now"'),
    );
  });

  it("refuses what is not an object, naming the argument", () => {
    expect(() => check.options<Opts>(null as unknown as Opts, known, "Bucket")).toThrow(
      new TypeError("Bucket options must be an object, got null"),
    );
    expect(() => check.options<Opts>("abc" as unknown as Opts, known, "Breaker", "policy")).toThrow(
      new TypeError('Breaker policy must be an object, got string "abc"'),
    );
    expect(() => check.options<Opts>(5 as unknown as Opts, known, "Breaker", "policy")).toThrow("got number 5");
    expect(() => check.options<Opts>([] as unknown as Opts, known, "Bucket")).toThrow("got an array");
  });

  it("reads each field once and returns a frozen copy without undefined fields", () => {
    let reads = 0;
    const given = {
      get burst() {
        reads++;
        return reads === 1 ? 10 : -1e6;
      },
      now: undefined,
    };
    const copy = check.options<Opts>(given, known, "Bucket");
    expect(copy).toEqual({ burst: 10 });
    expect(copy.burst).toBe(10);
    expect(reads).toBe(1);
    expect(Object.isFrozen(copy)).toBe(true);
    expect("now" in copy).toBe(false);
    expect(check.options<Opts>(undefined, known, "Bucket")).toEqual({});
  });

  it("suggests only names within a slip", () => {
    expect(check.closest("brust", ["burst", "now"])).toBe("burst");
    expect(check.closest("x", ["burst", "now"])).toBeUndefined();
    expect(check.closest("windwo", ["window", "size"])).toBe("window");
  });
});
