import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, charge, limitSpec, perSecond } from "@tideward/quota-engine";
import type { ChargeKind, QuotaCharge, QuotaSnapshot } from "@tideward/quota-engine";
import { STARTS, single } from "./traffic";

const keys = [0, 1, 2].map((i) => new QuotaKey("t", `k${i}`, "r"));
const names = ["a", "b", "c", "missing"];
const kinds: ChargeKind[] = ["bucket", "window", "gcra"];

const spec = fc.record({
  capacity: fc.integer({ min: 1, max: 20 }),
  refill: fc.constantFrom(1, 5, 10),
  window: fc.constantFrom(100, 1_000),
  burst: fc.integer({ min: 1, max: 20 }),
});
const chargeArb = fc.record({
  key: fc.integer({ min: 0, max: 2 }),
  limit: fc.integer({ min: 0, max: 9 }),
  kind: fc.integer({ min: 0, max: 2 }),
  cost: fc.integer({ min: 1, max: 8 }),
});
const toCharge = (c: { key: number; limit: number; kind: number; cost: number }): QuotaCharge =>
  // limit index 9 is a name no engine has: about one charge in ten
  charge(keys[c.key], names[c.limit === 9 ? 3 : c.limit % 3], c.cost, kinds[c.kind]);

// Sweeping off, so both engines hold exactly the same entries (sweeping is tested on its own).
function build(specs: { capacity: number; refill: number; window: number; burst: number }[]): QuotaEngine {
  const engine = new QuotaEngine({ sweepStep: 0 });
  specs.forEach((s, i) => engine.addLimit(limitSpec({ name: names[i], ...s })));
  return engine;
}

// The state a snapshot holds, whatever order the entries come in and whatever the clock says.
const withoutClock = (s: QuotaSnapshot): string => {
  const order = <T extends { key: object; limit: string }>(list: readonly T[]): T[] =>
    [...list].sort((x, y) => (JSON.stringify([x.limit, x.key]) < JSON.stringify([y.limit, y.key]) ? -1 : 1));
  return JSON.stringify({
    ...s,
    clock: null,
    buckets: order(s.buckets),
    windows: order(s.windows),
    gcra: order(s.gcra),
  });
};

describe.each(STARTS)("checkAtomic (properties), on %s", (_, starts) => {
  it("is all-or-nothing, and each decision is the charge checked alone after the earlier charges that fit", () => {
    fc.assert(
      fc.property(
        fc.tuple(spec, spec, spec),
        fc.array(chargeArb, { maxLength: 30 }),
        fc.array(chargeArb, { minLength: 0, maxLength: 25 }),
        fc.integer({ min: 0, max: 500 }),
        starts,
        (specs, warmup, set, gap, start) => {
          const engine = build(specs);
          // Random balances: some traffic first.
          let now = start;
          for (const c of warmup) single(engine, toCharge(c), (now += 37));
          now += gap;
          const before = engine.snapshot();
          const charges = set.map(toCharge);
          const report = engine.checkAtomic(charges, now);

          // The same charges one by one on a copy: the reference for every decision.
          const copy = new QuotaEngine({ sweepStep: 0 });
          copy.restore(before);
          const alone = charges.map((c) => single(copy, c, now));
          const firstFail = alone.findIndex((d) => !d.allowed);
          if (
            report.failedIndex !== firstFail ||
            report.committed !== firstFail < 0 ||
            report.allowed !== report.committed
          )
            return false;
          for (let i = 0; i < charges.length; i++) {
            const got = report.decisions[i];
            const want = alone[i];
            const reason = want.allowed && !report.committed ? "not_committed" : want.reason;
            if (
              got.reason !== reason ||
              got.allowed !== (want.allowed && report.committed) ||
              got.remaining !== want.remaining ||
              got.resetAfter !== want.resetAfter
            )
              return false;
            if (got.retryAfter !== (reason === "not_committed" ? 0 : want.retryAfter) || got.cost !== want.cost)
              return false;
          }
          // Committed: the state is the sequence's; refused: nothing changed.
          return withoutClock(engine.snapshot()) === withoutClock(report.committed ? copy.snapshot() : before);
        },
      ),
      { numRuns: 200 },
    );
  });

  // Set sizes up to 16 find repeated states by a scan; larger ones total them in one pass.
  it.each([
    ["a small set", 1, 6, 200],
    ["a set past 16 charges", 17, 60, 100],
  ])(
    "retryAfter is when the whole set first fits (%s): retried exactly that much later (as the caller adds it), it passes",
    (_, minLength, maxLength, numRuns) => {
      fc.assert(
        fc.property(
          fc.tuple(spec, spec, spec),
          fc.array(chargeArb, { maxLength: 30 }),
          fc.array(chargeArb, { minLength, maxLength }),
          fc.oneof(fc.constant(37), fc.double({ min: 0, max: 200, noNaN: true })),
          starts,
          (specs, warmup, set, gap, start) => {
            const engine = build(specs);
            let now = start;
            for (const c of warmup) single(engine, toCharge(c), (now += gap));
            const charges = set.map(toCharge);
            const report = engine.peekAtomic(charges, now);
            if (report.allowed) return report.retryAfter === 0;
            if (report.retryAfter === Infinity) return !engine.peekAtomic(charges, now + 1e9).allowed;
            // Earlier first: the engine's clock only moves forward.
            if (engine.peekAtomic(charges, now + report.retryAfter * 0.99 - 1e-3).allowed) return false;
            const at = now + report.retryAfter;
            return engine.peekAtomic(charges, at).allowed && engine.checkAtomic(charges, at).committed;
          },
        ),
        { numRuns },
      );
    },
  );
});

describe("checkAtomic", () => {
  const user = new QuotaKey("acme", "alice", "requests");

  it("commits an empty set trivially", () => {
    const engine = new QuotaEngine();
    expect(engine.checkAtomic([], 0)).toEqual({
      allowed: true,
      committed: true,
      failedIndex: -1,
      retryAfter: 0,
      decisions: [],
    });
  });

  it("checks every charge's shape before evaluating any, so a malformed one changes nothing", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 5));
    const bad: unknown[] = [charge(user, "r", 1), charge(user, "r", 0)];
    expect(() => engine.checkAtomic(bad as QuotaCharge[], 0)).toThrow(
      new RangeError("charges[1].cost must be a whole number of at least 1, got 0"),
    );
    expect(() =>
      engine.checkAtomic([charge(user, "r", 1), { key: user, limit: "r", cost: 1, kind: "sliding" as ChargeKind }], 0),
    ).toThrow('charges[1].kind must be "bucket", "window" or "gcra", got "sliding"');
    expect(() => engine.checkAtomic([null as unknown as QuotaCharge], 0)).toThrow(
      "charges[0] must be a QuotaCharge, got null",
    );
    expect(() => engine.checkAtomic("x" as unknown as QuotaCharge[], 0)).toThrow(TypeError);
    expect(engine.stats().keys).toBe(0);
    expect(engine.snapshot().clock).toBeNull();
  });

  it("handles large sets with repeats the same way as small ones", () => {
    const engine = new QuotaEngine();
    engine.addLimit(limitSpec({ name: "r", capacity: 40, refill: 40, window: 1_000 }));
    const set = Array.from({ length: 40 }, (_, i) => charge(keys[i % 2], "r", 1));
    expect(engine.checkAtomic(set, 0).committed).toBe(true);
    expect(engine.checkTokenBucket(keys[0], "r", 0).remaining).toBe(19);
    const tooMany = [...set, ...set, charge(keys[1], "r", 1)];
    const report = engine.checkAtomic(tooMany, 0);
    // Key 0 holds 19 and is charged at every even index: its 20th charge, at index 38, fails.
    expect([report.committed, report.failedIndex]).toEqual([false, 38]);
    // Staged state moves only on charges that fit: both keys stay dry after their first failure.
    expect(report.decisions.filter((d) => d.reason === "exhausted").length).toBe(21 + 21);
    expect(engine.checkTokenBucket(keys[0], "r", 0).remaining).toBe(18);
  });
});
