// The conformance suite of reservations: reserve, settle, cancel and expiry, computed by hand for
// each algorithm and the hierarchy, against any ReservationStore (the in-process engine here, a
// Redis engine later). Every answer is awaited, so a synchronous store and an asynchronous one run
// the same code.
import type { QuotaCharge } from "./charge";
import { answer, no, yes } from "./conformance-kit";
import type { ConformanceApi, ConformanceOptions } from "./conformance-kit";
import { QuotaKey } from "./key";
import { limitSpec } from "./limit";
import type { TopUp } from "./policy";
import type { SettleResult, SettledCharge } from "./settle";
import type { Awaitable, ReservationStore } from "./store";

/** What a settled charge came to, without its key: the part two stores must agree on. */
type Came = Omit<SettledCharge, "key">;

const came = (r: SettleResult): Came[] | string =>
  r.ok
    ? r.charges.map(({ limit, kind, reserved, actual, refunded, toppedUp, forgiven }) => ({
        limit,
        kind,
        reserved,
        actual,
        refunded,
        toppedUp,
        forgiven,
      }))
    : r.code;

const settled = (limit: string, kind: Came["kind"], reserved: number, actual: number, forgiven = 0): Came => ({
  limit,
  kind,
  reserved,
  actual,
  refunded: reserved > actual ? reserved - actual : 0,
  toppedUp: actual > reserved + forgiven ? actual - reserved - forgiven : 0,
  forgiven,
});

/** How the suite makes a store: empty, with the given way of topping up. */
export type MakeReservationStore = (options: { readonly topUp: TopUp }) => Awaitable<ReservationStore>;

/**
 * Registers the conformance suite of reservations: for a token bucket, a fixed window, GCRA and a
 * hierarchy, what a reserve charges, what a settle refunds or tops up (in debt, and capped), what
 * a cancel gives back, what expiry leaves, and the answers that change nothing (a second settle,
 * an unknown id or limit, a repeated id). `make` is called once per case and must return an empty
 * store that tops up as asked.
 *
 * @example
 * import { describe, expect, it } from "vitest";
 * import { QuotaEngine } from "@tideward/quota-engine";
 * import { reservationConformance } from "@tideward/quota-engine/conformance";
 * reservationConformance({ describe, it, expect }, ({ topUp }) => new QuotaEngine({ topUp }));
 */
export function reservationConformance(
  api: ConformanceApi,
  make: MakeReservationStore,
  options: ConformanceOptions = {},
): void {
  const { describe, it, expect } = api;
  const t0 = options.origin ?? 0;
  const k = (subject: string, scope = "tenant-a", resource = "api"): QuotaKey => new QuotaKey(scope, subject, resource);
  const store = async (topUp: TopUp, ...specs: Parameters<typeof limitSpec>[0][]): Promise<ReservationStore> => {
    const s = await make({ topUp });
    for (const spec of specs) expect((await s.addLimit(limitSpec(spec))).ok).toBe(true);
    return s;
  };
  // 1 000 tokens, a token a millisecond.
  const tokens = { name: "tokens", capacity: 1_000, refill: 1_000, window: 1_000 };

  describe(options.name ?? "ReservationStore conformance", () => {
    it("token bucket: a reserve charges as a charge set; a settle below refunds, above tops up into debt", async () => {
      const s = await store("debt", tokens);
      const a = k("alice");
      const r = await s.reserve([{ key: a, limit: "tokens", cost: 800 }], t0, { id: "r1" });
      expect([r.code, r.id, r.committed, r.failedIndex, r.retryAfter, r.expiresAfter]).toEqual([
        "reserved",
        "r1",
        true,
        -1,
        0,
        300_000,
      ]);
      expect(r.decisions.map(answer)).toEqual([yes(800, 200, 800)]);
      // 100 ms later the bucket holds 300; 500 come back: 800.
      expect(came(await s.settle("r1", { tokens: 300 }, t0 + 100))).toEqual([settled("tokens", "bucket", 800, 300)]);
      expect((await s.peekAtomic([{ key: a, limit: "tokens", cost: 800 }], t0 + 100)).decisions.map(answer)).toEqual([
        yes(800, 0, 1_000),
      ]);
      // Reserve 700 of the 800, then settle at 1 500: 800 more, the bucket owes 700.
      const second = await s.reserve([{ key: a, limit: "tokens", cost: 700 }], t0 + 100, { id: "r2" });
      expect(second.decisions.map(answer)).toEqual([yes(700, 100, 900)]);
      expect(came(await s.settle("r2", { tokens: 1_500 }, t0 + 100))).toEqual([
        settled("tokens", "bucket", 700, 1_500),
      ]);
      expect(answer(await s.checkTokenBucket(a, "tokens", t0 + 100))).toEqual(no("exhausted", 1, 0, 701, 1_700));
    });

    it("token bucket: a refund never fills past the capacity; a debt stops at the capacity, the rest forgiven", async () => {
      const s = await store("debt", tokens);
      const a = k("alice");
      await s.reserve([{ key: a, limit: "tokens", cost: 500 }], t0, { id: "full" });
      // Full again by t0 + 500: the 500 given back at t0 + 600 find no room.
      expect(came(await s.settle("full", { tokens: 0 }, t0 + 600))).toEqual([settled("tokens", "bucket", 500, 0)]);
      expect(answer(await s.checkTokenBucket(a, "tokens", t0 + 600))).toEqual(yes(1, 999, 1));
      const b = k("bob");
      await s.reserve([{ key: b, limit: "tokens", cost: 1_000 }], t0 + 600, { id: "deep" });
      // 1 500 on top of an empty bucket: it owes 1 000 at most, 500 are forgiven.
      expect(came(await s.settle("deep", { tokens: 2_500 }, t0 + 600))).toEqual([
        settled("tokens", "bucket", 1_000, 2_500, 500),
      ]);
      expect(answer(await s.checkTokenBucket(b, "tokens", t0 + 600))).toEqual(no("exhausted", 1, 0, 1_001, 2_000));
    });

    it("token bucket of two numbers (a token every 333⅓ ms): refunds and debt alike", async () => {
      const s = await store("debt", { name: "slow", capacity: 9, refill: 3, window: 1_000 });
      const a = k("alice");
      const fits = async (cost: number, at: number): Promise<boolean> =>
        (await s.peekAtomic([{ key: a, limit: "slow", cost }], at)).allowed;
      const r = await s.reserve([{ key: a, limit: "slow", cost: 6 }], t0, { id: "two" });
      expect(r.decisions.map((d) => [d.allowed, d.remaining])).toEqual([[true, 3]]);
      expect(came(await s.settle("two", { slow: 2 }, t0))).toEqual([settled("slow", "bucket", 6, 2)]);
      expect([await fits(7, t0), await fits(8, t0)]).toEqual([true, false]);
      await s.reserve([{ key: a, limit: "slow", cost: 7 }], t0, { id: "owe" });
      // 23 on top of an empty bucket: it owes 9, 14 are forgiven; a token is back after 3 333⅓ ms.
      expect(came(await s.settle("owe", { slow: 30 }, t0))).toEqual([settled("slow", "bucket", 7, 30, 14)]);
      expect([await fits(1, t0 + 3_333), await fits(1, t0 + 3_334)]).toEqual([false, true]);
    });

    it("token bucket capped: a top-up takes what the bucket holds, the rest forgiven", async () => {
      const s = await store("cap", tokens);
      const a = k("alice");
      await s.reserve([{ key: a, limit: "tokens", cost: 600 }], t0, { id: "c" });
      expect(came(await s.settle("c", { tokens: 1_500 }, t0))).toEqual([settled("tokens", "bucket", 600, 1_500, 500)]);
      expect(answer(await s.checkTokenBucket(a, "tokens", t0))).toEqual(no("exhausted", 1, 0, 1, 1_000));
    });

    it("fixed window: a refund lowers the count while the reservation's window is open, and not after", async () => {
      const s = await store("debt", { name: "w", capacity: 10, window: 1_000 });
      const a = k("alice");
      const w = (cost: number): QuotaCharge[] => [{ key: a, limit: "w", cost, kind: "window" }];
      const r = await s.reserve(w(6), t0 + 100, { id: "open" });
      expect(r.decisions.map(answer)).toEqual([yes(6, 4, 1_000)]);
      expect(came(await s.settle("open", { w: 2 }, t0 + 500))).toEqual([settled("w", "window", 6, 2)]);
      expect(answer(await s.checkWindow(a, "w", t0 + 500, 8))).toEqual(yes(8, 0, 600));
      // Reserved in the window ending at t0 + 2 200; settled in the next, which keeps its count.
      await s.reserve(w(5), t0 + 1_200, { id: "closed" });
      expect(answer(await s.checkWindow(a, "w", t0 + 2_200, 7))).toEqual(yes(7, 3, 1_000));
      expect(came(await s.settle("closed", { w: 0 }, t0 + 2_300))).toEqual([settled("w", "window", 5, 0)]);
      expect(answer(await s.checkWindow(a, "w", t0 + 2_300, 4))).toEqual(no("exhausted", 4, 3, 900, 900));
    });

    it("fixed window: a top-up counts in the reservation's window while open, else in the window open now", async () => {
      const s = await store("debt", { name: "w", capacity: 10, window: 1_000 });
      const a = k("alice");
      const w = (cost: number): QuotaCharge[] => [{ key: a, limit: "w", cost, kind: "window" }];
      await s.reserve(w(7), t0, { id: "in" });
      await s.reserve(w(2), t0, { id: "late" });
      // 4 more in the open window: 13 of 10 counted, none remaining until it closes.
      expect(came(await s.settle("in", { w: 11 }, t0 + 100))).toEqual([settled("w", "window", 7, 11)]);
      expect(answer(await s.checkWindow(a, "w", t0 + 100))).toEqual(no("exhausted", 1, 0, 900, 900));
      // After it closed: the 3 more open a window at t0 + 1 300 and count there.
      expect(came(await s.settle("late", { w: 5 }, t0 + 1_300))).toEqual([settled("w", "window", 2, 5)]);
      expect(answer(await s.checkWindow(a, "w", t0 + 1_300, 8))).toEqual(no("exhausted", 8, 7, 1_000, 1_000));
    });

    it("GCRA: a refund moves the theoretical arrival time back, never before now; a top-up moves it on", async () => {
      // 10 a second: a unit every 100 ms, 4 ahead of schedule at most.
      const s = await store("debt", { name: "g", capacity: 10, refill: 10, window: 1_000, burst: 4 });
      const g = (key: QuotaKey, cost: number): QuotaCharge[] => [{ key, limit: "g", cost, kind: "gcra" }];
      const a = k("alice");
      expect((await s.reserve(g(a, 3), t0, { id: "a" })).decisions.map(answer)).toEqual([yes(3, 1, 300)]);
      // 50 ms later the flow is 250 ms ahead; two units back leave 50, as if 1 had been charged.
      expect(came(await s.settle("a", { g: 1 }, t0 + 50))).toEqual([settled("g", "gcra", 3, 1)]);
      expect(answer(await s.checkGcra(a, "g", t0 + 50, 3))).toEqual(yes(3, 0, 350));
      const b = k("bob");
      await s.reserve(g(b, 2), t0, { id: "b" });
      // At t0 + 150 the flow is 50 ms ahead; 200 ms back stops at now: at rest, a burst of 4 passes.
      await s.cancel("b", t0 + 150);
      expect(answer(await s.checkGcra(b, "g", t0 + 150, 4))).toEqual(yes(4, 0, 400));
      expect(answer(await s.checkGcra(b, "g", t0 + 150))).toEqual(no("exhausted", 1, 0, 100, 400));
      const c = k("carol");
      await s.reserve(g(c, 1), t0 + 150, { id: "c" });
      expect(came(await s.settle("c", { g: 6 }, t0 + 150))).toEqual([settled("g", "gcra", 1, 6)]);
      expect(answer(await s.checkGcra(c, "g", t0 + 150))).toEqual(no("exhausted", 1, 0, 300, 600));
    });

    it("hierarchy: a settle goes up the same links as the charge, each level in proportion", async () => {
      const s = await store("debt", { name: "req", capacity: 10, refill: 10, window: 1_000 });
      const alice = k("alice");
      const acme = k("*", "acme", "*");
      expect((await s.addLink({ child: alice, parent: acme, limit: "req", ratio: 2 })).ok).toBe(true);
      const chain: QuotaCharge[] = [
        { key: alice, limit: "req", cost: 3 },
        { key: acme, limit: "req", cost: 6 },
      ];
      const r = await s.reserve(chain, t0, { id: "h" });
      expect(r.decisions.map(answer)).toEqual([yes(3, 7, 300), yes(6, 4, 600)]);
      expect(came(await s.settle("h", { req: 1 }, t0))).toEqual([
        settled("req", "bucket", 3, 1),
        settled("req", "bucket", 6, 2),
      ]);
      expect(answer(await s.checkTokenBucket(alice, "req", t0))).toEqual(yes(1, 8, 200));
      expect(answer(await s.checkTokenBucket(acme, "req", t0))).toEqual(yes(1, 7, 300));
    });

    it("cancel gives back every dimension; a second settle or cancel changes nothing and says so", async () => {
      const s = await store("debt", tokens, { name: "req", capacity: 5 });
      const a = k("alice");
      const set: QuotaCharge[] = [
        { key: a, limit: "req", cost: 1 },
        { key: a, limit: "tokens", cost: 400 },
      ];
      await s.reserve(set, t0, { id: "x" });
      expect(came(await s.cancel("x", t0))).toEqual([
        settled("req", "bucket", 1, 0),
        settled("tokens", "bucket", 400, 0),
      ]);
      expect((await s.peekAtomic([{ key: a, limit: "tokens", cost: 1_000 }], t0)).allowed).toBe(true);
      expect(came(await s.cancel("x", t0))).toBe("already_cancelled");
      expect(came(await s.settle("x", { tokens: 0 }, t0))).toBe("already_cancelled");
      await s.reserve(set, t0, { id: "y" });
      expect(came(await s.settle("y", { tokens: 100 }, t0))).toEqual([
        settled("req", "bucket", 1, 1),
        settled("tokens", "bucket", 400, 100),
      ]);
      // No second refund: the bucket holds 900 whatever is asked after.
      expect(came(await s.settle("y", { tokens: 0 }, t0))).toBe("already_settled");
      expect(came(await s.cancel("y", t0))).toBe("already_settled");
      expect(answer(await s.checkTokenBucket(a, "tokens", t0, 900))).toEqual(yes(900, 0, 1_000));
    });

    it("expiry: a reservation left past its time to live is settled as reserved", async () => {
      const s = await store("debt", tokens);
      const a = k("alice");
      const r = await s.reserve([{ key: a, limit: "tokens", cost: 800 }], t0, { id: "e", ttl: 100 });
      expect(r.expiresAfter).toBe(100);
      // Gone at t0 + 100, its 800 still charged: the bucket holds 200 + 100.
      expect(came(await s.settle("e", { tokens: 0 }, t0 + 100))).toBe("unknown_reservation");
      expect(answer(await s.checkTokenBucket(a, "tokens", t0 + 100, 1_000))).toEqual(
        no("exhausted", 1_000, 300, 700, 700),
      );
      // One ms before its end, a reservation still settles.
      await s.reserve([{ key: a, limit: "tokens", cost: 300 }], t0 + 100, { id: "e2", ttl: 100 });
      expect(came(await s.cancel("e2", t0 + 199))).toEqual([settled("tokens", "bucket", 300, 0)]);
    });

    it("an unknown id or a limit the reservation did not charge changes nothing", async () => {
      const s = await store("debt", tokens, { name: "req", capacity: 5 });
      const a = k("alice");
      await s.reserve([{ key: a, limit: "tokens", cost: 500 }], t0, { id: "u" });
      expect(came(await s.settle("nobody", { tokens: 0 }, t0))).toBe("unknown_reservation");
      expect(came(await s.cancel("nobody", t0))).toBe("unknown_reservation");
      const stray = await s.settle("u", { tokens: 0, req: 1 }, t0);
      expect(stray.ok ? "settled" : [stray.code, stray.reason]).toEqual([
        "unknown_dimension",
        'reservation "u" charged no limit "req" (it charged "tokens")',
      ]);
      // Still open, and nothing given back.
      expect(answer(await s.checkTokenBucket(a, "tokens", t0, 500))).toEqual(yes(500, 0, 1_000));
      expect(came(await s.settle("u", { tokens: 500 }, t0))).toEqual([settled("tokens", "bucket", 500, 500)]);
    });

    it("a refused reserve answers as the charge set would, and reserves nothing", async () => {
      const specs = [tokens, { name: "req", capacity: 2 }];
      const s = await store("debt", ...specs);
      const twin = await store("debt", ...specs);
      const a = k("alice");
      const set: QuotaCharge[] = [
        { key: a, limit: "req", cost: 1 },
        { key: a, limit: "tokens", cost: 600 },
      ];
      await s.reserve(set, t0);
      await twin.checkAtomic(set, t0);
      const refused = await s.reserve(set, t0 + 100, { id: "no" });
      const charged = await twin.checkAtomic(set, t0 + 100);
      expect([
        refused.code,
        refused.id,
        refused.committed,
        refused.failedIndex,
        refused.retryAfter,
        refused.expiresAfter,
      ]).toEqual(["refused", "no", false, charged.failedIndex, charged.retryAfter, 0]);
      expect(refused.decisions.map(answer)).toEqual(charged.decisions.map(answer));
      expect(refused.retryAfter).toBe(100);
      expect(came(await s.cancel("no", t0 + 100))).toBe("unknown_reservation");
    });

    it("a repeated id: the same charges are reserved already and charge nothing, other charges are refused", async () => {
      const s = await store("debt", tokens);
      const a = k("alice");
      const set: QuotaCharge[] = [{ key: a, limit: "tokens", cost: 300 }];
      expect((await s.reserve(set, t0, { id: "same" })).code).toBe("reserved");
      const again = await s.reserve(set, t0 + 10, { id: "same" });
      expect([again.code, again.committed, again.failedIndex, again.expiresAfter, again.decisions]).toEqual([
        "replayed",
        true,
        -1,
        299_990,
        [],
      ]);
      const other = await s.reserve([{ key: a, limit: "tokens", cost: 301 }], t0 + 10, { id: "same" });
      expect([other.code, other.committed, other.retryAfter, other.decisions.length]).toEqual([
        "duplicate_id",
        false,
        Infinity,
        0,
      ]);
      // Charged once: 700 held at t0, 710 at t0 + 10.
      expect(answer(await s.checkTokenBucket(a, "tokens", t0 + 10, 710))).toEqual(yes(710, 0, 1_000));
      await s.settle("same", { tokens: 300 }, t0 + 10);
      const closed = await s.reserve(set, t0 + 10, { id: "same" });
      expect(closed.code).toBe("duplicate_id");
    });

    it("malformed settle arguments are refused by name before anything changes", async () => {
      const s = await store("debt", tokens);
      const a = k("alice");
      await s.reserve([{ key: a, limit: "tokens", cost: 500 }], t0, { id: "m" });
      const refusal = async (act: () => Awaitable<unknown>): Promise<string> => {
        try {
          await act();
          return "answered";
        } catch (e) {
          return `${(e as Error).name}: ${(e as Error).message}`;
        }
      };
      expect([
        await refusal(() => s.settle("m", { tokens: -1 }, t0)),
        await refusal(() => s.settle("m", { tokens: Number.NaN }, t0)),
        await refusal(() => s.settle("m", { tokens: 1.5 }, t0)),
        await refusal(() => s.settle("m", { tokens: "300" as unknown as number }, t0)),
        await refusal(() => s.settle("", { tokens: 1 }, t0)),
      ]).toEqual([
        'RangeError: actual["tokens"] must be a whole number of at least 0, got -1',
        'RangeError: actual["tokens"] must be a whole number of at least 0, got NaN',
        'RangeError: actual["tokens"] must be a whole number of at least 0, got 1.5',
        'TypeError: actual["tokens"] must be a number of units, got string "300"',
        "RangeError: id must be 1 to 256 characters, got 0",
      ]);
      expect(came(await s.settle("m", { tokens: 500 }, t0))).toEqual([settled("tokens", "bucket", 500, 500)]);
    });
  });
}
