// Every public call of the time core given what a caller gets wrong: each answers with its exact
// error (or its documented tolerant answer), and leaves the clock and the deadline as they were.
import { describe, expect, it } from "vitest";
import { eachRow } from "../../../scripts/test-support/bad-input.ts";
import type { Row } from "../../../scripts/test-support/bad-input.ts";
import { Deadline, ManualClock, formatSpan, parseSpan, seededRandom } from "@tideward/time";
import { check } from "@tideward/time/internal";

interface State {
  readonly clock: ManualClock;
  readonly deadline: Deadline;
}

const fresh = (): State => ({
  clock: new ManualClock(1_700_000_000_000.5),
  deadline: Deadline.start(250, 1_700_000_000_000),
});
const snapshot = (s: State): unknown[] => [
  s.clock.now(),
  s.deadline.started,
  s.deadline.budget,
  s.deadline.end,
  s.deadline.bounded,
];

const not = <T>(x: unknown): T => x as T;

const rows: Row<State>[] = [
  [
    "ManualClock start given as text",
    () => new ManualClock(not("5")),
    { throws: TypeError, message: 'ManualClock start must be a number, got string "5"' },
  ],
  [
    "ManualClock start NaN",
    () => new ManualClock(Number.NaN),
    { throws: RangeError, message: "ManualClock start must be a finite number, got NaN" },
  ],
  [
    "advance by a negative span",
    (s) => s.clock.advance(-1),
    { throws: RangeError, message: "ManualClock.advance span must be 0 or more, got -1" },
  ],
  [
    "advance by NaN",
    (s) => s.clock.advance(Number.NaN),
    { throws: RangeError, message: "ManualClock.advance span must be a finite number, got NaN" },
  ],
  [
    "advance by Infinity",
    (s) => s.clock.advance(Infinity),
    { throws: RangeError, message: "ManualClock.advance span must be a finite number, got Infinity" },
  ],
  [
    "advance by text",
    (s) => s.clock.advance(not("5")),
    { throws: TypeError, message: 'ManualClock.advance span must be a number, got string "5"' },
  ],
  [
    "advance by a BigInt",
    (s) => s.clock.advance(not(5n)),
    { throws: TypeError, message: "ManualClock.advance span must be a number, got bigint 5n" },
  ],
  [
    "advance past the largest number",
    () => new ManualClock(1e308).advance(1e308),
    { throws: RangeError, message: "ManualClock.advance span must keep the reading finite, got 1e+308 at 1e+308" },
  ],
  [
    "set to Infinity",
    (s) => s.clock.set(Infinity),
    { throws: RangeError, message: "ManualClock.set time must be a finite number, got Infinity" },
  ],
  [
    "set to null",
    (s) => s.clock.set(not(null)),
    { throws: TypeError, message: "ManualClock.set time must be a number, got object null" },
  ],
  [
    "Deadline budget given as text",
    () => Deadline.start(not("5"), 0),
    {
      throws: TypeError,
      message: 'Deadline budget must be a number of milliseconds (0 or less for none), got string "5"',
    },
  ],
  [
    "Deadline budget NaN",
    () => Deadline.start(Number.NaN, 0),
    { throws: RangeError, message: "Deadline budget must be a number of milliseconds (0 or less for none), got NaN" },
  ],
  [
    "Deadline start NaN",
    () => Deadline.start(10, Number.NaN),
    { throws: RangeError, message: "Deadline start time must be a finite number, got NaN" },
  ],
  [
    "Deadline start given as text",
    () => Deadline.start(10, not("0")),
    { throws: TypeError, message: 'Deadline start time must be a number, got string "0"' },
  ],
  ["remaining at NaN", (s) => s.deadline.remaining(Number.NaN), { answers: 0 }],
  ["expired at NaN", (s) => s.deadline.expired(Number.NaN), { answers: true }],
  ["remaining at a Symbol", (s) => s.deadline.remaining(not(Symbol("now"))), { answers: 0 }],
  ["remaining before the start", (s) => s.deadline.remaining(0), { answers: 250 }],
  [
    "formatSpan of NaN",
    () => formatSpan(Number.NaN),
    { throws: RangeError, message: "formatSpan span must be a finite number, got NaN" },
  ],
  [
    "formatSpan of text",
    () => formatSpan(not("5")),
    { throws: TypeError, message: 'formatSpan span must be a number, got string "5"' },
  ],
  ["formatSpan of 1e306", () => formatSpan(1e306), { answers: "1e+306ms" }],
  [
    "parseSpan of null",
    () => parseSpan(not(null)),
    {
      throws: TypeError,
      message: 'parseSpan expects a string such as "1.5s" or a number of milliseconds, got object null',
    },
  ],
  [
    "parseSpan of an unknown unit",
    () => parseSpan("5 parsecs"),
    { throws: RangeError, message: 'parseSpan: unknown unit "parsecs" in "5 parsecs"; use ns, us, ms, s, m, h or d' },
  ],
  [
    "parseSpan past the largest number",
    () => parseSpan("1e308d"),
    { throws: RangeError, message: 'parseSpan: "1e308d" is too large to represent in milliseconds' },
  ],
  [
    "seededRandom of text",
    () => seededRandom(not("1")),
    { throws: TypeError, message: 'seededRandom seed must be a number, got string "1"' },
  ],
  [
    "check.fn of null",
    () => check.fn(null, "retry fn"),
    { throws: TypeError, message: "retry fn must be a function, got null" },
  ],
];

describe("bad input to the time core", () => {
  it("has at least fifteen cases", () => {
    expect(rows.length).toBeGreaterThanOrEqual(15);
  });

  eachRow(rows, fresh, snapshot);

  it("a sleep the clock refuses rejects, and leaves the clock where it was", async () => {
    const s = fresh();
    const before = snapshot(s);
    await expect(s.clock.sleep(Number.NaN)).rejects.toThrow(
      new RangeError("ManualClock.advance span must be a finite number, got NaN"),
    );
    expect(snapshot(s)).toEqual(before);
  });
});
