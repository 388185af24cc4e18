import { describe, expect, it } from "vitest";
import { Tally, Total, Window } from "@tideward/window";

class Counter {
  n = 0;
  resets = 0;
  reset(): void {
    this.n = 0;
    this.resets++;
  }
}

function sums(win: Window<Counter>, now: number, current = true): number[] {
  const out: number[] = [];
  win.each(now, (b) => out.push(b.n), { current });
  return out;
}

describe("Window", () => {
  it("has size buckets of window/size milliseconds", () => {
    const win = new Window(() => new Counter(), { size: 4, window: 1_000 });
    expect(win.size).toBe(4);
    expect(win.width).toBe(250);
  });

  it("writes within one bucket's width land in the same bucket", () => {
    const win = new Window(() => new Counter(), { size: 4, window: 1_000, now: 0 });
    win.slot(0).n++;
    win.slot(249.9).n++;
    win.slot(250).n++;
    expect(sums(win, 250)).toEqual([2, 1]);
  });

  it("snaps the head to bucket boundaries rather than to write times", () => {
    const win = new Window(() => new Counter(), { size: 4, window: 1_000, now: 0 });
    win.slot(240).n++;
    win.slot(260).n++; // a new bucket though only 20 ms after the first write
    const starts: number[] = [];
    win.each(260, (_, start) => starts.push(start));
    expect(starts).toEqual([0, 250]);
  });

  it("visits live buckets oldest first and ages out old ones when read later", () => {
    const win = new Window(() => new Counter(), { size: 4, window: 1_000, now: 0 });
    for (let i = 0; i < 4; i++) win.slot(i * 250).n += i + 1;
    expect(sums(win, 999)).toEqual([1, 2, 3, 4]);
    // Nobody writes, yet reading later drops the oldest buckets; twice at the same now agrees.
    expect(sums(win, 1_000)).toEqual([2, 3, 4]);
    expect(sums(win, 1_000)).toEqual([2, 3, 4]);
    expect(sums(win, 1_600)).toEqual([4]);
    expect(sums(win, 1_750)).toEqual([]);
    // Reading cleared nothing: an earlier reading still sees everything.
    expect(sums(win, 999)).toEqual([1, 2, 3, 4]);
  });

  it("leaves the partial current bucket out when asked", () => {
    const win = new Window(() => new Counter(), { size: 4, window: 1_000, now: 0 });
    win.slot(0).n = 5;
    win.slot(300).n = 7;
    expect(sums(win, 300, false)).toEqual([5]);
    expect(sums(win, 300, true)).toEqual([5, 7]);
    // Later, the bucket at 300 is finished and counts.
    expect(sums(win, 500, false)).toEqual([5, 7]);
  });

  it("clears the buckets a gap swept past when written later", () => {
    const win = new Window(() => new Counter(), { size: 4, window: 1_000, now: 0 });
    for (let i = 0; i < 4; i++) win.slot(i * 250).n = 1;
    win.slot(1_500).n += 10; // buckets 4, 5, 6 (slots 0, 1, 2) are cleared before the write
    expect(sums(win, 1_500)).toEqual([1, 0, 0, 10]);
  });

  it("writes into the current bucket when the clock steps back", () => {
    const win = new Window(() => new Counter(), { size: 4, window: 1_000, now: 0 });
    win.slot(0).n = 1;
    win.slot(600).n = 2;
    win.slot(10).n += 5; // steps back into bucket 0's time: lands in the current bucket (600)
    expect(sums(win, 600)).toEqual([1, 0, 7]);
    win.slot(-1e9).n += 1; // before the window ever opened
    expect(sums(win, 600)).toEqual([1, 0, 8]);
    // Reading at an earlier now also stands still rather than resurrecting anything.
    expect(sums(win, 0)).toEqual([1, 0, 8]);
  });

  it("treats a NaN or infinite reading as standing still, on writes and reads", () => {
    const win = new Window(() => new Counter(), { size: 4, window: 1_000, now: 0 });
    win.slot(300).n = 1;
    for (const now of [Number.NaN, Infinity, -Infinity]) win.slot(now).n += 2;
    expect(sums(win, 300)).toEqual([0, 7]);
    expect(sums(win, Infinity)).toEqual([0, 7]);
    expect(sums(win, Number.NaN, false)).toEqual([0]);
  });

  it("clears a gap longer than the window in O(size), not O(gap)", () => {
    const made: Counter[] = [];
    const win = new Window(
      () => {
        const c = new Counter();
        made.push(c);
        return c;
      },
      { size: 8, window: 80, now: 0 },
    );
    win.slot(0).n = 3;
    win.slot(1e15).n = 1;
    expect(made.reduce((a, c) => a + c.resets, 0)).toBe(8);
    expect(sums(win, 1e15)).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(made.length).toBe(8);
  });

  it("stands still on Infinity and on a reading past 2^53 buckets instead of throwing or hanging", () => {
    const win = new Window(() => new Counter(), { size: 4, window: 1_000, now: 0 });
    win.slot(300).n = 1;
    win.slot(Infinity).n += 1; // used to read bucket NaN and throw a TypeError
    win.slot(Number.NaN).n += 1;
    expect(sums(win, 300)).toEqual([0, 3]);
    expect(sums(win, Infinity)).toEqual([0, 3]);
    // 2^53 buckets of 0.01 ms past the origin: there i + 1 === i and the sweep loop used to spin
    // forever. The window stands still instead (some 2 800 years past its origin).
    const fine = new Window(() => new Counter(), { size: 4, window: 0.04, now: 0 });
    fine.slot(1).n = 1;
    fine.slot(1e14).n += 1;
    expect(sums(fine, 1e14)).toEqual([0, 0, 0, 2]); // landed in the bucket of now = 1
  });

  it("makes its buckets once and never allocates another", () => {
    let made = 0;
    const win = new Window(() => (made++, new Counter()), { size: 5, window: 50 });
    for (let t = 0; t < 10_000; t += 3) win.slot(t).n++;
    expect(made).toBe(5);
  });

  it("calls evict with each bucket before clearing it", () => {
    let evicted = 0;
    const win = new Window(() => new Counter(), { size: 4, window: 4, now: 0, evict: (b) => (evicted += b.n) });
    for (let t = 0; t < 4; t++) win.slot(t).n = 10 + t;
    win.slot(5); // sweeps buckets 4 and 5 (slots 0 and 1: values 10 and 11)
    expect(evicted).toBe(21);
  });

  it("raises a size under one and rounds a fraction down", () => {
    expect(new Window(() => new Counter(), { size: 0, window: 10 }).size).toBe(1);
    expect(new Window(() => new Counter(), { size: 0.5, window: 10 }).size).toBe(1);
    expect(new Window(() => new Counter(), { size: 3.9, window: 30 }).size).toBe(3);
    expect(new Window(() => new Counter(), { size: 10, window: 0.1 }).width).toBe(0.01);
    // One bucket past the bound is refused before any bucket is made.
    let made = 0;
    expect(() => new Window(() => (made++, new Counter()), { size: Window.maxSize + 1, window: 1e9 })).toThrow(
      RangeError,
    );
    expect([Window.maxSize, made]).toEqual([1_000_000, 0]);
  });
});

describe("Tally and Total", () => {
  it("a tally counts drops in total", () => {
    const t = new Tally();
    t.add("success");
    t.add("failure");
    t.add("drop");
    t.add("drop");
    expect([t.total, t.success, t.failure, t.drop]).toEqual([4, 1, 1, 2]);
    t.reset();
    expect([t.total, t.success, t.failure, t.drop]).toEqual([0, 0, 0, 0]);
  });

  it("a total has a mean once it has a value", () => {
    const t = new Total();
    expect(t.mean).toBeUndefined();
    t.add(10);
    t.add(20);
    expect([t.sum, t.count, t.mean]).toEqual([30, 2, 15]);
    t.reset();
    expect(t.mean).toBeUndefined();
  });
});
