import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Priorities, Queue, codel, criticality } from "@tideward/concurrency";
import type { Waiter } from "@tideward/concurrency";

const T0 = 1_700_000_000_000.375;

/** Every waiter `dropped` hands back at `now`, as [value, reason]. */
function drain<T>(queue: Queue<T>, now: number): [T, string | undefined][] {
  const out: [T, string | undefined][] = [];
  for (let w = queue.dropped(now); w !== undefined; w = queue.dropped(now)) out.push([w.value, w.reason]);
  return out;
}

describe("Queue: the preset", () => {
  it("is Meta's: a 5 ms target, a 100 ms interval, adaptive LIFO; 1000 waiters", () => {
    expect(codel).toEqual({ target: 5, interval: 100, capacity: 1_000, lifo: true });
    expect(Object.isFrozen(codel)).toBe(true);
    expect(new Queue().policy).toBe(codel);
  });
});

describe("Queue: waiting while it is not standing", () => {
  it("serves the oldest first, and lets a waiter wait up to the interval", () => {
    for (const base of [0, T0]) {
      const q = new Queue<string>({}, { now: base });
      q.push(base, "a");
      q.push(base + 1, "b");
      expect(q.next(base + 2)?.value).toBe("a");
      expect(drain(q, base + 99)).toEqual([]);
      expect(q.due(base + 99)).toBe(base + 100);
      expect(drain(q, base + 100)).toEqual([["a", "codel"]]);
      expect(q.length).toBe(1);
      expect(drain(q, base + 101)).toEqual([["b", "codel"]]);
      expect([q.length, q.due(base + 101)]).toEqual([0, Infinity]);
    }
  });

  it("never stands while its waiters are served within the target", () => {
    const q = new Queue<number>();
    // A waiter every millisecond, each served 4 ms later: the queue is never empty for a
    // second, but its sojourn never passes 5 ms.
    const waiting: Waiter<number>[] = [];
    for (let t = 0; t < 2_000; t++) {
      waiting.push(q.push(t, t) as Waiter<number>);
      if (t >= 4) expect(q.remove(waiting.shift() as Waiter<number>, t)).toBe(true);
      expect(q.standing(t)).toBe(false);
    }
    expect(q.sojourn(2_000)).toBe(4);
  });
});

describe("Queue: standing (CoDel) and adaptive LIFO", () => {
  // Arrivals every ms from `from`, one served every 2 ms from the front: a queue that grows.
  function overload(q: Queue<number>, from: number, to: number): number[] {
    const served: number[] = [];
    for (let t = from; t < to; t++) {
      drain(q, t);
      q.push(t, t);
      if (t % 2 === 0) {
        const w = q.next(t);
        if (w !== undefined && q.remove(w, t)) served.push(t - w.since);
      }
    }
    return served;
  }

  it("stands once its sojourn has stayed above the target for a whole interval", () => {
    for (const base of [0, T0]) {
      const q = new Queue<number>({}, { now: base });
      q.push(base, 0);
      expect(q.standing(base + 5)).toBe(false);
      expect(q.standing(base + 6)).toBe(false); // above since 5 ms
      expect(q.due(base + 6)).toBe(base + 100); // the waiter's own interval comes first
      q.push(base + 50, 1);
      // The first waiter's wait runs out at 100; the second has waited 50 ms by then, so the
      // sojourn never fell to the target: it has been above since 5 ms.
      expect(drain(q, base + 100)).toEqual([[0, "codel"]]);
      expect(q.standing(base + 104)).toBe(false);
      expect(q.due(base + 104)).toBe(base + 105);
      expect(q.standing(base + 105)).toBe(true);
      // Standing, a waiter may wait only the target: the second, 55 ms in, is dropped at once.
      expect(drain(q, base + 105)).toEqual([[1, "codel"]]);
      expect(q.standing(base + 105)).toBe(false); // empty: it stands no more
    }
  });

  it("starts the interval again when the oldest waiter leaves and the next has waited less than the target", () => {
    const q = new Queue<number>();
    const a = q.push(0, 0) as Waiter<number>;
    q.push(98, 1);
    expect(q.remove(a, 99)).toBe(true); // the sojourn falls to 1 ms
    expect(q.standing(200)).toBe(false); // above again only since 103 ms: standing from 203
    expect(q.due(200)).toBe(200); // its own interval ran out at 98 + 100
    expect(q.standing(202)).toBe(false);
    expect(q.standing(203)).toBe(true);
  });

  it("keeps a standing queue's waits at the target and serves the newest first", () => {
    const q = new Queue<number>();
    overload(q, 0, 400);
    expect(q.standing(400)).toBe(true);
    const waits = overload(q, 400, 1_000);
    // Once standing: no one waits past 5 ms, and most are served at once (newest first).
    expect(Math.max(...waits)).toBeLessThanOrEqual(5);
    expect(waits.filter((w) => w <= 1).length).toBeGreaterThan(waits.length * 0.9);
    const fifo = new Queue<number>({ lifo: false });
    overload(fifo, 0, 400);
    const fifoWaits = overload(fifo, 400, 1_000);
    expect(Math.max(...fifoWaits)).toBeLessThanOrEqual(5);
    expect(fifoWaits.filter((w) => w <= 1).length).toBe(0);
  });

  it("stands until it empties, not merely until its sojourn falls", () => {
    const q = new Queue<number>();
    overload(q, 0, 400);
    drain(q, 400);
    expect(q.sojourn(400)).toBeLessThan(5);
    expect([q.length > 0, q.standing(400)]).toEqual([true, true]);
    for (let w = q.next(400); w !== undefined; w = q.next(400)) q.remove(w, 400);
    expect(q.standing(400)).toBe(false);
    q.push(401, 1);
    expect(drain(q, 450)).toEqual([]); // not standing: the interval again
  });
});

describe("Queue: priorities and capacity", () => {
  it("serves the most important level first", () => {
    const q = new Queue<string>({}, { priorities: criticality });
    q.push(0, "shed", "sheddable");
    q.push(1, "crit", "critical");
    q.push(2, "plus", "critical_plus");
    expect(q.next(3)?.value).toBe("plus");
    q.remove(q.next(3) as Waiter<string>);
    expect(q.next(3)?.value).toBe("crit");
    q.remove(q.next(3) as Waiter<string>);
    expect(q.next(3)?.value).toBe("shed");
  });

  it("gives a full queue's newcomer the place of the oldest less important waiter", () => {
    const q = new Queue<string>({ capacity: 3 }, { priorities: criticality });
    q.push(0, "s1", "sheddable");
    q.push(1, "s2", "sheddable");
    q.push(2, "c1", "critical");
    expect(q.push(3, "s3", "sheddable")).toBeUndefined(); // nothing less important to displace
    expect(q.push(4, "c2", "critical")?.value).toBe("c2");
    expect(q.push(5, "p1", "critical_plus")?.value).toBe("p1");
    expect(q.push(6, "c3", "critical")).toBeUndefined(); // only critical and above left
    expect(q.length).toBe(3);
    expect(drain(q, 7)).toEqual([
      ["s1", "evicted"],
      ["s2", "evicted"],
    ]);
    expect(q.dropped(7)).toBeUndefined();
  });

  it("refuses newcomers once as many evicted waiters are waiting to be handed back as it holds", () => {
    const q = new Queue<number>({ capacity: 2 }, { priorities: new Priorities({ levels: 2 }) });
    q.push(0, 1, 1);
    q.push(0, 2, 1);
    expect(q.push(0, 3, 0)).toBeDefined();
    expect(q.push(0, 4, 0)).toBeDefined();
    q.remove(q.next(0) as Waiter<number>);
    q.push(0, 5, 1);
    // Two evicted and not handed back: no more evictions until they are.
    expect(q.push(0, 6, 0)).toBeUndefined();
    expect(drain(q, 0).length).toBe(2);
    expect(q.push(0, 6, 0)).toBeDefined();
  });

  it("removes a waiter once, and only its own", () => {
    const q = new Queue<number>();
    const other = new Queue<number>();
    const w = q.push(0, 1) as Waiter<number>;
    expect(other.remove(w)).toBe(false);
    expect(w.waiting).toBe(true);
    expect(q.remove(w)).toBe(true);
    expect([q.remove(w), w.waiting, w.reason, q.length]).toEqual([false, false, undefined, 0]);
    expect(q.remove({ value: 1, since: 0, level: 0, reason: undefined, waiting: true })).toBe(false);
  });
});

describe("Queue properties", () => {
  type Op =
    | { kind: "push"; dt: number; level: number }
    | { kind: "serve"; dt: number }
    | { kind: "abort"; pick: number }
    | { kind: "drop"; dt: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      kind: fc.constant("push" as const),
      dt: fc.double({ min: -1, max: 30, noNaN: true }),
      level: fc.integer({ min: -1, max: 4 }),
    }),
    fc.record({ kind: fc.constant("serve" as const), dt: fc.double({ min: 0, max: 30, noNaN: true }) }),
    fc.record({ kind: fc.constant("abort" as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant("drop" as const), dt: fc.double({ min: 0, max: 120, noNaN: true }) }),
  );

  for (const base of [0, T0])
    it(`every waiter ends once — served, dropped or aborted — and due says when (clock near ${base === 0 ? "0" : "Date.now()"})`, () => {
      fc.assert(
        fc.property(fc.array(op, { maxLength: 300 }), fc.integer({ min: 1, max: 8 }), (ops, capacity) => {
          const q = new Queue<number>({ capacity }, { priorities: criticality, now: base });
          const waiting = new Set<Waiter<number>>();
          const ended = new Set<Waiter<number>>();
          let now = base;
          let made = 0;
          let accepted = 0;
          const end = (w: Waiter<number>) => {
            expect(ended.has(w)).toBe(false);
            ended.add(w);
            waiting.delete(w);
          };
          for (const o of ops) {
            if (o.kind === "abort") {
              const all = [...waiting, ...ended];
              if (all.length === 0) continue;
              const w = all[o.pick % all.length];
              const inQueue = waiting.has(w) && w.waiting;
              expect(q.remove(w)).toBe(inQueue);
              if (inQueue) end(w); // else ended already, or evicted and not yet handed back
              continue;
            }
            now += o.dt;
            if (o.kind === "push") {
              const w = q.push(now, made++, o.level);
              if (w !== undefined) {
                waiting.add(w);
                accepted++;
              }
            } else if (o.kind === "serve") {
              for (let d = q.dropped(now); d !== undefined; d = q.dropped(now)) {
                expect(d.reason).toMatch(/^(codel|evicted)$/);
                end(d);
              }
              const next = q.next(now);
              if (next === undefined) expect(q.length).toBe(0);
              else {
                // The most important level waiting, and no waiter whose wait has run out.
                const levels = [...waiting].filter((w) => w.waiting).map((w) => w.level);
                expect(next.level).toBe(Math.min(...levels));
                expect(q.remove(next, now)).toBe(true);
                end(next);
              }
            } else {
              const due = q.due(now);
              for (let d = q.dropped(now); d !== undefined; d = q.dropped(now)) end(d);
              if (q.length > 0) {
                expect(q.due(now)).toBeGreaterThan(now);
                // Nothing is dropped before `due`, and something is at it.
                const at = q.due(now);
                expect(q.dropped(now)).toBeUndefined();
                if (at < Infinity) {
                  const d = q.dropped(at);
                  expect(d?.reason).toBe("codel");
                  end(d as Waiter<number>);
                  now = at;
                }
              } else expect(q.due(now)).toBe(Infinity);
              expect(due).toBeGreaterThanOrEqual(base);
            }
            expect(q.length).toBe([...waiting].filter((w) => w.waiting).length);
            expect(q.length).toBeLessThanOrEqual(capacity);
          }
          for (let d = q.dropped(Infinity); d !== undefined; d = q.dropped(Infinity)) end(d);
          for (const w of [...waiting]) {
            expect(q.remove(w)).toBe(true);
            end(w);
          }
          expect([waiting.size, ended.size]).toEqual([0, accepted]);
          expect(q.length).toBe(0);
        }),
        { numRuns: 300 },
      );
    });
});
