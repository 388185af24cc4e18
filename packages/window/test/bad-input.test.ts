// Bad input to the window and its buckets: each case answers with its exact error (or its
// documented tolerant answer) and leaves every window, tally and total as it was.
import { describe, expect, it } from "vitest";
import { eachRow } from "../../../scripts/test-support/bad-input.ts";
import type { Row } from "../../../scripts/test-support/bad-input.ts";
import { Tally, Total, Window } from "@tideward/window";
import type { WindowOptions } from "@tideward/window";

class Counter {
  n = 0;
  reset(): void {
    this.n = 0;
  }
}

const ORIGIN = 1_700_000_000_000.25;

interface State {
  readonly win: Window<Counter>;
  readonly total: Total;
  readonly tally: Tally;
}

function fresh(): State {
  const win = new Window(() => new Counter(), { size: 4, window: 1_000, now: ORIGIN });
  win.slot(ORIGIN).n = 3;
  win.slot(ORIGIN + 600.5).n = 5;
  const total = new Total();
  total.add(10);
  total.add(2.5);
  const tally = new Tally();
  tally.add("success");
  tally.add("failure");
  return { win, total, tally };
}

function snapshot(s: State): unknown {
  const buckets: [number, number][] = [];
  s.win.each(ORIGIN + 600.5, (b, start) => buckets.push([b.n, start]));
  return { buckets, end: s.win.headEnd, total: [s.total.sum, s.total.count], tally: { ...s.tally } };
}

const not = <T>(x: unknown): T => x as T;
const make = (): Counter => new Counter();
const build = (options: unknown): Window<Counter> => new Window(make, not<WindowOptions<Counter>>(options));
const headOf = (s: State): Counter => s.win.slot(ORIGIN + 600.5);

const rows: Row<State>[] = [
  [
    "make is not a function",
    () => new Window(not(null), { size: 4, window: 1_000 }),
    { throws: TypeError, message: "Window make must be a function, got null" },
  ],
  [
    "no options",
    () => build(undefined),
    { throws: TypeError, message: "Window options must be an object, got undefined" },
  ],
  ["null options", () => build(null), { throws: TypeError, message: "Window options must be an object, got null" }],
  [
    "options given as text",
    () => build("abc"),
    { throws: TypeError, message: 'Window options must be an object, got string "abc"' },
  ],
  [
    "options given as an array",
    () => build([4, 1_000]),
    { throws: TypeError, message: "Window options must be an object, got an array" },
  ],
  [
    "a misspelt option",
    () => build({ size: 4, windwo: 1_000 }),
    { throws: TypeError, message: 'Window has no option "windwo"; did you mean "window"?' },
  ],
  [
    "no size",
    () => build({ window: 1_000 }),
    { throws: TypeError, message: "Window size is required: a number of buckets" },
  ],
  [
    "size NaN",
    () => build({ size: Number.NaN, window: 10 }),
    { throws: RangeError, message: "Window size must be a finite number, got NaN" },
  ],
  [
    "size negative",
    () => build({ size: -1, window: 10 }),
    { throws: RangeError, message: "Window size must be 0 or more (under one is raised to one), got -1" },
  ],
  [
    "size given as text",
    () => build({ size: "4", window: 10 }),
    { throws: TypeError, message: 'Window size must be a number, got string "4"' },
  ],
  [
    "10^8 buckets",
    () => build({ size: 1e8, window: 1e8 }),
    { throws: RangeError, message: "Window size must be at most 1000000 buckets, got 100000000" },
  ],
  [
    "2^32 buckets",
    () => build({ size: 2 ** 32, window: 1e12 }),
    { throws: RangeError, message: "Window size must be at most 1000000 buckets, got 4294967296" },
  ],
  [
    "window Infinity",
    () => build({ size: 4, window: Infinity }),
    { throws: RangeError, message: "Window window (ms) must be a finite number, got Infinity" },
  ],
  [
    "window negative",
    () => build({ size: 4, window: -5 }),
    { throws: RangeError, message: "Window window (ms) must be 0 or more, got -5" },
  ],
  [
    "window of 0",
    () => build({ size: 4, window: 0 }),
    { throws: RangeError, message: "Window window (ms) must be at least 0.04 for 4 buckets (0.01 ms a bucket), got 0" },
  ],
  [
    "buckets narrower than 0.01 ms",
    () => build({ size: 40, window: 0.1 }),
    {
      throws: RangeError,
      message: "Window window (ms) must be at least 0.4 for 40 buckets (0.01 ms a bucket), got 0.1",
    },
  ],
  [
    "now NaN",
    () => build({ size: 4, window: 10, now: Number.NaN }),
    { throws: RangeError, message: "Window now must be a finite number, got NaN" },
  ],
  [
    "now null",
    () => build({ size: 4, window: 10, now: null }),
    { throws: TypeError, message: "Window now must be a number, got object null" },
  ],
  [
    "make returning nothing",
    () =>
      new Window(
        not(() => undefined),
        { size: 4, window: 1_000 },
      ),
    { throws: TypeError, message: "Window make must return a bucket with a reset() method, got undefined" },
  ],
  [
    "make returning a bucket without reset()",
    () =>
      new Window(
        not(() => ({ n: 0 })),
        { size: 4, window: 1_000 },
      ),
    { throws: TypeError, message: "Window make must return a bucket with a reset() method, got [object Object]" },
  ],
  [
    "each without a function",
    (s) => s.win.each(ORIGIN, not(undefined)),
    { throws: TypeError, message: "Window.each f must be a function, got undefined" },
  ],
  [
    "each with current as text",
    (s) => s.win.each(ORIGIN, () => undefined, not({ current: "no" })),
    { throws: TypeError, message: 'Window.each current must be true or false, got "no"' },
  ],
  [
    "each with a misspelt option",
    (s) => s.win.each(ORIGIN, () => undefined, not({ curent: false })),
    { throws: TypeError, message: 'Window.each has no option "curent"; did you mean "current"?' },
  ],
  [
    "evict is not a function",
    () => build({ size: 4, window: 10, evict: 5 }),
    { throws: TypeError, message: "Window evict must be a function, got number 5" },
  ],
  ["a write at NaN", (s) => s.win.slot(Number.NaN) === headOf(s), { answers: true }],
  ["a write at a Symbol", (s) => s.win.slot(not(Symbol("now"))) === headOf(s), { answers: true }],
  ["a write at a BigInt", (s) => s.win.slot(not(10n ** 15n)) === headOf(s), { answers: true }],
  ["a write at -Infinity", (s) => s.win.slot(-Infinity) === headOf(s), { answers: true }],
  [
    "Total.add of text",
    (s) => s.total.add(not("5")),
    { throws: TypeError, message: 'Total.add value must be a number, got string "5"' },
  ],
  ["Total.add of NaN", (s) => (s.total.add(Number.NaN), s.total.mean), { answers: 6.25 }],
  ["Total.add of Infinity", (s) => (s.total.add(Infinity), s.total.mean), { answers: 6.25 }],
  [
    "Total.add past the largest number",
    () => {
      const t = new Total();
      t.add(Number.MAX_VALUE);
      t.add(Number.MAX_VALUE); // would make the sum Infinity: skipped
      return [t.sum, t.count];
    },
    { answers: [Number.MAX_VALUE, 1] },
  ],
  [
    "Tally.add of a misspelt outcome",
    (s) => s.tally.add(not("sucess")),
    { throws: TypeError, message: 'Tally.add outcome must be "success", "failure" or "drop", got string "sucess"' },
  ],
];

describe("bad input to the window", () => {
  it("has at least fifteen cases", () => {
    expect(rows.length).toBeGreaterThanOrEqual(15);
  });

  eachRow(rows, fresh, snapshot);

  it("reads each option once, so a getter cannot change a size between the check and the use", () => {
    let reads = 0;
    const options = {
      get size() {
        reads++;
        return reads === 1 ? 4 : 1e9;
      },
      window: 1_000,
    };
    const win = new Window(make, options);
    expect([win.size, reads]).toEqual([4, 1]);
  });
});
