import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { slackOf } from "@tideward/limiters/math";
import { QuotaEngine, QuotaKey, charge, limitSpec, perSecond } from "@tideward/quota-engine";
import type { Decision, LimitSpec } from "@tideward/quota-engine";

const alice = new QuotaKey("t", "alice", "api");
const bob = new QuotaKey("t", "bob", "api");

function engineWith(...specs: LimitSpec[]): QuotaEngine {
  const engine = new QuotaEngine();
  for (const spec of specs) expect(engine.addLimit(spec).ok).toBe(true);
  return engine;
}

// Straightforward models of the three algorithms, one object per key, written from the
// definitions in LimitSpec's documentation: what the engine's flat state must agree with.
class Model {
  clock = -Infinity;
  readonly state = new Map<string, { a: number; b: number }>();
  constructor(readonly spec: LimitSpec) {}

  bucket(key: string, now: number, cost: number): [boolean, number] {
    const { capacity, refill, window } = this.spec;
    const t = (this.clock = Math.max(this.clock, now));
    const s = this.state.get(key) ?? { a: capacity, b: t };
    const tokens = Math.min(capacity, s.a + ((t - s.b) * refill) / window);
    // The one slack every tideward bucket forgives: refill fractions such as 4/1000 are not exact
    // in binary, and 3.148 + 0.852 sums to 3.9999999999999996.
    const slack = slackOf(capacity);
    if (tokens + slack < cost) return [false, Math.floor(tokens + slack)];
    this.state.set(key, { a: tokens - cost, b: t });
    return [true, Math.floor(tokens - cost + slack)];
  }

  window(key: string, now: number, cost: number): [boolean, number] {
    const { capacity, window } = this.spec;
    const t = (this.clock = Math.max(this.clock, now));
    const s = this.state.get(key);
    const open = s !== undefined && t < s.a + window;
    const used = open ? s.b : 0;
    if (used + cost > capacity) return [false, capacity - used];
    this.state.set(key, { a: open ? s.a : t, b: used + cost });
    return [true, capacity - used - cost];
  }

  gcra(key: string, now: number, cost: number): [boolean, number] {
    const { refill, window, burst } = this.spec;
    const t = (this.clock = Math.max(this.clock, now));
    const interval = window / refill;
    const tat = Math.max(this.state.get(key)?.a ?? t, t);
    const next = tat + cost * interval;
    if (next - t > burst * interval) return [false, Math.floor((burst * interval - (tat - t)) / interval)];
    this.state.set(key, { a: next, b: 0 });
    return [true, Math.floor((burst * interval - (next - t)) / interval)];
  }
}

const traffic = fc.array(
  fc.record({
    key: fc.integer({ min: 0, max: 3 }),
    dt: fc.integer({ min: -50, max: 400 }),
    cost: fc.integer({ min: 1, max: 4 }),
  }),
  { maxLength: 120 },
);
const specs = fc.record({
  capacity: fc.integer({ min: 1, max: 6 }),
  refill: fc.constantFrom(1, 2, 4, 5, 10),
  window: fc.constantFrom(100, 1_000, 2_000),
  burst: fc.integer({ min: 1, max: 6 }),
});

// Whole-millisecond starts (Date.now() itself is whole), so the plain model's sums are exact too.
const wholeStarts: [string, fc.Arbitrary<number>][] = [
  ["a clock near 0", fc.constant(10_000)],
  ["a performance.now() clock", fc.integer({ min: 1_000, max: 100_000_000 })],
  ["a Date.now() clock", fc.integer({ min: 1e12, max: 1e13 })],
];

describe.each(wholeStarts)(
  "single checks agree with a plain model of each algorithm (property), on %s",
  (_, starts) => {
    for (const kind of ["bucket", "window", "gcra"] as const) {
      it(kind, () => {
        fc.assert(
          fc.property(specs, traffic, starts, (fields, steps, start) => {
            const spec = limitSpec({ name: "x", ...fields });
            const engine = engineWith(spec);
            const model = new Model(spec);
            const keys = [0, 1, 2, 3].map((i) => new QuotaKey("s", `k${i}`, "r"));
            let now = start;
            let mismatches = 0;
            for (const step of steps) {
              now += step.dt; // sometimes backwards: both treat it as standing still
              const key = keys[step.key];
              const d =
                kind === "bucket"
                  ? engine.checkTokenBucket(key, "x", now, step.cost)
                  : kind === "window"
                    ? engine.checkWindow(key, "x", now, step.cost)
                    : engine.checkGcra(key, "x", now, step.cost);
              const [allowed, remaining] = model[kind](key.id, now, step.cost);
              if (d.allowed !== allowed || d.remaining !== remaining) mismatches++;
            }
            return mismatches === 0;
          }),
          { numRuns: 150 },
        );
      });
    }
  },
);

describe("single checks", () => {
  it("answer with exactly the decision fields, and a shared frozen trace naming the rule", () => {
    const engine = engineWith(perSecond("api", 1));
    const first = engine.checkTokenBucket(alice, "api", 0);
    const second = engine.checkTokenBucket(alice, "api", 0);
    expect(Object.keys(first)).toEqual(["allowed", "reason", "cost", "remaining", "retryAfter", "resetAfter", "trace"]);
    expect(first.trace).toEqual(["bucket api: ok"]);
    expect(second.trace).toEqual(["bucket api: exhausted"]);
    expect(engine.checkTokenBucket(bob, "api", 0).trace).toBe(first.trace);
    expect(Object.isFrozen(first.trace)).toBe(true);
    expect(engine.checkWindow(alice, "api", 0).trace).toEqual(["window api: ok"]);
    expect(engine.checkGcra(alice, "api", 0).trace).toEqual(["gcra api: ok"]);
  });

  it("treat a clock stepping back as standing still at the latest instant seen, across keys", () => {
    const engine = engineWith(limitSpec({ name: "b", capacity: 1, refill: 1, window: 1_000 }));
    expect(engine.checkTokenBucket(alice, "b", 1_000).allowed).toBe(true);
    // 500 is before 1 000: no time has passed, so no token has come back. The token is due at
    // 2 000, which is 1 500 ms after the caller's own 500: waits count from the caller's clock.
    expect(engine.checkTokenBucket(alice, "b", 500)).toMatchObject({ allowed: false, retryAfter: 1_500 });
    // bob, first seen "at 0", starts at 1 000 too; his bucket is full again at 2 000, 2 000 ms
    // after his own clock's 0.
    expect(engine.checkTokenBucket(bob, "b", 0)).toMatchObject({ allowed: true, resetAfter: 2_000 });
    const early = engine.checkTokenBucket(bob, "b", 1_999);
    expect(early.allowed).toBe(false);
    expect(early.retryAfter).toBeCloseTo(1, 9);
    expect(engine.checkTokenBucket(bob, "b", 2_000).allowed).toBe(true);
  });

  it("leave state untouched on a denial", () => {
    const engine = engineWith(perSecond("b", 2));
    engine.checkTokenBucket(alice, "b", 0, 2);
    engine.checkWindow(alice, "b", 0, 2);
    engine.checkGcra(alice, "b", 0, 2);
    const before = JSON.stringify(engine.snapshot());
    expect(engine.checkTokenBucket(alice, "b", 0).allowed).toBe(false);
    expect(engine.checkWindow(alice, "b", 0).allowed).toBe(false);
    expect(engine.checkGcra(alice, "b", 0).allowed).toBe(false);
    expect(engine.checkTokenBucket(bob, "b", 0, 3).reason).toBe("too_large");
    expect(JSON.stringify(engine.snapshot())).toBe(before);
    expect(engine.stats().keys).toBe(3); // bob's refused first charge made no state
  });

  it("refill continuously, fractions included, and round remaining down", () => {
    const engine = engineWith(limitSpec({ name: "b", capacity: 3, refill: 3, window: 1_000 }));
    engine.checkTokenBucket(alice, "b", 0, 3);
    // 1 000 / 3 ms a token: 500 ms bring 1.5 tokens.
    expect(engine.checkTokenBucket(alice, "b", 500)).toMatchObject({ allowed: true, remaining: 0 });
    expect(engine.checkTokenBucket(alice, "b", 500)).toMatchObject({ allowed: false, remaining: 0 });
    const d = engine.checkTokenBucket(alice, "b", 500);
    expect(d.retryAfter).toBeCloseTo(500 / 3, 9);
    // After exactly one second from empty: three whole tokens, not 2.999….
    const e = engineWith(limitSpec({ name: "b", capacity: 3, refill: 3, window: 1_000 }));
    e.checkTokenBucket(alice, "b", 1_750_000_000_000, 3);
    expect(e.checkTokenBucket(alice, "b", 1_750_000_001_000, 3)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it("take huge gaps in their stride: a bucket refills to capacity, never past it", () => {
    const engine = engineWith(perSecond("b", 5));
    engine.checkTokenBucket(alice, "b", 0, 5);
    expect(engine.checkTokenBucket(alice, "b", 3e13, 1)).toMatchObject({ allowed: true, remaining: 4 });
    expect(engine.checkGcra(alice, "b", 3e13 + 1, 5)).toMatchObject({ allowed: true, remaining: 0 });
    // Past ±2^45 ms a reading is refused: a window's or a refill's milliseconds would drown in
    // the clock's own step there.
    expect(() => engine.checkTokenBucket(alice, "b", 1e15)).toThrow(
      new RangeError(
        "now must be within ±35184372088832 ms (±2^45, about 1 115 years either side of 1970), got 1000000000000000",
      ),
    );
  });

  it("GCRA faster than the clock's own step (10^8 a second near Date.now()) is still honoured: a burst of one per reading", () => {
    const engine = engineWith(
      limitSpec({ name: "fast", capacity: 100_000_000, refill: 100_000_000, window: 1_000, burst: 1 }),
    );
    const t = 1_750_000_000_000.5;
    expect([engine.checkGcra(alice, "fast", t).allowed, engine.checkGcra(alice, "fast", t).allowed]).toEqual([
      true,
      false,
    ]);
    // The next unit is due 10 ns later, which this clock cannot tell apart: its next step, 2^-12 ms on.
    const wait = engine.checkGcra(alice, "fast", t).retryAfter;
    expect(wait).toBe(2 ** -12);
    expect(engine.checkGcra(alice, "fast", t + wait).allowed).toBe(true);
  });

  it("GCRA keeps a fractional interval right at Date.now() magnitudes", () => {
    const engine = engineWith(limitSpec({ name: "g", capacity: 3, refill: 3, window: 1_000, burst: 1 }));
    const t = 1_750_000_000_000;
    // One unit every 333.33… ms: the next is due at +333.33; taken at +334, the next at +667.33.
    const got = [0, 333, 334, 667, 667.34, 1_000].map((dt) => engine.checkGcra(alice, "g", t + dt).allowed);
    expect(got).toEqual([true, false, true, false, true, false]);
  });

  it("decide per key: one key's spending leaves another's bucket alone", () => {
    const engine = engineWith(perSecond("b", 1));
    const decisions: Decision[] = [
      engine.checkTokenBucket(alice, "b", 0),
      engine.checkTokenBucket(alice, "b", 0),
      engine.checkTokenBucket(bob, "b", 0),
    ];
    expect(decisions.map((d) => d.allowed)).toEqual([true, false, true]);
  });
});

describe("maxKeys", () => {
  it.each([0, 1_700_000_000_000.5])(
    "a peek of a set that needs more keys than there is room for answers key_limit, as the check does, counting no refusal (at %d)",
    (t) => {
      const engine = new QuotaEngine({ maxKeys: 1, sweepStep: 0 });
      engine.addLimit(perSecond("b", 2));
      const carol = new QuotaKey("t", "carol", "api");
      expect(engine.checkTokenBucket(alice, "b", t).allowed).toBe(true);
      const set = [
        { key: alice, limit: "b", cost: 1 },
        { key: carol, limit: "b", cost: 1 },
      ];
      const refusedBefore = engine.stats().refused;
      const peek = engine.peekAtomic(set, t);
      expect(engine.stats().refused).toBe(refusedBefore);
      const check = engine.checkAtomic(set, t);
      expect([peek.allowed, peek.failedIndex, peek.decisions[1]?.reason]).toEqual([false, 1, "key_limit"]);
      expect([check.allowed, check.failedIndex, check.decisions[1]?.reason]).toEqual([false, 1, "key_limit"]);
    },
  );

  it("refuses a new key past the ceiling with key_limit, charging nothing, and admits known keys", () => {
    const engine = new QuotaEngine({ maxKeys: 2, sweepStep: 0 });
    engine.addLimit(perSecond("b", 2));
    const carol = new QuotaKey("t", "carol", "api");
    expect(engine.checkTokenBucket(alice, "b", 0).allowed).toBe(true);
    expect(engine.checkTokenBucket(bob, "b", 0).allowed).toBe(true);
    const refused = engine.checkTokenBucket(carol, "b", 0);
    expect(refused).toMatchObject({
      allowed: false,
      reason: "key_limit",
      retryAfter: 0,
      trace: ["bucket b: key_limit"],
    });
    expect(engine.checkTokenBucket(alice, "b", 0).allowed).toBe(true);
    expect(engine.stats()).toMatchObject({ keys: 2, refused: 1 });
    // Once bob's bucket is full again his state is idle, and the bounded sweep makes room for carol.
    expect(engine.checkTokenBucket(carol, "b", 500).allowed).toBe(true);
    expect(engine.stats()).toMatchObject({ keys: 2, dropped: 1 });
  });

  it("refuses a whole charge set when its new keys do not fit, naming the first new key", () => {
    const engine = new QuotaEngine({ maxKeys: 2, sweepStep: 0 });
    engine.addLimit(perSecond("b", 2));
    const carol = new QuotaKey("t", "carol", "api");
    engine.checkTokenBucket(alice, "b", 0);
    const before = JSON.stringify(engine.snapshot());
    const report = engine.checkAtomic(
      [
        { key: alice, limit: "b", cost: 1 },
        { key: bob, limit: "b", cost: 1 },
        { key: carol, limit: "b", cost: 1 },
        { key: bob, limit: "b", cost: 1 },
      ],
      0,
    );
    expect([report.committed, report.failedIndex]).toEqual([false, 1]);
    expect(report.decisions.map((d) => d.reason)).toEqual([
      "not_committed",
      "key_limit",
      "not_committed",
      "not_committed",
    ]);
    expect(JSON.stringify(engine.snapshot())).toBe(before);
    // Two charges to one new key need one slot: this set fits.
    expect(
      engine.checkAtomic(
        [
          { key: bob, limit: "b", cost: 1 },
          { key: bob, limit: "b", cost: 1 },
          { key: alice, limit: "b", cost: 1 },
        ],
        0,
      ).committed,
    ).toBe(true);
  });

  it("makes room for a set by dropping idle keys, the set's own keys included, and charges them as fresh", () => {
    const engine = new QuotaEngine({ maxKeys: 2, sweepStep: 0 });
    engine.addLimit(perSecond("b", 2));
    const carol = new QuotaKey("t", "carol", "api");
    engine.checkTokenBucket(alice, "b", 0);
    engine.checkTokenBucket(bob, "b", 0);
    // At 1 000 both buckets are full again: idle. Carol needs room; the sweep drops alice and bob.
    const report = engine.checkAtomic([charge(alice, "b", 2), charge(carol, "b", 1)], 1_000);
    expect(report.committed).toBe(true);
    expect(engine.stats()).toMatchObject({ keys: 2, dropped: 2, refused: 0 });
    expect(engine.checkTokenBucket(alice, "b", 1_000)).toMatchObject({ allowed: false, remaining: 0 });
    expect(engine.checkTokenBucket(carol, "b", 1_000)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it("refuses a ceiling that is not a whole number of at least 1", () => {
    expect(() => new QuotaEngine({ maxKeys: 0 })).toThrow(
      new RangeError("QuotaEngine maxKeys must be 1 or more, got 0"),
    );
    expect(() => new QuotaEngine({ maxKeys: 2.5 })).toThrow("QuotaEngine maxKeys must be a whole number, got 2.5");
    expect(() => new QuotaEngine({ sweepStep: -1 })).toThrow("QuotaEngine sweepStep must be 0 or more, got -1");
    expect(new QuotaEngine({ maxKeys: 10 }).policy).toEqual({
      maxKeys: 10,
      sweepStep: 2,
      maxReservations: 100_000,
      reservationTtl: 300_000,
      topUp: "debt",
      maxOverrides: 10_000,
    });
  });
});
