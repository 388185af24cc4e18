import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Gate } from "@tideward/limiters";

describe("Gate", () => {
  it("lets limit in at once and refuses the next until one leaves", () => {
    const g = new Gate(2);
    expect([g.enter(), g.enter(), g.enter()]).toEqual([true, true, false]);
    expect(g.held).toBe(2);
    expect(g.peek()).toBe(false);
    g.leave();
    expect(g.held).toBe(1);
    expect(g.peek()).toBe(true);
    expect(g.held).toBe(1); // peeking takes no room
    expect(g.enter()).toBe(true);
  });

  it("has no ceiling at a limit of zero or less, or Infinity", () => {
    for (const limit of [0, -1, -100, Infinity]) {
      const g = new Gate(limit);
      let entered = 0;
      for (let i = 0; i < 10_000; i++) if (g.enter()) entered++;
      expect(entered).toBe(10_000);
      expect(g.rateLimit()).toEqual({ limit: Infinity, remaining: Infinity, reset: 0 });
    }
  });

  it("never lets held go negative, however often leave is called", () => {
    const g = new Gate(1);
    g.leave();
    g.leave();
    expect(g.held).toBe(0);
    expect(g.enter()).toBe(true);
    expect(g.enter()).toBe(false); // the extra leaves bought no extra room
  });

  it("reports limit, remaining and a reset of 0 (it frees room on leave, not at a time)", () => {
    const g = new Gate(3);
    g.enter();
    expect(g.rateLimit(123)).toEqual({ limit: 3, remaining: 2, reset: 0 });
  });

  it("property: held is entries minus effective leaves, within [0, limit], under any sequence", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -2, max: 8 }),
        fc.array(fc.boolean(), { maxLength: 200, size: "max" }),
        (limit, steps) => {
          const g = new Gate(limit);
          let model = 0;
          let bad = 0;
          for (const enter of steps) {
            if (enter) {
              const room = limit <= 0 || model < limit;
              if (g.enter() !== room) bad++;
              if (room) model++;
            } else {
              g.leave();
              if (model > 0) model--;
            }
            if (g.held !== model || g.held < 0 || (limit > 0 && g.held > limit)) bad++;
          }
          return bad === 0;
        },
      ),
    );
  });
});
