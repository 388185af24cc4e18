import { describe, expect, it } from "vitest";
import {
  AimdLimit,
  FixedLimit,
  Gradient2Limit,
  Limiter,
  Priorities,
  VegasLimit,
  criticality,
} from "@tideward/concurrency";
import type { Refusal, Token } from "@tideward/concurrency";

const T0 = 1_700_000_000_000.25;

/** Takes `n` places at `now` for `priority`, and returns the tokens (refusals left out). */
function take(limiter: Limiter, n: number, now = 0, priority?: number | string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < n; i++) {
    const t = limiter.acquire(now, priority);
    if (t.ok) out.push(t);
  }
  return out;
}

describe("Limiter: places under the limit", () => {
  it("lets calls in up to the limit and refuses the next with reason limit", () => {
    const limiter = new Limiter(new FixedLimit(3));
    const held = take(limiter, 3);
    expect(held.map((t) => [t.inflight, t.level, t.start])).toEqual([
      [1, 0, 0],
      [2, 0, 0],
      [3, 0, 0],
    ]);
    expect(limiter.acquire(1)).toEqual({ ok: false, reason: "limit", level: 0 });
    held[0].ignore();
    expect(limiter.flying).toBe(2);
    expect(limiter.acquire(2).ok).toBe(true);
  });

  it("frees a place once however often a token is settled", () => {
    const limiter = new Limiter(new AimdLimit({ initial: 10, min: 1 }));
    const [a, b] = take(limiter, 2);
    a.pass(5);
    a.pass(6);
    a.drop(7);
    a.ignore();
    expect([limiter.flying, limiter.limit, a.settled, b.settled]).toEqual([1, 10, true, false]);
    b.drop(8);
    b.pass(9);
    expect([limiter.flying, limiter.limit]).toEqual([0, 9]); // one drop: floor(10 × 0.9)
  });

  it("hands a pass's round trip and the count in flight at its start to the algorithm", () => {
    const limiter = new Limiter(new VegasLimit({ initial: 10 }), { now: T0 });
    const [first] = take(limiter, 1, T0);
    first.pass(T0 + 20); // the baseline: 20 ms
    expect((limiter.algorithm as VegasLimit).noLoad).toBe(20);
    const held = take(limiter, 10, T0 + 30);
    held[9].pass(T0 + 50); // 20 ms with 10 in flight: no queue, + beta
    expect(limiter.limit).toBe(16);
    held[0].pass(T0 + 60); // 30 ms, found 1 in flight: app-limited, nothing moves
    expect(limiter.limit).toBe(16);
  });

  it("makes no sample of a pass whose finish is not a number or before its start, and frees the place", () => {
    const limiter = new Limiter(new AimdLimit({ initial: 2, min: 1 }), { now: 100 });
    const held = take(limiter, 2, 100);
    held[0].pass(50); // the clock stepped back: no round trip
    held[1].pass(Number.NaN);
    expect([limiter.flying, limiter.limit]).toEqual([0, 2]);
    // A drop still counts as one without a round trip.
    take(limiter, 1, 100)[0].drop("later" as unknown as number);
    expect(limiter.limit).toBe(1);
  });

  it("lets nothing in while the limit has fallen below the calls in flight", () => {
    const limiter = new Limiter(new AimdLimit({ initial: 100, min: 1, max: 100 }));
    const held = take(limiter, 100);
    held[0].drop(1); // 100 → 90 places, 99 still in flight
    expect([limiter.flying, limiter.limit]).toEqual([99, 90]);
    expect(limiter.acquire(2)).toEqual({ ok: false, reason: "limit", level: 0 });
    expect(limiter.room()).toBe(0);
    // The calls in flight finish normally; the first place opens once fewer than 90 are left.
    for (let i = 1; i <= 9; i++) held[i].ignore();
    expect([limiter.flying, limiter.acquire(3).ok]).toEqual([90, false]);
    held[10].ignore();
    expect(limiter.acquire(3).ok).toBe(true);
  });
});

describe("Limiter: priorities", () => {
  it("refuses the least important first as calls pile up, each at its level's share of the limit", () => {
    const limiter = new Limiter(new FixedLimit(10), { priorities: criticality });
    // Fill with critical_plus one at a time, asking at each count who would still be let in.
    const open: string[][] = [];
    const held: Token[] = [];
    for (let n = 0; n < 10; n++) {
      open.push(criticality.names.filter((name) => limiter.room(name) > 0));
      held.push(take(limiter, 1, 0, 0)[0]);
    }
    // sheddable fills 6, sheddable_plus 8, critical 9, critical_plus all 10.
    expect(open.map((o) => o.length)).toEqual([4, 4, 4, 4, 4, 4, 3, 3, 2, 1]);
    expect(limiter.acquire(0, "critical_plus")).toEqual({ ok: false, reason: "limit", level: 0 });
    held[0].ignore();
    expect(limiter.acquire(0, "sheddable")).toEqual({ ok: false, reason: "reserved", level: 3 });
  });

  it("never lets a sheddable call take the last places a critical one would need", () => {
    const limiter = new Limiter(new FixedLimit(20), { priorities: criticality });
    // A flood of sheddable work takes what it may: 12 of 20.
    expect(take(limiter, 100, 0, "sheddable")).toHaveLength(12);
    // Critical calls still find their 18 − 12 = 6 places, critical_plus 2 more.
    expect(take(limiter, 100, 0, "critical")).toHaveLength(6);
    expect(take(limiter, 100, 0, "critical_plus")).toHaveLength(2);
    expect([limiter.flyingAt("sheddable"), limiter.flyingAt("critical"), limiter.flyingAt(0)]).toEqual([12, 6, 2]);
  });

  it("lets a more important level use every place a less important one leaves empty", () => {
    const limiter = new Limiter(new FixedLimit(20), { priorities: new Priorities({ levels: 2, shares: [0.9, 0.1] }) });
    expect(take(limiter, 100, 0, 0)).toHaveLength(20);
    const batch = new Limiter(new FixedLimit(20), { priorities: new Priorities({ levels: 2, shares: [0.9, 0.1] }) });
    expect(take(batch, 100, 0, 1)).toHaveLength(2); // the other 18 stay for level 0
  });

  it("judges a call that gives no priority at the fallback level, and an unknown one at the least important", () => {
    const limiter = new Limiter(new FixedLimit(10), { priorities: criticality });
    expect(take(limiter, 100)).toHaveLength(9); // critical: 90 %
    const other = new Limiter(new FixedLimit(10), { priorities: criticality });
    expect(take(other, 100, 0, "urgent")).toHaveLength(6); // not a level: sheddable
    const refusal = other.acquire(0, 99) as Refusal;
    expect(refusal).toBe(other.acquire(0, Number.NaN));
    expect(refusal).toEqual({ ok: false, reason: "reserved", level: 3 });
  });
});

describe("Limiter: construction", () => {
  it("gives each limiter its own algorithm", () => {
    const shared = new Gradient2Limit();
    new Limiter(shared);
    expect(() => new Limiter(shared)).toThrow(
      new TypeError("Limiter algorithm is already in another limiter: give each limiter an algorithm of its own"),
    );
  });

  it("starts at the limit of its algorithm with nothing in flight", () => {
    for (const algorithm of [new AimdLimit(), new VegasLimit(), new Gradient2Limit(), new FixedLimit(7)]) {
      const limiter = new Limiter(algorithm);
      expect([limiter.limit, limiter.flying, limiter.room()]).toEqual([algorithm.limit, 0, algorithm.limit]);
    }
  });
});
