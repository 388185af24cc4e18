// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import { describe, expectTypeOf, test } from "vitest";
import { Tally, Total, Window } from "@tideward/window";
import type { EachOptions, Outcome, Resettable, WindowOptions } from "@tideward/window";

describe("Window", () => {
  test("holds the caller's bucket type and hands it back", () => {
    const win = new Window(() => new Tally(), { size: 10, window: 1_000 });
    expectTypeOf(win).toEqualTypeOf<Window<Tally>>();
    expectTypeOf(win.slot(0)).toEqualTypeOf<Tally>();
    expectTypeOf(new Window(() => new Total(), { size: 4, window: 400 }).slot(0).mean).toEqualTypeOf<
      number | undefined
    >();
    win.each(
      0,
      (bucket, start) => {
        expectTypeOf(bucket).toEqualTypeOf<Tally>();
        expectTypeOf(start).toEqualTypeOf<number>();
      },
      { current: false } satisfies EachOptions,
    );
  });

  test("takes any bucket that can reset itself", () => {
    class Max implements Resettable {
      value = 0;
      reset() {
        this.value = 0;
      }
    }
    expectTypeOf(
      new Window(() => new Max(), { size: 2, window: 100, evict: (b) => expectTypeOf(b).toEqualTypeOf<Max>() }).slot(0)
        .value,
    ).toEqualTypeOf<number>();
    expectTypeOf<WindowOptions<Max>["evict"]>().toEqualTypeOf<((bucket: Max) => void) | undefined>();
    // @ts-expect-error -- a bucket must have reset()
    new Window(() => ({ count: 0 }), { size: 2, window: 100 });
    // @ts-expect-error -- size and window are required
    new Window(() => new Tally(), { size: 2 });
  });
});

describe("Tally", () => {
  test("counts three outcomes", () => {
    expectTypeOf<Outcome>().toEqualTypeOf<"success" | "failure" | "drop">();
    expectTypeOf<Tally["add"]>().parameters.toEqualTypeOf<[outcome: Outcome]>();
    // @ts-expect-error -- not an outcome
    new Tally().add("timeout");
  });
});
