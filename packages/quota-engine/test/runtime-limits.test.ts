// Limits that change while the engine runs, in process: what each algorithm's state becomes when
// its limit is replaced (properties at three clock magnitudes, buckets of one number and of two),
// overrides routed through every kind of check, their bound, their place in snapshots and sweeps,
// and bad input refused by name with nothing changed.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, SnapshotError, charge, limitSpec } from "@tideward/quota-engine";
import type { ChargeKind, LimitSpec, OverrideFields, QuotaCharge } from "@tideward/quota-engine";
import { eachRow } from "../../../scripts/test-support/bad-input";
import type { Row } from "../../../scripts/test-support/bad-input";
import { STARTS } from "./traffic";

const KINDS: ChargeKind[] = ["bucket", "window", "gcra"];
const key = new QuotaKey("t", "k", "r");
const one = (cost: number, kind: ChargeKind, k = key): QuotaCharge[] => [charge(k, "l", cost, kind)];

// Buckets of one number (refill 1 or 10 a window) and of two (3 or 7), windows aligned or not.
const specArb = fc.record({
  capacity: fc.integer({ min: 1, max: 16 }),
  refill: fc.constantFrom(1, 3, 7, 10),
  window: fc.constantFrom(50, 100, 1_000),
  burst: fc.integer({ min: 1, max: 16 }),
  align: fc.boolean(),
});
const trafficArb = fc.array(fc.tuple(fc.double({ min: 0, max: 300, noNaN: true }), fc.integer({ min: 1, max: 8 })), {
  maxLength: 12,
});

function engine(s: Omit<LimitSpec, "name">): QuotaEngine {
  const e = new QuotaEngine({ sweepStep: 0 });
  expect(e.addLimit(limitSpec({ name: "l", ...s })).ok).toBe(true);
  return e;
}

/** Whole units `e` would admit now: what a unit peek sees before its charge. */
function held(e: QuotaEngine, kind: ChargeKind, now: number, k = key): number {
  const d = e.peekAtomic(one(1, kind, k), now).decisions[0];
  return d.allowed ? d.remaining + 1 : d.remaining;
}

/** How far ahead of `now` the key's GCRA flow is (ms), from a snapshot. */
function lead(e: QuotaEngine, now: number): number {
  const g = e.snapshot().gcra[0];
  return g === undefined ? 0 : Math.max(g.ahead - (now - g.at), 0);
}

describe.each(STARTS)("replaceLimit, on %s", (_, starts) => {
  it("property: a bucket keeps its level, clamped to the new capacity", () => {
    fc.assert(
      fc.property(specArb, specArb, starts, trafficArb, (a, b, start, traffic) => {
        const e = engine(a);
        let now = start;
        for (const [dt, cost] of traffic) e.checkTokenBucket(key, "l", (now += dt), cost);
        const before = held(e, "bucket", now);
        const full = before === a.capacity && e.sweep(now, Infinity).dropped >= 0 && e.stats().keys === 0;
        expect(e.replaceLimit(limitSpec({ name: "l", ...b }), now).ok).toBe(true);
        // A full bucket is full under the new limit, as a key with no state is.
        expect(held(e, "bucket", now)).toBe(full ? b.capacity : Math.min(before, b.capacity));
        new QuotaEngine().restore(e.snapshot()); // a state a snapshot may hold
      }),
    );
  });

  it("property: a window keeps its count", () => {
    fc.assert(
      fc.property(specArb, specArb, starts, trafficArb, (a, b, start, traffic) => {
        const e = engine(a);
        let now = start;
        for (const [dt, cost] of traffic) e.checkWindow(key, "l", (now += dt), cost);
        const count = a.capacity - held(e, "window", now);
        expect(e.replaceLimit(limitSpec({ name: "l", ...b }), now).ok).toBe(true);
        expect(held(e, "window", now)).toBe(Math.max(b.capacity - count, 0));
        new QuotaEngine().restore(e.snapshot());
      }),
    );
  });

  it("property: a GCRA flow keeps its theoretical arrival time (at most a burst past the new tolerance)", () => {
    fc.assert(
      fc.property(specArb, specArb, starts, trafficArb, (a, b, start, traffic) => {
        const e = engine(a);
        let now = start;
        for (const [dt, cost] of traffic) e.checkGcra(key, "l", (now += dt), cost);
        const ahead = lead(e, now);
        expect(e.replaceLimit(limitSpec({ name: "l", ...b }), now).ok).toBe(true);
        const tau = b.burst * (b.window / b.refill);
        expect(lead(e, now)).toBe(Math.min(ahead, ahead > 2 * tau + 1e-6 ? 2 * tau : ahead));
        new QuotaEngine().restore(e.snapshot());
      }),
    );
  });

  it("property: the same spec again changes nothing, bit for bit", () => {
    fc.assert(
      fc.property(specArb, fc.constantFrom(...KINDS), starts, trafficArb, (a, kind, start, traffic) => {
        const e = engine(a);
        let now = start;
        for (const [dt, cost] of traffic) e.checkAtomic(one(cost, kind), (now += dt));
        const { clock: _, ...before } = e.snapshot();
        expect(e.replaceLimit(limitSpec({ name: "l", ...a }), now).ok).toBe(true);
        const { clock: __, ...after } = e.snapshot();
        expect(after).toEqual(before);
      }),
    );
  });
});

describe.each(STARTS)("setOverride, on %s", (_, starts) => {
  it("property: an override that sets nothing decides every check, set and chain as the limit does", () => {
    const other = new QuotaKey("t", "other", "r");
    const parent = new QuotaKey("t", "*", "r");
    fc.assert(
      fc.property(
        specArb,
        starts,
        fc.array(
          fc.tuple(
            fc.double({ min: 0, max: 300, noNaN: true }),
            fc.integer({ min: 1, max: 6 }),
            fc.constantFrom(...KINDS),
            fc.integer({ min: 0, max: 3 }),
          ),
          { maxLength: 30 },
        ),
        fc.nat(30),
        (a, start, traffic, at) => {
          const plain = engine(a);
          const over = engine(a);
          for (const e of [plain, over]) e.addLink({ child: key, parent, limit: "l", ratio: 2 });
          let now = start;
          traffic.forEach(([dt, cost, kind, how], i) => {
            now += dt;
            if (i === at) expect(over.setOverride(key, "l", {}, now).ok).toBe(true);
            const run = (e: QuotaEngine): unknown =>
              how === 0
                ? e.checkAtomic([...one(cost, kind), ...one(1, kind, other)], now)
                : how === 1
                  ? e.checkHierarchy(key, "l", now, cost, kind)
                  : how === 2
                    ? e.checkMany("l", [{ key, now, cost }], kind)
                    : kind === "window"
                      ? e.checkWindow(key, "l", now, cost)
                      : kind === "gcra"
                        ? e.checkGcra(key, "l", now, cost)
                        : e.checkTokenBucket(key, "l", now, cost);
            const strip = (x: unknown): string => JSON.stringify(x, (k, v: unknown) => (k === "trace" ? undefined : v));
            expect(strip(run(over))).toBe(strip(run(plain)));
          });
        },
      ),
    );
  });
});

describe("overrides", () => {
  const tokens = limitSpec({ name: "tokens", capacity: 100 });
  const keys = Array.from({ length: 4 }, (_, i) => new QuotaKey("t", `k${i}`, "r"));

  it("are bounded by maxOverrides, refused by name past it; setting one again is not another", () => {
    const e = new QuotaEngine({ maxOverrides: 2 });
    e.addLimit(tokens);
    expect(e.setOverride(keys[0], "tokens", { capacity: 5 }, 0).ok).toBe(true);
    expect(e.setOverride(keys[1], "tokens", { capacity: 5 }, 0).ok).toBe(true);
    expect(e.setOverride(keys[0], "tokens", { capacity: 7 }, 0).ok).toBe(true);
    expect(e.setOverride(keys[2], "tokens", { capacity: 5 }, 0)).toEqual({
      ok: false,
      code: "override_limit",
      reason: "2 overrides exist, the engine's maxOverrides: remove one, or raise maxOverrides",
    });
    expect(e.stats().overrides).toBe(2);
    expect(e.override(keys[0], "tokens")?.capacity).toBe(7);
    expect(e.removeOverride(keys[1], "tokens", 0).ok).toBe(true);
    expect(e.setOverride(keys[2], "tokens", { capacity: 5 }, 0).ok).toBe(true);
    expect(() => new QuotaEngine({ maxOverrides: 2 ** 20 + 1 })).toThrow(
      "QuotaEngine maxOverrides must be at most 1048576 (2^20), got 1048577",
    );
  });

  it("name themselves in their traces", () => {
    const e = new QuotaEngine();
    e.addLimit(tokens);
    e.setOverride(keys[0], "tokens", { capacity: 5 }, 0);
    expect(e.checkTokenBucket(keys[0], "tokens", 0).trace).toEqual(["bucket tokens (override): ok"]);
    expect(e.checkTokenBucket(keys[1], "tokens", 0).trace).toEqual(["bucket tokens: ok"]);
  });

  it("go with their limit when it is removed, as do its keys, links and the keys' count", () => {
    const e = new QuotaEngine();
    e.addLimit(tokens);
    e.addLimit(limitSpec({ name: "other", capacity: 1 }));
    e.setOverride(keys[0], "tokens", { capacity: 5 }, 0);
    e.addLink({ child: keys[1], parent: keys[2], limit: "tokens", ratio: 1 });
    for (const k of keys) e.checkTokenBucket(k, "tokens", 0);
    e.checkTokenBucket(keys[0], "other", 0);
    expect(e.stats()).toMatchObject({ keys: 5, overrides: 1, links: 1 });
    expect(e.removeLimit("tokens").ok).toBe(true);
    expect(e.stats()).toMatchObject({ keys: 1, overrides: 0, links: 0, limits: 1 });
    expect(e.override(keys[0], "tokens")).toBeUndefined();
  });

  it("keep their key's state in snapshots, and restore it to the override", () => {
    const e = new QuotaEngine();
    e.addLimit(tokens);
    e.setOverride(keys[0], "tokens", { capacity: 500, window: 2_000 }, 0);
    e.checkTokenBucket(keys[0], "tokens", 0, 400);
    const saved = JSON.parse(JSON.stringify(e.snapshot())) as ReturnType<QuotaEngine["snapshot"]>;
    expect(saved.overrides).toEqual([
      { key: keys[0].toJSON(), limit: "tokens", capacity: 500, refill: null, window: 2_000, burst: null, align: null },
    ]);
    const copy = new QuotaEngine();
    copy.restore(saved);
    expect(copy.snapshot()).toEqual(e.snapshot());
    // 100 of 500 held: past the limit's own capacity, as only the override allows.
    expect(copy.checkTokenBucket(keys[0], "tokens", 0, 100).allowed).toBe(true);
    expect(copy.stats()).toMatchObject({ keys: 1, overrides: 1 });
  });

  it("in a snapshot are checked like the rest, the engine left as it was", () => {
    const e = new QuotaEngine({ maxOverrides: 1 });
    e.addLimit(tokens);
    e.setOverride(keys[0], "tokens", { capacity: 500 }, 0);
    e.checkTokenBucket(keys[0], "tokens", 0, 400);
    const s = e.snapshot();
    const entry = s.overrides[0];
    const refusals: [unknown, string][] = [
      [
        { ...s, overrides: [{ ...entry, limit: "nope" }] },
        'snapshot.overrides[0].limit must name a limit in snapshot.limits, got "nope"',
      ],
      [
        { ...s, overrides: [entry, entry] },
        'snapshot.overrides[1] duplicates an earlier override for key 1:t2:k01:r and limit "tokens"',
      ],
      [
        { ...s, overrides: [{ ...entry, capacity: 0 }] },
        'snapshot.overrides[0] is not a valid override: LimitSpec capacity of "tokens" must be a whole number of at least 1, got 0',
      ],
      [{ ...s, overrides: [{ ...entry, extra: 1 }] }, 'snapshot.overrides[0] has an unexpected field "extra"'],
      // Without its override, the 400 charged of 500 are more than the limit's 100 can owe.
      [
        { ...s, overrides: [] },
        'snapshot.fullAt[0].full must be at most 2000.000001 ms (twice the depth of "tokens": owing its capacity) after snapshot.clock (0), got 4000',
      ],
    ];
    const other = new QuotaEngine({ maxOverrides: 1 });
    other.addLimit(limitSpec({ name: "x", capacity: 1 }));
    const before = JSON.stringify(other.snapshot());
    for (const [bad, message] of refusals) {
      expect(() => other.restore(bad)).toThrow(new SnapshotError("", "").constructor);
      let got = "";
      try {
        other.restore(bad);
      } catch (err) {
        got = (err as Error).message;
      }
      expect(got).toBe(message);
      expect(JSON.stringify(other.snapshot())).toBe(before);
    }
    const two = { ...s, overrides: [entry, { ...entry, key: keys[1].toJSON() }] };
    expect(() => new QuotaEngine({ maxOverrides: 1 }).restore(two)).toThrow(
      "snapshot.overrides[1] is past maxOverrides (1) of this engine",
    );
  });

  it("are swept like the limit's own keys: an idle key's state dropped, the override kept", () => {
    const e = new QuotaEngine({ sweepStep: 0 });
    e.addLimit(tokens);
    e.setOverride(keys[0], "tokens", { capacity: 5 }, 0);
    e.checkTokenBucket(keys[0], "tokens", 0);
    expect(e.stats().keys).toBe(1);
    expect(e.sweep(10_000).dropped).toBe(1);
    expect(e.stats()).toMatchObject({ keys: 0, overrides: 1 });
  });

  it("a reservation across a limit removed since settles the rest, and says its charge there took nothing", () => {
    const e = new QuotaEngine();
    e.addLimit(tokens);
    e.addLimit(limitSpec({ name: "req", capacity: 5 }));
    const r = e.reserve([charge(keys[0], "req", 1), charge(keys[0], "tokens", 50)], 0);
    e.removeLimit("req");
    const s = e.settle(r.id, { req: 0, tokens: 10 }, 0);
    expect(s.ok && s.charges.map((c) => [c.limit, c.refunded, c.toppedUp, c.forgiven])).toEqual([
      ["req", 0, 0, 0],
      ["tokens", 40, 0, 0],
    ]);
  });
});

// Bad input: each refused by name, or answered, the engine as it was.
const any = <T>(v: unknown): T => v as T;
const rows: Row<QuotaEngine>[] = [
  [
    "replaceLimit at NaN",
    (e) => e.replaceLimit(limitSpec({ name: "l", capacity: 2 }), Number.NaN),
    { throws: RangeError, message: "now must be a finite number of milliseconds, got NaN" },
  ],
  [
    "replaceLimit with a stray field",
    (e) => e.replaceLimit(any<LimitSpec>({ ...limitSpec({ name: "l", capacity: 2 }), brust: 3 }), 0),
    { answers: { ok: false, code: "invalid_limit", reason: 'LimitSpec has no field "brust"; did you mean "burst"?' } },
  ],
  [
    "removeLimit of a number",
    (e) => e.removeLimit(any<string>(7)),
    { throws: TypeError, message: "name must be a limit name (a string), got number 7" },
  ],
  [
    "setOverride of a key that is not a QuotaKey",
    (e) => e.setOverride(any<QuotaKey>({ id: key.id }), "l", { capacity: 2 }, 0),
    {
      throws: TypeError,
      message: "key must be a QuotaKey (new QuotaKey(scope, subject, resource)), got [object Object]",
    },
  ],
  [
    "setOverride with fields that are not an object",
    (e) => e.setOverride(key, "l", any<OverrideFields>(5), 0),
    {
      answers: {
        ok: false,
        code: "invalid_override",
        reason: "override fields must be an object (such as { capacity: 50 }), got number",
      },
    },
  ],
  [
    "setOverride naming the limit",
    (e) => e.setOverride(key, "l", any<OverrideFields>({ name: "m" }), 0),
    { answers: { ok: false, code: "invalid_override", reason: 'override fields has no field "name"' } },
  ],
  [
    "setOverride whose getter throws",
    (e) =>
      e.setOverride(
        key,
        "l",
        any<OverrideFields>(
          Object.defineProperty({}, "capacity", {
            enumerable: true,
            get: () => {
              throw new Error("boom");
            },
          }),
        ),
        0,
      ),
    { answers: { ok: false, code: "invalid_override", reason: "override fields could not be read: boom" } },
  ],
  [
    "removeOverride at Infinity",
    (e) => e.removeOverride(key, "l", Infinity),
    { throws: RangeError, message: "now must be a finite number of milliseconds, got Infinity" },
  ],
];

describe("bad input changes nothing", () => {
  eachRow(
    rows,
    () => {
      const e = new QuotaEngine();
      e.addLimit(limitSpec({ name: "l", capacity: 4 }));
      e.checkTokenBucket(key, "l", 0, 3);
      return e;
    },
    (e) => [e.snapshot(), e.stats()],
  );
});
