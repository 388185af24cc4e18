import { describe, expect, it } from "vitest";
import { check } from "@tideward/time";

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
