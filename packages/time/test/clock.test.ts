import { describe, expect, it } from "vitest";
import { ManualClock, systemClock } from "@tideward/time";

describe("systemClock", () => {
  it("reads milliseconds on the wall-clock scale and never runs backwards", () => {
    const a = systemClock();
    expect(Math.abs(a - Date.now())).toBeLessThan(60_000);
    let last = a;
    let backwards = 0;
    for (let i = 0; i < 100_000; i++) {
      const t = systemClock();
      if (t < last) backwards++;
      last = t;
    }
    expect(backwards).toBe(0);
    expect(last).toBeGreaterThanOrEqual(a);
  });
});

describe("ManualClock", () => {
  it("stands still until advanced", () => {
    const clock = new ManualClock(100);
    expect(clock.now()).toBe(100);
    expect(clock.now()).toBe(100);
    expect(clock.advance(50)).toBe(150);
    expect(clock.now()).toBe(150);
  });

  it("hands out now as a bound function", () => {
    const clock = new ManualClock();
    const read = clock.now;
    clock.advance(7);
    expect(read()).toBe(7);
  });

  it("refuses to go backwards through advance, but set moves anywhere", () => {
    const clock = new ManualClock(10);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance(-1)).toThrow(/advance span must be 0 or more, got -1/);
    expect(() => clock.advance(Number.NaN)).toThrow(/got NaN/);
    expect(clock.now()).toBe(10);
    expect(clock.set(3)).toBe(3);
    expect(() => clock.set(Infinity)).toThrow(RangeError);
    expect(() => new ManualClock(Number.NaN)).toThrow(/ManualClock start must be a finite number, got NaN/);
  });

  it("refuses to carry the reading past the largest finite number, and stays put", () => {
    const clock = new ManualClock(1e308);
    expect(() => clock.advance(1e308)).toThrow(
      new RangeError("ManualClock.advance span must keep the reading finite, got 1e+308 at 1e+308"),
    );
    expect(clock.now()).toBe(1e308);
    expect(clock.advance(Number.MAX_VALUE - 1e308)).toBe(Number.MAX_VALUE);
  });

  it("moves to now + span as a caller computes it, at any magnitude", () => {
    const epoch = 1_700_000_000_000.25;
    const clock = new ManualClock(epoch);
    expect(clock.advance(0.1)).toBe(epoch + 0.1); // 0.1 is not on this grid: rounded as the sum rounds
    expect(clock.advance(0.0001)).toBe(epoch + 0.1); // under half a step (2^-13 ms): stays
    expect(new ManualClock(0).advance(1e-320)).toBe(1e-320);
  });

  it("sleeps by advancing, and refuses an aborted signal", async () => {
    const clock = new ManualClock(0);
    await clock.sleep(1_000);
    expect(clock.now()).toBe(1_000);
    const ctl = new AbortController();
    ctl.abort(new Error("stop"));
    await expect(clock.sleep(5, ctl.signal)).rejects.toThrow("stop");
    expect(clock.now()).toBe(1_000);
    // A span advance refuses is a rejection, not a throw from the call.
    const refused = clock.sleep(-1);
    await expect(refused).rejects.toThrow(new RangeError("ManualClock.advance span must be 0 or more, got -1"));
    expect(clock.now()).toBe(1_000);
  });
});
