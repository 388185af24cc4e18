// The conformance suite every QuotaStore passes: the in-process engine here, the Redis engine in
// @tideward/redis. Each scenario is computed by hand; every answer is awaited, so a synchronous
// store and an asynchronous one run the same code. The suite takes the test functions as an
// argument, so this package does not depend on a test runner.
import type { QuotaCharge } from "./charge";
import { answer, no, yes } from "./conformance-kit";
import type { Answer, ConformanceApi, ConformanceOptions } from "./conformance-kit";
import type { Decision } from "./decision";
import { QuotaKey } from "./key";
import { limitSpec } from "./limit";
import type { Awaitable, QuotaStore } from "./store";

export { answer } from "./conformance-kit";
export { reservationConformance } from "./conformance-reserve";
export { runtimeLimitConformance } from "./conformance-limits";
export type { MakeReservationStore } from "./conformance-reserve";
export type { Answer, ConformanceApi, ConformanceExpect, ConformanceOptions } from "./conformance-kit";

/**
 * Registers the conformance suite: hand-computed scenarios for every check, charge sets,
 * hierarchy, batches and configuration refusals. `make` is called once per case and must return
 * an empty store.
 *
 * @example
 * import { describe, expect, it } from "vitest";
 * import { QuotaEngine } from "@tideward/quota-engine";
 * import { quotaConformance } from "@tideward/quota-engine/conformance";
 * quotaConformance({ describe, it, expect }, () => new QuotaEngine());
 */
export function quotaConformance(
  api: ConformanceApi,
  make: () => Awaitable<QuotaStore>,
  options: ConformanceOptions = {},
): void {
  const { describe, it, expect } = api;
  const t0 = options.origin ?? 0;
  const k = (subject: string, scope = "tenant-a", resource = "api"): QuotaKey => new QuotaKey(scope, subject, resource);
  const store = async (...specs: Parameters<typeof limitSpec>[0][]): Promise<QuotaStore> => {
    const s = await make();
    for (const spec of specs) expect((await s.addLimit(limitSpec(spec))).ok).toBe(true);
    return s;
  };
  const traced = (d: Decision): void => {
    expect(Array.isArray(d.trace) && d.trace.length > 0 && d.trace.every((x) => typeof x === "string")).toBe(true);
  };

  describe(options.name ?? "QuotaStore conformance", () => {
    it("token bucket: starts full, refills continuously, says when to retry", async () => {
      const s = await store({ name: "b", capacity: 4, refill: 2, window: 1_000 });
      const a = k("alice");
      const got: Answer[] = [];
      for (let i = 0; i < 5; i++) got.push(answer(await s.checkTokenBucket(a, "b", t0)));
      expect(got).toEqual([
        yes(1, 3, 500),
        yes(1, 2, 1_000),
        yes(1, 1, 1_500),
        yes(1, 0, 2_000),
        no("exhausted", 1, 0, 500, 2_000),
      ]);
      expect(answer(await s.checkTokenBucket(a, "b", t0 + 250))).toEqual(no("exhausted", 1, 0, 250, 1_750));
      expect(answer(await s.checkTokenBucket(a, "b", t0 + 500))).toEqual(yes(1, 0, 2_000));
      // 2 500 ms at 2 a second would be 5 tokens; the bucket holds 4.
      expect(answer(await s.checkTokenBucket(a, "b", t0 + 3_000, 3))).toEqual(yes(3, 1, 1_500));
      expect(answer(await s.checkTokenBucket(a, "b", t0 + 3_000, 5))).toEqual(no("too_large", 5, 1, Infinity, 1_500));
      // Another key has a bucket of its own.
      const d = await s.checkTokenBucket(k("bob"), "b", t0 + 3_000, 4);
      expect(answer(d)).toEqual(yes(4, 0, 2_000));
      traced(d);
    });

    it("fixed window: counts per window, reopens at the first charge after it closes", async () => {
      const s = await store({ name: "w", capacity: 3, window: 1_000 });
      const a = k("alice");
      expect(answer(await s.checkWindow(a, "w", t0 + 100, 2))).toEqual(yes(2, 1, 1_000));
      expect(answer(await s.checkWindow(a, "w", t0 + 600))).toEqual(yes(1, 0, 500));
      expect(answer(await s.checkWindow(a, "w", t0 + 700))).toEqual(no("exhausted", 1, 0, 400, 400));
      expect(answer(await s.checkWindow(a, "w", t0 + 1_100))).toEqual(yes(1, 2, 1_000));
      expect(answer(await s.checkWindow(a, "w", t0 + 1_100, 4))).toEqual(no("too_large", 4, 2, Infinity, 1_000));
    });

    it("fixed window with align: windows open on multiples of the window", async () => {
      const s = await store({ name: "wa", capacity: 2, window: 1_000, align: true });
      const a = k("alice");
      expect(answer(await s.checkWindow(a, "wa", t0 + 1_500))).toEqual(yes(1, 1, 500));
      expect(answer(await s.checkWindow(a, "wa", t0 + 1_999))).toEqual(yes(1, 0, 1));
      expect(answer(await s.checkWindow(a, "wa", t0 + 1_999.5))).toEqual(no("exhausted", 1, 0, 0.5, 0.5));
      expect(answer(await s.checkWindow(a, "wa", t0 + 2_000))).toEqual(yes(1, 1, 1_000));
    });

    it("GCRA: a burst from rest, then one unit per interval", async () => {
      // 10 a second is one unit every 100 ms; burst 2 tolerates 200 ms ahead of schedule.
      const s = await store({ name: "g", capacity: 10, refill: 10, window: 1_000, burst: 2 });
      const a = k("alice");
      expect(answer(await s.checkGcra(a, "g", t0))).toEqual(yes(1, 1, 100));
      expect(answer(await s.checkGcra(a, "g", t0))).toEqual(yes(1, 0, 200));
      expect(answer(await s.checkGcra(a, "g", t0))).toEqual(no("exhausted", 1, 0, 100, 200));
      expect(answer(await s.checkGcra(a, "g", t0 + 100))).toEqual(yes(1, 0, 200));
      expect(answer(await s.checkGcra(a, "g", t0 + 150))).toEqual(no("exhausted", 1, 0, 50, 150));
      expect(answer(await s.checkGcra(a, "g", t0 + 150, 3))).toEqual(no("too_large", 3, 0, Infinity, 150));
      expect(answer(await s.checkGcra(a, "g", t0 + 1_000, 2))).toEqual(yes(2, 0, 200));
    });

    it("real clocks: from rest a GCRA burst of one, and of three, passes whole at a fractional instant", async () => {
      // 7 a second: an interval of 142.857… ms, which no clock reading near Date.now() lands on.
      const s = await store(
        { name: "g1", capacity: 7, refill: 7, window: 1_000, burst: 1 },
        { name: "g3", capacity: 7, refill: 7, window: 1_000, burst: 3 },
      );
      const now = t0 + 0.123;
      const one = await s.checkGcra(k("alice"), "g1", now);
      expect([one.allowed, one.remaining]).toEqual([true, 0]);
      const three = [
        await s.checkGcra(k("bob"), "g3", now),
        await s.checkGcra(k("bob"), "g3", now),
        await s.checkGcra(k("bob"), "g3", now),
        await s.checkGcra(k("bob"), "g3", now),
      ];
      expect(three.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ]);
    });

    it("real clocks: a token bucket and a fixed window pass exactly their capacity from rest at a fractional instant", async () => {
      const s = await store({ name: "b", capacity: 5, refill: 7, window: 1_000 });
      const now = t0 + 0.7;
      const bucket: boolean[] = [];
      const window: boolean[] = [];
      for (let i = 0; i < 6; i++) bucket.push((await s.checkTokenBucket(k("alice"), "b", now)).allowed);
      for (let i = 0; i < 6; i++) window.push((await s.checkWindow(k("alice"), "b", now)).allowed);
      expect([bucket, window]).toEqual([
        [true, true, true, true, true, false],
        [true, true, true, true, true, false],
      ]);
    });

    it("real clocks: retried at now + retryAfter (as the caller adds it), a refused check passes, for every algorithm", async () => {
      const s = await store({ name: "r", capacity: 2, refill: 7, window: 1_000, burst: 2 });
      const now = t0 + 0.3;
      const kinds = [
        (at: number, cost: number) => s.checkTokenBucket(k("alice"), "r", at, cost),
        (at: number, cost: number) => s.checkWindow(k("alice"), "r", at, cost),
        (at: number, cost: number) => s.checkGcra(k("alice"), "r", at, cost),
      ];
      for (const check of kinds) {
        expect((await check(now, 2)).allowed).toBe(true);
        const refused = await check(now, 1);
        expect([refused.allowed, refused.retryAfter > 0, Number.isFinite(refused.retryAfter)]).toEqual([
          false,
          true,
          true,
        ]);
        expect((await check(now + refused.retryAfter, 1)).allowed).toBe(true);
      }
    });

    it("real clocks: a charge set retried at now + retryAfter passes", async () => {
      const s = await store(
        { name: "u", capacity: 3, refill: 7, window: 1_000 },
        { name: "m", capacity: 4, refill: 9, window: 1_000, burst: 4 },
      );
      const now = t0 + 0.45;
      const set: QuotaCharge[] = [
        { key: k("alice"), limit: "u", cost: 2 },
        { key: k("*", "*", "m"), limit: "m", cost: 3, kind: "gcra" },
        { key: k("alice"), limit: "u", cost: 1 },
      ];
      expect((await s.checkAtomic(set, now)).committed).toBe(true);
      const refused = await s.checkAtomic(set, now);
      expect([refused.committed, refused.retryAfter > 0, Number.isFinite(refused.retryAfter)]).toEqual([
        false,
        true,
        true,
      ]);
      expect((await s.checkAtomic(set, now + refused.retryAfter)).committed).toBe(true);
    });

    it("an unknown limit is an answer, not an error", async () => {
      const s = await store({ name: "b", capacity: 1 });
      for (const d of [
        await s.checkTokenBucket(k("a"), "nope", t0),
        await s.checkWindow(k("a"), "nope", t0),
        await s.checkGcra(k("a"), "nope", t0),
      ]) {
        expect(answer(d)).toEqual(no("unknown_limit", 1, 0, Infinity, 0));
        traced(d);
      }
    });

    it("atomic: all three dimensions charged together, or none", async () => {
      const s = await store(
        { name: "user", capacity: 5, refill: 5, window: 1_000 },
        { name: "tenant", capacity: 1_000, refill: 1_000, window: 1_000 },
        { name: "model", capacity: 1_500, refill: 1_000, window: 1_000 },
      );
      const set: QuotaCharge[] = [
        { key: k("alice"), limit: "user", cost: 1 },
        { key: k("*"), limit: "tenant", cost: 800 },
        { key: k("*", "*", "gpt"), limit: "model", cost: 800 },
      ];
      const first = await s.checkAtomic(set, t0);
      expect([first.allowed, first.committed, first.failedIndex, first.retryAfter]).toEqual([true, true, -1, 0]);
      expect(first.decisions.map(answer)).toEqual([yes(1, 4, 200), yes(800, 200, 800), yes(800, 700, 800)]);

      const second = await s.checkAtomic(set, t0);
      expect([second.allowed, second.committed, second.failedIndex]).toEqual([false, false, 1]);
      // The tenant needs 600 more tokens at 1 a ms, the model 100 more: the set fits in 600 ms.
      expect(second.retryAfter).toBe(600);
      expect(second.decisions.map(answer)).toEqual([
        no("not_committed", 1, 3, 0, 400),
        no("exhausted", 800, 200, 600, 800),
        no("exhausted", 800, 700, 100, 800),
      ]);
      // Nothing was debited: the user still holds 4 tokens, the tenant 200.
      expect(answer(await s.checkTokenBucket(k("alice"), "user", t0))).toEqual(yes(1, 3, 400));
      expect(answer(await s.checkTokenBucket(k("*"), "tenant", t0, 200))).toEqual(yes(200, 0, 1_000));
    });

    it("atomic: repeated charges to one bucket add up on staged state", async () => {
      const s = await store({ name: "b", capacity: 5, refill: 5, window: 1_000 });
      const a = k("alice");
      const over = await s.checkAtomic(
        [
          { key: a, limit: "b", cost: 3 },
          { key: a, limit: "b", cost: 3 },
        ],
        t0,
      );
      expect([over.allowed, over.failedIndex, over.retryAfter]).toEqual([false, 1, Infinity]); // 6 > 5: never as one set
      expect(over.decisions.map(answer)).toEqual([no("not_committed", 3, 2, 0, 600), no("exhausted", 3, 2, 200, 600)]);
      const fits = await s.checkAtomic(
        [
          { key: a, limit: "b", cost: 2 },
          { key: a, limit: "b", cost: 3 },
        ],
        t0,
      );
      expect(fits.committed).toBe(true);
      expect(fits.decisions.map(answer)).toEqual([yes(2, 3, 400), yes(3, 0, 1_000)]);
      expect(answer(await s.checkTokenBucket(a, "b", t0))).toEqual(no("exhausted", 1, 0, 200, 1_000));
    });

    it("atomic: a missing limit rejects the whole set", async () => {
      const s = await store({ name: "b", capacity: 2 });
      const report = await s.checkAtomic(
        [
          { key: k("a"), limit: "b", cost: 1 },
          { key: k("a"), limit: "nope", cost: 1 },
        ],
        t0,
      );
      expect([report.allowed, report.committed, report.failedIndex, report.retryAfter]).toEqual([
        false,
        false,
        1,
        Infinity,
      ]);
      expect(report.decisions.map((d) => d.reason)).toEqual(["not_committed", "unknown_limit"]);
      expect(answer(await s.checkTokenBucket(k("a"), "b", t0, 2))).toEqual(yes(2, 0, 1_000));
    });

    it("atomic: one set may mix a bucket, a window and a GCRA flow", async () => {
      const s = await store({ name: "r", capacity: 2, refill: 2, window: 1_000, burst: 2 });
      const a = k("alice");
      const set: QuotaCharge[] = [
        { key: a, limit: "r", cost: 1, kind: "bucket" },
        { key: a, limit: "r", cost: 2, kind: "window" },
        { key: a, limit: "r", cost: 1, kind: "gcra" },
      ];
      const ok = await s.checkAtomic(set, t0);
      expect(ok.decisions.map(answer)).toEqual([yes(1, 1, 500), yes(2, 0, 1_000), yes(1, 1, 500)]);
      const again = await s.checkAtomic(set, t0 + 500);
      expect([again.committed, again.failedIndex, again.retryAfter]).toEqual([false, 1, 500]);
      expect(answer(await s.checkTokenBucket(a, "r", t0 + 500, 2))).toEqual(yes(2, 0, 1_000)); // the bucket was not charged again
    });

    it("peekAtomic answers without charging", async () => {
      const s = await store({ name: "b", capacity: 1 });
      const set = [{ key: k("a"), limit: "b", cost: 1 }];
      const peek = await s.peekAtomic(set, t0);
      expect([peek.allowed, peek.committed]).toEqual([true, false]);
      expect(peek.decisions.map(answer)).toEqual([yes(1, 0, 1_000)]);
      expect((await s.checkAtomic(set, t0)).committed).toBe(true);
      expect((await s.peekAtomic(set, t0)).allowed).toBe(false);
    });

    it("hierarchy: a check charges the whole chain, scaled by each link's ratio", async () => {
      const s = await store({ name: "req", capacity: 10, refill: 10, window: 1_000 });
      const alice = k("alice");
      const bob = k("bob");
      const acme = k("*", "acme", "*");
      const root = k("*", "*", "*");
      expect((await s.addLink({ child: alice, parent: acme, limit: "req", ratio: 1 })).ok).toBe(true);
      expect((await s.addLink({ child: bob, parent: acme, limit: "req", ratio: 1 })).ok).toBe(true);
      expect((await s.addLink({ child: acme, parent: root, limit: "req", ratio: 2 })).ok).toBe(true);
      // alice 2 → acme 2 → root 4: the child could take 3 more before root runs dry.
      const first = await s.checkHierarchy(alice, "req", t0, 2);
      expect(answer(first)).toEqual(yes(2, 3, 400));
      expect(first.trace.length).toBe(3);
      expect(answer(await s.checkHierarchy(bob, "req", t0, 3))).toEqual(yes(3, 0, 1_000));
      // root holds 0 and needs 2: 200 ms at 10 a second. Nothing is charged.
      const denied = await s.checkHierarchy(alice, "req", t0, 1);
      expect(answer(denied)).toEqual(no("exhausted", 1, 0, 200, 1_000));
      expect(answer(await s.checkTokenBucket(alice, "req", t0))).toEqual(yes(1, 7, 300));
      expect(answer(await s.checkTokenBucket(acme, "req", t0))).toEqual(yes(1, 4, 600));
    });

    it("hierarchy: links that would close a cycle, repeat a child or name no limit are refused", async () => {
      const s = await store({ name: "req", capacity: 10 });
      const [a, b, c] = [k("a"), k("b"), k("c")];
      expect((await s.addLink({ child: a, parent: b, limit: "req", ratio: 1 })).ok).toBe(true);
      expect((await s.addLink({ child: b, parent: c, limit: "req", ratio: 1 })).ok).toBe(true);
      const codes = [
        await s.addLink({ child: c, parent: a, limit: "req", ratio: 1 }),
        await s.addLink({ child: a, parent: a, limit: "req", ratio: 1 }),
        await s.addLink({ child: a, parent: c, limit: "req", ratio: 1 }),
        await s.addLink({ child: c, parent: k("d"), limit: "nope", ratio: 1 }),
        await s.addLink({ child: c, parent: k("d"), limit: "req", ratio: 0 }),
      ].map((r) => (r.ok ? "ok" : r.code));
      expect(codes).toEqual(["cycle", "cycle", "duplicate_link", "unknown_limit", "invalid_link"]);
    });

    it("batch: every input in order, with totals", async () => {
      const s = await store({ name: "b", capacity: 2, refill: 2, window: 1_000 });
      const a = k("alice");
      const report = await s.checkMany("b", [
        { key: a, now: t0 },
        { key: a, now: t0 },
        { key: a, now: t0 + 100 },
        { key: a, now: t0 + 500, cost: 1 },
        { key: k("bob"), now: t0 + 500, cost: 2 },
      ]);
      expect([report.total, report.allowed, report.denied]).toEqual([5, 4, 1]);
      expect(report.decisions.map((d) => d.reason)).toEqual(["ok", "ok", "exhausted", "ok", "ok"]);
    });

    it("configuration: a duplicate or invalid limit is refused with a reason", async () => {
      const s = await store({ name: "b", capacity: 2 });
      const dup = await s.addLimit(limitSpec({ name: "b", capacity: 3 }));
      const bad = await s.addLimit({ name: "c", capacity: 0, refill: 1, window: 1_000, burst: 1, align: false });
      expect([dup.ok ? "ok" : dup.code, bad.ok ? "ok" : bad.code]).toEqual(["duplicate_limit", "invalid_limit"]);
      expect(bad.ok ? "" : bad.reason).toBe('LimitSpec capacity of "c" must be a whole number of at least 1, got 0');
      expect(answer(await s.checkTokenBucket(k("a"), "b", t0, 2))).toEqual(yes(2, 0, 1_000)); // the first spec stands
    });
  });
}
