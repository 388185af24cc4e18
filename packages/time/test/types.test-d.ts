// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import { describe, expectTypeOf, test } from "vitest";
import {
  Deadline,
  ManualClock,
  formatSpan,
  ms,
  parseSpan,
  seconds,
  seededRandom,
  systemClock,
  systemRandom,
} from "@tideward/time";
import type { Clock, Random, Span, SpanInput } from "@tideward/time";

describe("spans", () => {
  test("are milliseconds as numbers, parsed from text or numbers", () => {
    expectTypeOf<Span>().toEqualTypeOf<number>();
    expectTypeOf<SpanInput>().toEqualTypeOf<number | string>();
    expectTypeOf(parseSpan("1.5s")).toEqualTypeOf<Span>();
    expectTypeOf(parseSpan(250)).toEqualTypeOf<Span>();
    expectTypeOf(formatSpan(seconds(1))).toEqualTypeOf<string>();
    expectTypeOf(ms).parameters.toEqualTypeOf<[number]>();
    // @ts-expect-error -- formatSpan takes milliseconds, not text
    formatSpan("1s");
    // @ts-expect-error -- a span is not a Date
    parseSpan(new Date());
  });
});

describe("clocks and randomness", () => {
  test("a Clock and a Random are plain functions of no argument", () => {
    expectTypeOf<Clock>().toEqualTypeOf<() => number>();
    expectTypeOf<Random>().toEqualTypeOf<() => number>();
    expectTypeOf(systemClock).toEqualTypeOf<Clock>();
    expectTypeOf(systemRandom).toEqualTypeOf<Random>();
    expectTypeOf(seededRandom(1)).toEqualTypeOf<Random>();
    expectTypeOf(performance.now.bind(performance)).toExtend<Clock>();
    expectTypeOf(Math.random).toExtend<Random>();
  });

  test("a ManualClock's now is a Clock, and it is moved explicitly", () => {
    const clock = new ManualClock(0);
    expectTypeOf(clock.now).toEqualTypeOf<Clock>();
    expectTypeOf(clock.advance(1_000)).toEqualTypeOf<number>();
    expectTypeOf(clock.sleep(10)).toEqualTypeOf<Promise<void>>();
    // @ts-expect-error -- now is read-only: move the clock with advance or set
    clock.now = () => 5;
  });
});

describe("Deadline", () => {
  test("is started, not constructed, and may have no budget", () => {
    const d = Deadline.start(2_000, 0);
    expectTypeOf(d.remaining(0)).toEqualTypeOf<Span | undefined>();
    expectTypeOf(d.expired(0)).toEqualTypeOf<boolean>();
    expectTypeOf(d.bounded).toEqualTypeOf<boolean>();
    // @ts-expect-error -- the constructor is private: Deadline.start
    new Deadline();
    // @ts-expect-error -- the budget is fixed once started
    d.budget = 5;
  });
});
