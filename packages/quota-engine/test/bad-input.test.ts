// Bad input of every kind, each refused with a clear message and no change to the engine.
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
type Case = [name: string, run: (e: QuotaEngine) => unknown, expected: { throws: ErrorConstructor | typeof SnapshotError; message: string } | { returns: unknown }];

const cases: Case[] = [
  ["an unknown limit name", (e) => e.checkTokenBucket(alice, "nope", 200), { returns: { allowed: false, reason: "unknown_limit", retryAfter: Infinity, trace: ["bucket nope: unknown_limit (no limit of that name)"] } }],
  ["cost 0", (e) => e.checkTokenBucket(alice, "req", 200, 0), { throws: RangeError, message: "cost must be a whole number of at least 1, got 0" }],
  ["a negative cost", (e) => e.checkWindow(alice, "req", 200, -3), { throws: RangeError, message: "cost must be a whole number of at least 1, got -3" }],
  ["a fractional cost", (e) => e.checkGcra(alice, "req", 200, 0.5), { throws: RangeError, message: "cost must be a whole number of at least 1, got 0.5" }],
  ["a NaN cost", (e) => e.checkTokenBucket(alice, "req", 200, NaN), { throws: RangeError, message: "cost must be a whole number of at least 1, got NaN" }],
  ["a cost as a string", (e) => e.checkTokenBucket(alice, "req", 200, any("1")), { throws: TypeError, message: 'cost must be a number, got string "1"' }],
  ["a NaN now", (e) => e.checkTokenBucket(alice, "req", NaN), { throws: RangeError, message: "now must be a finite number of milliseconds, got NaN" }],
  ["an infinite now", (e) => e.checkWindow(alice, "req", Infinity), { throws: RangeError, message: "now must be a finite number of milliseconds, got Infinity" }],
  ["a Date as now", (e) => e.checkGcra(alice, "req", any(new Date(0))), { throws: TypeError, message: "now must be a number of milliseconds, got object [object Date]" }],
  ["a key that is a plain object", (e) => e.checkTokenBucket(any({ scope: "a", subject: "b", resource: "c", id: "x" }), "req", 200), { throws: TypeError, message: "key must be a QuotaKey (new QuotaKey(scope, subject, resource)), got [object Object]" }],
  ["a key with an empty part", () => new QuotaKey("acme", "", "api"), { throws: RangeError, message: 'QuotaKey subject must not be empty (use a placeholder such as "*")' }],
  ["a key with a very long part", () => new QuotaKey("acme", "a".repeat(5_000), "api"), { throws: RangeError, message: "QuotaKey subject must be at most 1024 characters, got 5000" }],
  ["a key id that is not three length-prefixed parts", () => QuotaKey.parse('5:a"b:c'), { throws: RangeError, message: 'QuotaKey id must be three length-prefixed parts such as "1:a1:b1:c", got "5:a\\"b:c"' }],
  ["a limit name that is not a string", (e) => e.checkTokenBucket(alice, any(7), 200), { throws: TypeError, message: "limit must be a limit name (a string), got number 7" }],
  ["a charge set with a bad charge after good ones", (e) => e.checkAtomic([charge(alice, "req"), charge(tenant, "tok"), any<QuotaCharge>({ key: alice, limit: "req", cost: 2.5 })], 200), { throws: RangeError, message: "charges[2].cost must be a whole number of at least 1, got 2.5" }],
  ["a charge set naming an unknown limit", (e) => { const r = e.checkAtomic([charge(alice, "req"), charge(alice, "nope")], 100); return [r.committed, r.failedIndex, r.decisions.map((d) => d.reason)]; }, { returns: [false, 1, ["not_committed", "unknown_limit"]] }],
  ["a batch with a malformed input", (e) => e.checkMany("req", [{ key: alice, now: 200 }, any<EvaluationInput>({ key: "alice", now: 200 })]), { throws: TypeError, message: 'inputs[1].key must be a QuotaKey (new QuotaKey(scope, subject, resource)), got "alice"' }],
  ["a hierarchical check of cost 0", (e) => e.checkHierarchy(alice, "req", 200, 0), { throws: RangeError, message: "cost must be a whole number of at least 1, got 0" }],
  ["a duplicate limit", (e) => e.addLimit(perSecond("req", 50)), { returns: { ok: false, code: "duplicate_limit", reason: 'a limit named "req" exists already' } }],
  ["an invalid limit", (e) => e.addLimit(any<LimitSpec>({ name: "x", capacity: 1, refill: 1, window: 1_000, burst: 1, align: "yes" })), { returns: { ok: false, code: "invalid_limit", reason: 'LimitSpec align of "x" must be true or false, got "yes"' } }],
  ["a link closing a cycle", (e) => e.addLink({ child: tenant, parent: alice, limit: "req", ratio: 1 }), { returns: { ok: false, code: "cycle", reason: `linking ${tenant.id} to ${alice.id} for "req" would close a cycle` } }],
  ["usage of cost 0", (e) => e.recordUsage("alice", 0), { returns: { ok: false, code: "invalid_cost", reason: "Fair-share cost must be a whole number of at least 1, got 0" } }],
  ["a sweep budget below 0", (e) => e.sweep(200, -5), { throws: RangeError, message: "sweep budget must be 0 or more, got -5" }],
  ["a snapshot with a negative balance", (e) => { const s = e.snapshot(); return e.restore({ ...s, buckets: [{ ...s.buckets[0], tokens: -2 }] }); }, { throws: SnapshotError, message: 'snapshot.buckets[0].tokens must be from 0 to 5 (the capacity of "req"), got -2' }],
  ["a snapshot smuggling __proto__", (e) => e.restore(JSON.parse(`{"__proto__":{"admin":true},${JSON.stringify(e.snapshot()).slice(1)}`)), { throws: SnapshotError, message: 'snapshot has an unexpected field "__proto__"' }],
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
