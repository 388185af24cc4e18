// A window saved relative to one reading and laid back onto another clock's.
import { describe, expect, it } from "vitest";
import { Total, Window, checkReading, layAt, layWindow, saveWindow } from "@tideward/window";

const save = (win: Window<Total>, now: number) =>
  saveWindow(
    win,
    now,
    (b) => [b.count, b.sum],
    (b) => b.count === 0,
  );

describe("saveWindow", () => {
  it("saves the live buckets oldest first, the empty ones before the first written left out", () => {
    const win = new Window(() => new Total(), { size: 4, window: 400, now: 0 });
    win.slot(110).add(5);
    win.slot(320).add(7);
    expect(save(win, 350.5)).toEqual({
      into: 50.5,
      buckets: [
        [1, 5],
        [0, 0],
        [1, 7],
      ],
    });
  });

  it("saves the bucket the reading falls in when nothing was written since it opened", () => {
    const win = new Window(() => new Total(), { size: 4, window: 400, now: 0 });
    win.slot(10).add(5);
    expect(save(win, 250)).toEqual({
      into: 50,
      buckets: [
        [1, 5],
        [0, 0],
        [0, 0],
      ],
    });
    expect(save(win, 1_000.5)).toEqual({ into: 0.5, buckets: [[0, 0]] }); // all of it aged out
  });
});

describe("layWindow", () => {
  it("lays saved buckets so the reading falls as far into the newest, on a clock of another origin", () => {
    const saved = [
      [1, 5],
      [0, 0],
      [1, 7],
    ];
    const now = 1_700_000_000_000.25;
    const win = layWindow(
      () => new Total(),
      { size: 4, window: 400, now },
      50.5,
      3,
      (b, i) => {
        b.count = saved[i][0];
        b.sum = saved[i][1];
      },
    );
    expect(save(win, now)).toEqual({ into: 50.5, buckets: saved });
    // Two buckets on, the oldest has aged out.
    expect(save(win, now + 149.5)).toEqual({
      into: 0,
      buckets: [
        [1, 7],
        [0, 0],
        [0, 0],
      ],
    });
  });
});

describe("where a restore lays a window", () => {
  it("is `age` before `now`, or two windows back once everything has aged out and the grid is coarse", () => {
    expect(layAt(1_000, 250, 10, 100)).toBe(750);
    expect(layAt(1_700_000_000_000.5, 10_000, 10, 100)).toBe(1_699_999_990_000.5); // exact there
    expect(layAt(1e18, 1e6, 10, 100)).toBe(1e18 - 200); // a step of 128 ms: laid where it aged out anyway
    // Buckets of 0.1875 ms near Date.now() (a step of 1/4096 ms): two windows and the same
    // 0.125 ms into a bucket back, so the boundaries fall where the saved ones' would have.
    expect(layAt(1_700_000_001_046.375, 1_046.375, 8, 1.5)).toBe(1_700_000_001_046.375 - 3.125);
    expect((1_700_000_001_046.375 - 3.125 - 1_700_000_000_000) % 0.1875).toBe(0);
  });

  it("refuses a reading too coarse for a bucket, naming the method", () => {
    expect(() => checkReading(1e20, 10, 100, "Thing.restore")).toThrow(
      new RangeError(
        "Thing.restore now (ms) 100000000000000000000 is too coarse a reading for buckets of 10 ms (window ÷ size): the bucket rounds away there",
      ),
    );
    expect(() => checkReading(1_700_000_000_000.5, 1_000_000, 10_000, "Thing.restore")).not.toThrow();
  });
});
