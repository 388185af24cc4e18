import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { EventQueue, Simulator } from "@tideward/sim";
import { STARTS } from "./helpers";

describe("EventQueue", () => {
  it("pops in time order, ties in the order they were pushed", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 300 }), (times) => {
        const q = new EventQueue();
        const f = () => {};
        times.forEach((t, i) => q.push(t, f, i));
        const out: [number, number][] = [];
        while (q.pop() !== undefined) out.push([q.time, q.arg]);
        const expected = times.map((t, i) => [t, i] as [number, number]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        expect(out).toEqual(expected);
      }),
    );
  });

  it("pops events from channels, the lane and the heap in exactly the order one heap would", () => {
    // Each step: push to the heap, to a channel (in order or not), to the lane, pop one, or pop
    // one only if it comes before a time.
    const step = fc.oneof(
      fc.record({ op: fc.constant("push" as const), dt: fc.integer({ min: 0, max: 30 }) }),
      fc.record({
        op: fc.constant("channel" as const),
        dt: fc.integer({ min: 0, max: 30 }),
        ch: fc.integer({ min: 0, max: 2 }),
      }),
      fc.record({ op: fc.constant("lane" as const), dt: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ op: fc.constant("pop" as const) }),
      fc.record({ op: fc.constant("before" as const), dt: fc.integer({ min: 0, max: 30 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 400 }), (steps) => {
        const q = new EventQueue();
        const reference: { t: number; seq: number; id: number }[] = [];
        const f = () => {};
        let now = 0;
        let seq = 0;
        let lane: { t: number; seq: number; id: number } | undefined;
        const got: number[] = [];
        const want: number[] = [];
        const popBoth = (before?: number) => {
          const all = [...reference, ...(lane === undefined ? [] : [lane])].sort((a, b) => a.t - b.t || a.seq - b.seq);
          const first = all[0];
          if (q.pop(before) === undefined) {
            // Nothing is taken: none is waiting, or the first is not before `before`.
            if (before === undefined || first === undefined) expect(first).toBeUndefined();
            else expect(first.t).toBeGreaterThanOrEqual(before);
            expect(q.size).toBe(all.length);
            return false;
          }
          if (before !== undefined) expect(first.t).toBeLessThan(before);
          got.push(q.arg);
          want.push(first.id);
          if (first === lane) lane = undefined;
          else reference.splice(reference.indexOf(first), 1);
          now = q.time;
          return true;
        };
        steps.forEach((s, id) => {
          if (s.op === "pop") return void popBoth();
          if (s.op === "before") return void popBoth(now + s.dt);
          const t = now + s.dt;
          if (s.op === "push") q.push(t, f, id);
          else if (s.op === "channel") q.channel(s.ch, t, f, id);
          else q.lane(t, f, id);
          const e = { t, seq: seq++, id };
          if (s.op === "lane") lane = e;
          else reference.push(e);
        });
        while (popBoth());
        expect(got).toEqual(want);
      }),
      { numRuns: 200 },
    );
  });

  it("interleaves pushes and pops correctly as it grows", () => {
    const q = new EventQueue();
    const f = () => {};
    let t = 0;
    const popped: number[] = [];
    for (let i = 0; i < 10_000; i++) {
      q.push(t + ((i * 7919) % 101), f, i);
      if (i % 3 === 0) {
        q.pop();
        popped.push(q.time);
        t = q.time;
      }
    }
    while (q.pop() !== undefined) popped.push(q.time);
    for (let i = 1; i < popped.length; i++) expect(popped[i]).toBeGreaterThanOrEqual(popped[i - 1]);
    expect(popped).toHaveLength(10_000);
  });
});

describe("the lane", () => {
  it("fires in the same order as the heap would have, ties by when they were scheduled", () => {
    // A process re-arming itself in the lane, and another scheduling on the heap, both at
    // whole-millisecond times so they tie often: the order must match an all-heap run.
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 5 })), {
          minLength: 1,
          maxLength: 60,
        }),
        (gaps) => {
          const order = (useLane: boolean): string[] => {
            const sim = new Simulator();
            const seen: string[] = [];
            let i = 0;
            const source = (now: number) => {
              seen.push(`s${now}`);
              const g = gaps[i++];
              if (g === undefined) return;
              sim.at(now + g[1], (t) => seen.push(`h${t}`));
              if (useLane) sim.lane(now + g[0], source);
              else sim.at(now + g[0], source);
            };
            if (useLane) sim.lane(0, source);
            else sim.at(0, source);
            sim.run();
            return seen;
          };
          expect(order(true)).toEqual(order(false));
        },
      ),
    );
  });

  it("holds one event: setting it again replaces it; it counts as pending", () => {
    const sim = new Simulator();
    const seen: number[] = [];
    sim.lane(5, (t) => seen.push(t));
    sim.lane(3, (t) => seen.push(-t));
    expect(sim.pending).toBe(1);
    sim.run();
    expect(seen).toEqual([-3]);
    expect(sim.pending).toBe(0);
    expect(() => sim.lane(NaN, () => {})).toThrow(/NaN/);
  });
});

describe("Simulator", () => {
  it("fires events at their times on the virtual clock, which reads the event's time", () => {
    const sim = new Simulator({ start: 1_000 });
    const seen: [number, number, number][] = [];
    const f = (now: number, arg: number) => seen.push([now, sim.clock.now(), arg]);
    sim.at(1_500, f, 2);
    sim.after(200, f, 1);
    sim.at(1_500, f, 3);
    expect(sim.run()).toBe(3);
    expect(seen).toEqual([
      [1_200, 1_200, 1],
      [1_500, 1_500, 2],
      [1_500, 1_500, 3],
    ]);
  });

  it("runs up to an instant and leaves later events waiting; never schedules into the past", () => {
    const sim = new Simulator();
    let ticks = 0;
    const tick = () => {
      ticks++;
      sim.after(1_000, tick);
    };
    sim.at(0, tick);
    sim.run(60_000);
    expect(ticks).toBe(60);
    expect(sim.now()).toBe(60_000);
    expect(sim.pending).toBe(1);
    const seen: number[] = [];
    sim.at(10, (now) => seen.push(now));
    sim.run(60_001);
    expect(seen).toEqual([60_000]);
  });

  it("streams are the same for the same seed and name, and differ otherwise", () => {
    const a = new Simulator({ seed: 5 });
    const b = new Simulator({ seed: 5 });
    const draws = (r: () => number) => Array.from({ length: 5 }, r);
    expect(draws(a.random("x"))).toEqual(draws(b.random("x")));
    expect(draws(a.random("x"))).not.toEqual(draws(a.random("y")));
    expect(draws(a.random("x"))).not.toEqual(draws(new Simulator({ seed: 6 }).random("x")));
  });

  it("take hands over the events run would fire, in its order, on its clock, leaving later ones", () => {
    // Two processes scheduling on the heap, a channel and the lane at whole milliseconds, so they
    // tie often: driven by take, the same events come out at the same times, counted alike.
    const drive = (byTake: boolean) => {
      const sim = new Simulator({ start: 1_000 });
      const seen: string[] = [];
      let n = 0;
      const tick = (now: number, arg: number) => {
        seen.push(`t${arg}@${now}/${sim.clock.now()}`);
        if (++n > 5_000) return;
        sim.at(now + (n % 3), tick, n);
        sim.channel(2, now + 5, echo, n);
        sim.lane(now + (n % 2), tick, -n);
      };
      const echo = (now: number, arg: number) => seen.push(`e${arg}@${now}`);
      sim.at(1_000, tick, 0);
      if (byTake) {
        for (let fire = sim.take(1_050); fire !== undefined; fire = sim.take(1_050)) fire(sim.now(), sim.arg);
      } else sim.run(1_050);
      return { seen, events: sim.events, pending: sim.pending, next: sim.take(1_050) };
    };
    const run = drive(false);
    const taken = drive(true);
    expect(taken.seen).toEqual(run.seen);
    expect(taken.events).toBe(run.events);
    expect(run.events).toBe(run.seen.length);
    expect(run.events).toBeGreaterThan(100);
    // Events at or after 1 050 ms wait; take refuses them and counts nothing.
    expect(taken.pending).toBe(run.pending);
    expect(run.pending).toBeGreaterThan(0);
    expect(taken.next).toBeUndefined();
  });

  it("stops when asked, and says what is wrong with bad options", () => {
    const sim = new Simulator();
    let n = 0;
    const f = () => {
      if (++n === 3) sim.stop();
      sim.after(1, f);
    };
    sim.at(0, f);
    sim.run();
    expect(n).toBe(3);
    expect(() => new Simulator({ sead: 1 } as never)).toThrow(/no option "sead"; did you mean "seed"/);
    expect(() => new Simulator({ start: NaN })).toThrow(RangeError);
    expect(() => sim.at(NaN, f)).toThrow(/NaN/);
  });
});

describe.each(STARTS)("an event the queue cannot hold is refused naming its part (start %s)", (start) => {
  const f = () => {};
  const bad: [string, unknown, unknown, unknown, string][] = [
    ["a NaN time", NaN, f, 0, "RangeError: {} time must be a number of milliseconds, got NaN"],
    ["a BigInt time", 5n, f, 0, "TypeError: {} time must be a number of milliseconds, got 5n"],
    ["a Symbol time", Symbol("t"), f, 0, "TypeError: {} time must be a number of milliseconds, got Symbol(t)"],
    ["a null handler", start, null, 0, "TypeError: {} fire must be a function, got null"],
    ["a text handler", start, "go", 0, 'TypeError: {} fire must be a function, got string "go"'],
    ["a Symbol argument", start, f, Symbol("a"), "TypeError: {} arg must be a number, got Symbol(a)"],
    ["a text argument", start, f, "1", 'TypeError: {} arg must be a number, got "1"'],
  ];
  const refusal = (act: () => unknown): string => {
    try {
      act();
    } catch (e) {
      return `${(e as Error).constructor.name}: ${(e as Error).message}`;
    }
    return "accepted";
  };

  it.each(bad)("Simulator.at, lane and channel refuse %s, leaving nothing queued", (_, time, fire, arg, message) => {
    const sim = new Simulator({ start });
    const put = sim.at.bind(sim) as (t: unknown, f: unknown, a: unknown) => void;
    const lane = sim.lane.bind(sim) as (t: unknown, f: unknown, a: unknown) => void;
    const channel = sim.channel.bind(sim) as (c: number, t: unknown, f: unknown, a: unknown) => void;
    expect(refusal(() => put(time, fire, arg))).toBe(message.replace("{}", "Simulator.at"));
    expect(refusal(() => lane(time, fire, arg))).toBe(message.replace("{}", "Simulator.lane"));
    expect(refusal(() => channel(2, time, fire, arg))).toBe(message.replace("{}", "Simulator.channel"));
    expect(sim.pending).toBe(0);
    expect(sim.run()).toBe(0);
    const q = new EventQueue();
    const push = q.push.bind(q) as (t: unknown, f: unknown, a: unknown) => void;
    expect(refusal(() => push(time, fire, arg))).toBe(message.replace("{}", "EventQueue.push"));
    expect(q.size).toBe(0);
  });

  it("after, run, take and a channel's number refuse what is not a number of milliseconds or a function", () => {
    const sim = new Simulator({ start });
    const fired: number[] = [];
    sim.at(start + 5, (now) => fired.push(now));
    expect(refusal(() => sim.after(NaN, f))).toBe(
      "RangeError: Simulator.after delay must be a number of milliseconds, got NaN",
    );
    expect(refusal(() => sim.after(Symbol("d") as never, f))).toBe(
      "TypeError: Simulator.after delay must be a number of milliseconds, got Symbol(d)",
    );
    expect(refusal(() => sim.after(5, null as never))).toBe(
      "TypeError: Simulator.after fire must be a function, got null",
    );
    expect(refusal(() => sim.run(NaN))).toBe(
      "RangeError: Simulator.run until must be a number of milliseconds (Infinity for no end), got NaN",
    );
    expect(refusal(() => sim.run(Infinity, 5 as never))).toBe(
      "TypeError: Simulator.run each must be a function, got number 5",
    );
    expect(refusal(() => sim.take("9" as never))).toBe(
      'TypeError: Simulator.take until must be a number of milliseconds (Infinity for no end), got "9"',
    );
    expect(refusal(() => sim.channel(Symbol("c") as never, start, f))).toBe(
      "RangeError: Simulator.channel channel must be a whole number from 0 to 7, got Symbol(c)",
    );
    expect(refusal(() => new EventQueue().pop(NaN))).toBe(
      "RangeError: EventQueue.pop before must be a number of milliseconds, got NaN",
    );
    // Nothing was fired or lost: the one good event is still there.
    expect([sim.pending, sim.run(), fired]).toEqual([1, 1, [start + 5]]);
  });
});
