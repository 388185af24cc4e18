// Bad input of every kind, each refused with a clear message and no change to the engine.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, SnapshotError, charge, limitSpec, perSecond } from "@tideward/quota-engine";
import type { EvaluationInput, LimitSpec, QuotaCharge } from "@tideward/quota-engine";

const alice = new QuotaKey("acme", "alice", "api");
const tenant = new QuotaKey("acme", "*", "api");

function engine(): QuotaEngine {
  const e = new QuotaEngine();
  e.addLimit(perSecond("req", 5));
  e.addLimit(limitSpec({ name: "tok", capacity: 1_000, refill: 100, window: 1_000 }));
  e.addLink({ child: alice, parent: tenant, limit: "req", ratio: 2 });
  e.addSubject("alice", 1);
  e.checkTokenBucket(alice, "req", 100, 2);
  e.checkWindow(alice, "tok", 100, 10);
  e.checkGcra(tenant, "req", 100);
  return e;
}

const any = <T>(x: unknown): T => x as T;
type Case = [
  name: string,
  run: (e: QuotaEngine) => unknown,
  expected: { throws: ErrorConstructor | typeof SnapshotError; message: string } | { returns: unknown },
];

const cases: Case[] = [
  [
    "an unknown limit name",
    (e) => e.checkTokenBucket(alice, "nope", 200),
    {
      returns: {
        allowed: false,
        reason: "unknown_limit",
        retryAfter: Infinity,
        trace: ["bucket nope: unknown_limit (no limit of that name)"],
      },
    },
  ],
  [
    "cost 0",
    (e) => e.checkTokenBucket(alice, "req", 200, 0),
    { throws: RangeError, message: "cost must be a whole number of at least 1, got 0" },
  ],
  [
    "a negative cost",
    (e) => e.checkWindow(alice, "req", 200, -3),
    { throws: RangeError, message: "cost must be a whole number of at least 1, got -3" },
  ],
  [
    "a fractional cost",
    (e) => e.checkGcra(alice, "req", 200, 0.5),
    { throws: RangeError, message: "cost must be a whole number of at least 1, got 0.5" },
  ],
  [
    "a NaN cost",
    (e) => e.checkTokenBucket(alice, "req", 200, NaN),
    { throws: RangeError, message: "cost must be a whole number of at least 1, got NaN" },
  ],
  [
    "a cost as a string",
    (e) => e.checkTokenBucket(alice, "req", 200, any("1")),
    { throws: TypeError, message: 'cost must be a number, got string "1"' },
  ],
  [
    "a NaN now",
    (e) => e.checkTokenBucket(alice, "req", NaN),
    { throws: RangeError, message: "now must be a finite number of milliseconds, got NaN" },
  ],
  [
    "an infinite now",
    (e) => e.checkWindow(alice, "req", Infinity),
    { throws: RangeError, message: "now must be a finite number of milliseconds, got Infinity" },
  ],
  [
    "a Date as now",
    (e) => e.checkGcra(alice, "req", any(new Date(0))),
    { throws: TypeError, message: "now must be a number of milliseconds, got object [object Date]" },
  ],
  [
    "a key that is a plain object",
    (e) => e.checkTokenBucket(any({ scope: "a", subject: "b", resource: "c", id: "x" }), "req", 200),
    {
      throws: TypeError,
      message: "key must be a QuotaKey (new QuotaKey(scope, subject, resource)), got [object Object]",
    },
  ],
  [
    "a key with an empty part",
    () => new QuotaKey("acme", "", "api"),
    { throws: RangeError, message: 'QuotaKey subject must not be empty (use a placeholder such as "*")' },
  ],
  [
    "a key with a very long part",
    () => new QuotaKey("acme", "a".repeat(5_000), "api"),
    { throws: RangeError, message: "QuotaKey subject must be at most 1024 characters, got 5000" },
  ],
  [
    "a key id that is not three length-prefixed parts",
    () => QuotaKey.parse('5:a"b:c'),
    {
      throws: RangeError,
      message: 'QuotaKey id must be three length-prefixed parts such as "1:a1:b1:c", got "5:a\\"b:c"',
    },
  ],
  [
    "a limit name that is not a string",
    (e) => e.checkTokenBucket(alice, any(7), 200),
    { throws: TypeError, message: "limit must be a limit name (a string), got number 7" },
  ],
  [
    "a charge set with a bad charge after good ones",
    (e) =>
      e.checkAtomic(
        [charge(alice, "req"), charge(tenant, "tok"), any<QuotaCharge>({ key: alice, limit: "req", cost: 2.5 })],
        200,
      ),
    { throws: RangeError, message: "charges[2].cost must be a whole number of at least 1, got 2.5" },
  ],
  [
    "a charge set naming an unknown limit",
    (e) => {
      const r = e.checkAtomic([charge(alice, "req"), charge(alice, "nope")], 100);
      return [r.committed, r.failedIndex, r.decisions.map((d) => d.reason)];
    },
    { returns: [false, 1, ["not_committed", "unknown_limit"]] },
  ],
  [
    "a batch with a malformed input",
    (e) => e.checkMany("req", [{ key: alice, now: 200 }, any<EvaluationInput>({ key: "alice", now: 200 })]),
    {
      throws: TypeError,
      message: 'inputs[1].key must be a QuotaKey (new QuotaKey(scope, subject, resource)), got "alice"',
    },
  ],
  [
    "a hierarchical check of cost 0",
    (e) => e.checkHierarchy(alice, "req", 200, 0),
    { throws: RangeError, message: "cost must be a whole number of at least 1, got 0" },
  ],
  [
    "a duplicate limit",
    (e) => e.addLimit(perSecond("req", 50)),
    { returns: { ok: false, code: "duplicate_limit", reason: 'a limit named "req" exists already' } },
  ],
  [
    "an invalid limit",
    (e) => e.addLimit(any<LimitSpec>({ name: "x", capacity: 1, refill: 1, window: 1_000, burst: 1, align: "yes" })),
    {
      returns: { ok: false, code: "invalid_limit", reason: 'LimitSpec align of "x" must be true or false, got "yes"' },
    },
  ],
  [
    "a limit with a misspelt field",
    (e) => e.addLimit(any<LimitSpec>({ ...perSecond("x", 5), aling: true })),
    { returns: { ok: false, code: "invalid_limit", reason: 'LimitSpec has no field "aling"; did you mean "align"?' } },
  ],
  [
    "a limit with a field no LimitSpec has",
    (e) => e.addLimit(any<LimitSpec>({ ...perSecond("x", 5), colour: "red" })),
    { returns: { ok: false, code: "invalid_limit", reason: 'LimitSpec has no field "colour"' } },
  ],
  [
    "a charge with a misspelt kind (which would run as a token bucket)",
    (e) =>
      e.checkAtomic([charge(alice, "req"), any<QuotaCharge>({ key: alice, limit: "req", cost: 1, knid: "gcra" })], 200),
    { throws: TypeError, message: 'charges[1] has no field "knid"; did you mean "kind"?' },
  ],
  [
    "a charge without a kind and with a field no charge has",
    (e) => e.peekAtomic([any<QuotaCharge>({ key: alice, limit: "req", cost: 1, kind: undefined, weight: 2 })], 200),
    { throws: TypeError, message: 'charges[0] has no field "weight"' },
  ],
  [
    "a link closing a cycle",
    (e) => e.addLink({ child: tenant, parent: alice, limit: "req", ratio: 1 }),
    {
      returns: {
        ok: false,
        code: "cycle",
        reason: `linking ${tenant.id} to ${alice.id} for "req" would close a cycle`,
      },
    },
  ],
  [
    "usage of cost 0",
    (e) => e.recordUsage("alice", 0),
    {
      returns: {
        ok: false,
        code: "invalid_cost",
        reason: "Fair-share cost must be a whole number of at least 1, got 0",
      },
    },
  ],
  [
    "a sweep budget below 0",
    (e) => e.sweep(200, -5),
    { throws: RangeError, message: "sweep budget must be 0 or more, got -5" },
  ],
  [
    "a snapshot with a bucket owing more than its capacity",
    (e) => {
      const s = e.snapshot();
      return e.restore({ ...s, fullAt: [{ ...s.fullAt[0], full: 100 + 2_001 }] });
    },
    {
      throws: SnapshotError,
      message:
        'snapshot.fullAt[0].full must be at most 2000.000001 ms (twice the depth of "req": owing its capacity) after snapshot.clock (100), got 2101',
    },
  ],
  [
    "a cost of null",
    (e) => e.checkTokenBucket(alice, "req", 200, any(null)),
    { throws: TypeError, message: "cost must be a number, got object null" },
  ],
  [
    "a cost of 1n",
    (e) => e.checkWindow(alice, "req", 200, any(1n)),
    { throws: TypeError, message: "cost must be a number, got bigint 1n" },
  ],
  [
    "a cost of true",
    (e) => e.checkGcra(alice, "req", 200, any(true)),
    { throws: TypeError, message: "cost must be a number, got boolean true" },
  ],
  [
    "a Symbol cost in a charge set",
    (e) =>
      e.checkAtomic([charge(alice, "req"), any<QuotaCharge>({ key: tenant, limit: "req", cost: Symbol("c") })], 200),
    { throws: TypeError, message: "charges[1].cost must be a number, got symbol Symbol(c)" },
  ],
  [
    "a now past 2^45 ms",
    (e) => e.checkTokenBucket(alice, "req", 1e20),
    {
      throws: RangeError,
      message:
        "now must be within ±35184372088832 ms (±2^45, about 1 115 years either side of 1970), got 100000000000000000000",
    },
  ],
  [
    "a now given as a string",
    (e) => e.checkAtomic([charge(alice, "req")], any("200")),
    { throws: TypeError, message: 'now must be a number of milliseconds, got string "200"' },
  ],
  [
    "a forged key carrying a real key's id",
    (e) =>
      e.checkTokenBucket(Object.assign(Object.create(QuotaKey.prototype) as QuotaKey, { id: alice.id }), "req", 200),
    {
      throws: TypeError,
      message: `key must be a QuotaKey (new QuotaKey(scope, subject, resource)), got [object Object]`,
    },
  ],
  [
    "a forged key in a charge set, after a real one",
    (e) => e.checkAtomic([charge(alice, "req"), charge(Object.create(QuotaKey.prototype) as QuotaKey, "req")], 200),
    {
      throws: TypeError,
      message: "charges[1].key must be a QuotaKey (new QuotaKey(scope, subject, resource)), got [object Object]",
    },
  ],
  [
    "a forged key in a link",
    (e) => e.addLink({ child: Object.create(QuotaKey.prototype) as QuotaKey, parent: tenant, limit: "req", ratio: 1 }),
    { returns: { ok: false, code: "invalid_link", reason: "QuotaLink child must be a QuotaKey, got [object Object]" } },
  ],
  [
    "a charge whose cost getter answers 0.5 when read",
    (e) =>
      e.checkAtomic(
        [
          charge(alice, "req"),
          any<QuotaCharge>({
            key: tenant,
            limit: "req",
            get cost() {
              return 0.5;
            },
          }),
        ],
        200,
      ),
    { throws: RangeError, message: "charges[1].cost must be a whole number of at least 1, got 0.5" },
  ],
  [
    "a limit whose window is 1e308 ms",
    (e) => e.addLimit(any<LimitSpec>({ name: "huge", capacity: 5, refill: 5, window: 1e308, burst: 5, align: false })),
    {
      returns: {
        ok: false,
        code: "invalid_limit",
        reason: 'LimitSpec window of "huge" must be at most 17592186044416 ms (2^44, about 557 years), got 1e+308',
      },
    },
  ],
  [
    "a limit whose window is below the clock's step",
    (e) => e.addLimit(any<LimitSpec>({ name: "tiny", capacity: 5, refill: 5, window: 1e-5, burst: 5, align: false })),
    {
      returns: {
        ok: false,
        code: "invalid_limit",
        reason:
          'LimitSpec window of "tiny" must be at least 0.0625 ms (2^-4; a shorter span is too close to a clock reading\'s own step), got 0.00001',
      },
    },
  ],
  [
    "a limit that would take centuries to refill",
    (e) =>
      e.addLimit(
        any<LimitSpec>({ name: "slow", capacity: 1_000_000, refill: 1, window: 1e12, burst: 1, align: false }),
      ),
    {
      returns: {
        ok: false,
        code: "invalid_limit",
        reason:
          'LimitSpec refill of "slow" must be at least 56844 for 1000000 units over a window of 1000000000000 ms (they must refill within 17592186044416 ms, 2^44), got 1',
      },
    },
  ],
  [
    "a limit spec that is not an object",
    (e) => e.addLimit(any(7)),
    { returns: { ok: false, code: "invalid_limit", reason: "LimitSpec must be an object, got 7" } },
  ],
  [
    "limitSpec with a misspelt field",
    () => limitSpec(any({ name: "x", capacity: 1, windwo: 5 })),
    { throws: TypeError, message: 'limitSpec has no option "windwo"; did you mean "window"?' },
  ],
  [
    "an engine policy of null",
    () => new QuotaEngine(any(null)),
    { throws: TypeError, message: "QuotaEngine policy must be an object, got null" },
  ],
  [
    "an engine policy with a misspelt field",
    () => new QuotaEngine(any({ maxkeys: 5 })),
    { throws: TypeError, message: 'QuotaEngine has no option "maxkeys"; did you mean "maxKeys"?' },
  ],
  [
    "a batch input whose now is past 2^45 ms",
    (e) =>
      e.checkMany("req", [
        { key: alice, now: 200 },
        { key: alice, now: -1e16 },
      ]),
    {
      throws: RangeError,
      message:
        "inputs[1].now must be within ±35184372088832 ms (±2^45, about 1 115 years either side of 1970), got -10000000000000000",
    },
  ],
  [
    "a charge set of a length past any atomic set (a sparse array costs its maker nothing)",
    (e) => e.checkAtomic(new Array(2 ** 32 - 1), 200),
    { throws: RangeError, message: "charges must hold at most 65536 charges (an atomic set), got 4294967295" },
  ],
  [
    "a batch of a length past any batch",
    (e) => e.checkMany("req", new Array(2 ** 28)),
    { throws: RangeError, message: "inputs must hold at most 16777216 inputs (split the batch), got 268435456" },
  ],
  [
    "a limit spec whose getter throws",
    (e) =>
      e.addLimit(
        any<LimitSpec>({
          name: "x",
          get capacity(): number {
            throw new Error("getter boom");
          },
        }),
      ),
    { returns: { ok: false, code: "invalid_limit", reason: "LimitSpec could not be read: getter boom" } },
  ],
  [
    "a limit spec that is a revoked Proxy",
    (e) => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return e.addLimit(any<LimitSpec>(proxy));
    },
    {
      returns: {
        ok: false,
        code: "invalid_limit",
        reason:
          "LimitSpec could not be read: Cannot perform 'getOwnPropertyDescriptor' on a proxy that has been revoked",
      },
    },
  ],
  [
    "a link whose getter throws",
    (e) =>
      e.addLink(
        any({
          child: alice,
          get parent(): QuotaKey {
            throw new Error("link boom");
          },
          limit: "req",
          ratio: 1,
        }),
      ),
    { returns: { ok: false, code: "invalid_link", reason: "QuotaLink could not be read: link boom" } },
  ],
  [
    "a snapshot with a window ending before any reading",
    (e) => {
      const s = e.snapshot();
      return e.restore({ ...s, windows: [{ ...s.windows[0], end: -1e300 }] });
    },
    {
      throws: SnapshotError,
      message: "snapshot.windows[0].end must be at least −35184372088832 ms (−2^45), got -1e+300",
    },
  ],
  [
    "a snapshot smuggling __proto__",
    (e) => e.restore(JSON.parse(`{"__proto__":{"admin":true},${JSON.stringify(e.snapshot()).slice(1)}`)),
    { throws: SnapshotError, message: 'snapshot has an unexpected field "__proto__"' },
  ],
];

describe("bad input is refused with a clear message and no state change", () => {
  it("the table has at least 15 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(15);
  });

  it.each(cases)("%s", (_, run, expected) => {
    const e = engine();
    const before = JSON.stringify(e.snapshot());
    const stats = JSON.stringify(e.stats());
    if ("throws" in expected) {
      let error: unknown;
      try {
        run(e);
      } catch (x) {
        error = x;
      }
      expect(error).toBeInstanceOf(expected.throws);
      expect((error as Error).message).toBe(expected.message);
    } else {
      expect(run(e)).toMatchObject(expected.returns as object);
    }
    expect(JSON.stringify(e.snapshot())).toBe(before);
    expect(JSON.stringify(e.stats())).toBe(stats);
  });
});

describe("hostile traffic (property)", () => {
  const hostile: unknown[] = [
    null,
    undefined,
    true,
    "1",
    1n,
    Symbol("x"),
    NaN,
    -1,
    0,
    0.5,
    Infinity,
    -Infinity,
    1e300,
    -1e20,
    {},
    [],
    () => 1,
  ];

  it("bad arguments mixed into real traffic, clocks going both ways, never put a bucket over its capacity or a window over its count", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 4 }),
            fc.integer({ min: -300, max: 600 }),
            fc.integer({ min: 1, max: 6 }),
            fc.integer({ min: 0, max: hostile.length + 3 }),
          ),
          { maxLength: 120 },
        ),
        fc.constantFrom(0, 1_700_000_000_000.5),
        (ops, origin) => {
          const e = engine();
          let now = origin + 1_000;
          for (const [op, dt, cost, bad] of ops) {
            now += dt;
            // Some calls carry one hostile argument in place of the cost, the clock or the key.
            const x = bad < hostile.length ? hostile[bad] : undefined;
            const c = x === undefined ? cost : bad % 3 === 0 ? x : cost;
            const t = x !== undefined && bad % 3 === 1 ? x : now;
            const k = x !== undefined && bad % 3 === 2 ? x : alice;
            try {
              if (op === 0) e.checkTokenBucket(any(k), "req", any(t), any(c));
              else if (op === 1) e.checkWindow(any(k), "tok", any(t), any(c));
              else if (op === 2) e.checkGcra(any(k), "req", any(t), any(c));
              else if (op === 3)
                e.checkAtomic([charge(tenant, "req", 1), any<QuotaCharge>({ key: k, limit: "tok", cost: c })], any(t));
              else e.checkHierarchy(any(k), "req", any(t), any(c));
            } catch (error) {
              if (!(error instanceof TypeError || error instanceof RangeError)) throw error;
            }
            const s = e.snapshot();
            for (const b of s.buckets) if (b.tokens > (e.limit(b.limit)?.capacity ?? 0)) return false;
            for (const b of s.fullAt) {
              // Full again at most the bucket's depth after the clock: never more than capacity missing.
              const l = e.limit(b.limit);
              if (
                l === undefined ||
                b.full - (s.clock ?? -Infinity) > ((l.capacity * l.window) / l.refill) * (1 + 1e-9)
              )
                return false;
            }
            for (const w of s.windows) if (w.used > (e.limit(w.limit)?.capacity ?? 0)) return false;
            for (const g of s.gcra) if (g.ahead < 0 || g.ahead > 2 * (e.limit(g.limit)?.window ?? 0)) return false;
          }
          return true;
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("unknown fields", () => {
  it("a charge that names its kind is not scanned (the hot path); one without a kind, or kind undefined, is accepted when it holds only known fields", () => {
    const e = engine();
    const extra = any<QuotaCharge>({ ...charge(alice, "req", 1, "gcra"), note: "kept out of the way" });
    expect(e.checkAtomic([extra], 200).committed).toBe(true);
    expect(e.checkAtomic([{ key: alice, limit: "req", cost: 1 }], 200).committed).toBe(true);
    expect(e.checkAtomic([{ key: alice, limit: "req", cost: 1, kind: undefined }], 200).committed).toBe(true);
    // The misspelt kind of the review: GCRA burst 1 lets one through back to back, not five.
    const g = new QuotaEngine();
    g.addLimit(limitSpec({ name: "api", capacity: 5, burst: 1 }));
    expect(g.limit("api")).toBeDefined();
    expect(g.addLimit(any<LimitSpec>({ name: "b", capacity: 5, aling: true })).ok).toBe(false);
    expect(g.limit("b")).toBeUndefined();
    const passed = [0, 1, 2, 3, 4].filter(() => g.checkAtomic([charge(alice, "api", 1, "gcra")], 0).committed);
    expect(passed).toHaveLength(1);
    expect(() => g.checkAtomic([any<QuotaCharge>({ key: alice, limit: "api", cost: 1, knid: "gcra" })], 0)).toThrow(
      /did you mean "kind"/,
    );
  });
});
