// The conformance suite of limits that change while a store runs: a limit replaced (each
// algorithm's state re-based onto it) or removed, and a per-key override set and taken away,
// computed by hand, against any RuntimeLimitStore (the in-process engine here, a Redis engine
// later): after a change, every store decides the same.
import { answer, no, yes } from "./conformance-kit";
import type { ConformanceApi, ConformanceOptions } from "./conformance-kit";
import { QuotaKey } from "./key";
import { limitSpec } from "./limit";
import type { LimitFields } from "./limit";
import type { Result } from "./result";
import type { Awaitable, RuntimeLimitStore } from "./store";

const code = (r: Result<string>): string => (r.ok ? "ok" : r.code);

/**
 * Registers the conformance suite of runtime limits: what each algorithm's state becomes when its
 * limit is replaced (a bucket keeps its level, clamped to the new capacity; a window its count; a
 * GCRA flow its theoretical arrival time), what removing a limit takes with it, what a per-key
 * override does to that key alone, and the refusals that change nothing. `make` is called once per
 * case and must return an empty store.
 *
 * @example
 * import { describe, expect, it } from "vitest";
 * import { QuotaEngine } from "@tideward/quota-engine";
 * import { runtimeLimitConformance } from "@tideward/quota-engine/conformance";
 * runtimeLimitConformance({ describe, it, expect }, () => new QuotaEngine());
 */
export function runtimeLimitConformance(
  api: ConformanceApi,
  make: () => Awaitable<RuntimeLimitStore>,
  options: ConformanceOptions = {},
): void {
  const { describe, it, expect } = api;
  const t0 = options.origin ?? 0;
  const k = (subject: string, scope = "tenant-a", resource = "api"): QuotaKey => new QuotaKey(scope, subject, resource);
  const store = async (...specs: LimitFields[]): Promise<RuntimeLimitStore> => {
    const s = await make();
    for (const spec of specs) expect((await s.addLimit(limitSpec(spec))).ok).toBe(true);
    return s;
  };

  describe(options.name ?? "RuntimeLimitStore conformance", () => {
    it("replace a token bucket: each key keeps its level, clamped to the new capacity", async () => {
      // 10 tokens, one every 100 ms.
      const s = await store({ name: "b", capacity: 10, refill: 10, window: 1_000 });
      const [a, b] = [k("alice"), k("bob")];
      await s.checkTokenBucket(a, "b", t0, 2);
      await s.checkTokenBucket(b, "b", t0, 7);
      // alice's 8 cut to 5; bob's 3 stay 3.
      expect(code(await s.replaceLimit(limitSpec({ name: "b", capacity: 5, refill: 10 }), t0))).toBe("ok");
      expect(answer(await s.checkTokenBucket(a, "b", t0, 5))).toEqual(yes(5, 0, 500));
      expect(answer(await s.checkTokenBucket(b, "b", t0, 4))).toEqual(no("exhausted", 4, 3, 100, 200));
      // Twice the capacity at twice the rate, 100 ms later: bob's 4 stay 4 and refill a token every 50 ms.
      expect(code(await s.replaceLimit(limitSpec({ name: "b", capacity: 20, refill: 20 }), t0 + 100))).toBe("ok");
      expect(answer(await s.checkTokenBucket(b, "b", t0 + 100, 5))).toEqual(no("exhausted", 5, 4, 50, 800));
    });

    it("replace a fixed window: it keeps its count, and closes no later than a new window would", async () => {
      const s = await store({ name: "w", capacity: 10, window: 1_000 });
      const [a, b] = [k("alice"), k("bob")];
      await s.checkWindow(a, "w", t0 + 100, 7);
      await s.checkWindow(b, "w", t0 + 100, 3);
      // 7 counted of a new 5: nothing more until the window closes at t0 + 1 100.
      expect(code(await s.replaceLimit(limitSpec({ name: "w", capacity: 5 }), t0 + 200))).toBe("ok");
      expect(answer(await s.checkWindow(a, "w", t0 + 200))).toEqual(no("exhausted", 1, 0, 900, 900));
      expect(answer(await s.checkWindow(b, "w", t0 + 200, 2))).toEqual(yes(2, 0, 900));
      expect(answer(await s.checkWindow(a, "w", t0 + 1_100, 5))).toEqual(yes(5, 0, 1_000));
      // A window of 300 ms from t0 + 1 200: alice's (open until t0 + 2 100) now closes at t0 + 1 500.
      expect(code(await s.replaceLimit(limitSpec({ name: "w", capacity: 5, window: 300 }), t0 + 1_200))).toBe("ok");
      expect(answer(await s.checkWindow(a, "w", t0 + 1_200))).toEqual(no("exhausted", 1, 0, 300, 300));
      expect(answer(await s.checkWindow(a, "w", t0 + 1_500, 5))).toEqual(yes(5, 0, 300));
    });

    it("replace a GCRA limit: each flow keeps its theoretical arrival time", async () => {
      // A unit every 100 ms, 4 ahead at most; then every 200 ms, 4 ahead (800 ms) at most.
      const s = await store({ name: "g", capacity: 10, refill: 10, window: 1_000, burst: 4 });
      const a = k("alice");
      expect(answer(await s.checkGcra(a, "g", t0, 3))).toEqual(yes(3, 1, 300));
      expect(code(await s.replaceLimit(limitSpec({ name: "g", capacity: 10, refill: 5, burst: 4 }), t0 + 100))).toBe(
        "ok",
      );
      // The TAT stays at t0 + 300: 200 ms ahead at t0 + 100, so 3 more units (600 ms) fit, a 4th not.
      expect(answer(await s.checkGcra(a, "g", t0 + 100, 3))).toEqual(yes(3, 0, 800));
      expect(answer(await s.checkGcra(a, "g", t0 + 100))).toEqual(no("exhausted", 1, 0, 200, 800));
    });

    it("remove a limit: its checks are unknown, its links and state gone; added again, it starts fresh", async () => {
      // 4 tokens, one every 250 ms.
      const s = await store({ name: "a", capacity: 4 }, { name: "b", capacity: 4 });
      const [child, parent] = [k("alice"), k("*")];
      expect((await s.addLink({ child, parent, limit: "a", ratio: 1 })).ok).toBe(true);
      await s.checkHierarchy(child, "a", t0, 4);
      await s.checkTokenBucket(child, "b", t0, 2);
      expect(code(await s.removeLimit("a"))).toBe("ok");
      expect(code(await s.removeLimit("a"))).toBe("unknown_limit");
      expect(answer(await s.checkTokenBucket(child, "a", t0))).toEqual(no("unknown_limit", 1, 0, Infinity, 0));
      expect(code(await s.addLimit(limitSpec({ name: "a", capacity: 4 })))).toBe("ok");
      expect(code(await s.addLink({ child, parent, limit: "a", ratio: 1 }))).toBe("ok");
      expect(answer(await s.checkHierarchy(child, "a", t0, 4))).toEqual(yes(4, 0, 1_000));
      // The other limit is untouched.
      expect(answer(await s.checkTokenBucket(child, "b", t0))).toEqual(yes(1, 1, 750));
    });

    it("an override gives one key a limit of its own; the others keep the limit", async () => {
      // 1 000 tokens, one a millisecond.
      const s = await store({ name: "tokens", capacity: 1_000, refill: 1_000, window: 1_000 });
      const [acme, beta, other] = [k("*", "acme"), k("*", "beta"), k("*", "other")];
      expect(code(await s.setOverride(acme, "tokens", { capacity: 5_000 }, t0))).toBe("ok");
      expect(answer(await s.checkTokenBucket(acme, "tokens", t0, 5_000))).toEqual(yes(5_000, 0, 5_000));
      expect(answer(await s.checkTokenBucket(other, "tokens", t0, 1_001))).toEqual(
        no("too_large", 1_001, 1_000, Infinity, 0),
      );
      // beta's state moves to its override: 400 held, cut to the override's 200.
      await s.checkTokenBucket(beta, "tokens", t0, 600);
      expect(code(await s.setOverride(beta, "tokens", { capacity: 200 }, t0))).toBe("ok");
      expect(answer(await s.checkTokenBucket(beta, "tokens", t0, 201))).toEqual(no("too_large", 201, 200, Infinity, 0));
      // acme back to the limit 100 ms later: the 100 it holds, now of 1 000.
      expect(code(await s.removeOverride(acme, "tokens", t0 + 100))).toBe("ok");
      expect(answer(await s.checkTokenBucket(acme, "tokens", t0 + 100, 101))).toEqual(
        no("exhausted", 101, 100, 1, 900),
      );
    });

    it("an override keeps the fields it sets when its limit is replaced, and takes the others", async () => {
      const s = await store({ name: "tokens", capacity: 1_000, refill: 1_000, window: 1_000 });
      const acme = k("*", "acme");
      expect(code(await s.setOverride(acme, "tokens", { capacity: 5_000 }, t0))).toBe("ok");
      await s.checkTokenBucket(acme, "tokens", t0, 5_000);
      // The limit refills twice as fast now: so does acme's override, still of 5 000.
      expect(code(await s.replaceLimit(limitSpec({ name: "tokens", capacity: 1_000, refill: 2_000 }), t0))).toBe("ok");
      expect(answer(await s.checkTokenBucket(acme, "tokens", t0 + 1_000, 2_000))).toEqual(yes(2_000, 0, 2_500));
    });

    it("refusals change nothing: an unknown limit or override, an invalid spec or override, one the overrides cannot take", async () => {
      const s = await store({ name: "tokens", capacity: 1_000, refill: 1_000, window: 1_000 });
      const acme = k("*", "acme");
      expect(code(await s.setOverride(acme, "tokens", { capacity: 10, refill: 1 }, t0))).toBe("ok");
      const refusals = [
        await s.replaceLimit(limitSpec({ name: "nope", capacity: 1 }), t0),
        await s.replaceLimit({ name: "tokens", capacity: 0, refill: 1, window: 1_000, burst: 1, align: false }, t0),
        // Every override must stay a valid limit: acme's refill of 1 a window of 2^40 ms would
        // take too long to refill the limit's burst of 1 000.
        await s.replaceLimit(limitSpec({ name: "tokens", capacity: 1_000, refill: 1_000_000, window: 2 ** 40 }), t0),
        await s.setOverride(acme, "nope", { capacity: 1 }, t0),
        await s.setOverride(acme, "tokens", { capacty: 1 } as never, t0),
        await s.setOverride(acme, "tokens", { capacity: 0 }, t0),
        await s.removeOverride(k("*", "beta"), "tokens", t0),
        await s.removeOverride(acme, "nope", t0),
      ];
      expect(refusals.map((r) => (r.ok ? "ok" : [r.code, r.reason]))).toEqual([
        ["unknown_limit", 'no limit is named "nope"'],
        ["invalid_limit", 'LimitSpec capacity of "tokens" must be a whole number of at least 1, got 0'],
        [
          "invalid_limit",
          `the override for ${acme.id} would not be a valid limit: LimitSpec refill of "tokens" must be at least 63 for 1000 units over a window of 1099511627776 ms (they must refill within 17592186044416 ms, 2^44), got 1`,
        ],
        ["unknown_limit", 'no limit is named "nope"'],
        ["invalid_override", 'override fields has no field "capacty"; did you mean "capacity"?'],
        [
          "invalid_override",
          `the override for ${acme.id}: LimitSpec capacity of "tokens" must be a whole number of at least 1, got 0`,
        ],
        ["unknown_override", `${k("*", "beta").id} has no override of "tokens"`],
        ["unknown_limit", 'no limit is named "nope"'],
      ]);
      // The limit and the override stand as they were.
      expect(answer(await s.checkTokenBucket(k("*", "beta"), "tokens", t0, 1_000))).toEqual(yes(1_000, 0, 1_000));
      expect(answer(await s.checkTokenBucket(acme, "tokens", t0, 10))).toEqual(yes(10, 0, 10_000));
    });
  });
}
