// admit with a quota charge set that reserves its estimate at admission and settles the actual
// units once the response is done: the verdict's own settle, every way a request can end, and
// every callback that throws, against the in-process engine. Through the adapters and on a real
// Redis: reserve-adapters.test.ts.
import { createServer } from "node:http";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { admit, admitFetch } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import type { QuotaAdmission, Settling } from "@tideward/guard";
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import type { QuotaStore, ReservationStore } from "@tideward/quota-engine";
import { until } from "./support/promises";
import { sync } from "./support/admit";
import { listening } from "./support/servers";

const tenant = new QuotaKey("acme", "*", "chat");
// A budget that refills slowly enough to read its level back a few ms later, to the unit.
const tokens = limitSpec({ name: "tokens", capacity: 1_000, refill: 1, window: 3_600_000 });

function setup(t0: number, extra: Partial<QuotaAdmission> = {}, engine = new QuotaEngine()) {
  engine.addLimit(tokens);
  const clock = { now: t0 };
  const admission = admit({
    clock: () => clock.now,
    quota: { store: engine, charges: (_key, cost) => [charge(tenant, "tokens", cost)], reserve: true, ...extra },
  });
  const left = () => engine.peekAtomic([charge(tenant, "tokens", 1)], clock.now).decisions[0].remaining + 1;
  const open = () => engine.stats().reservations;
  return { engine, clock, admission, left, open };
}

/** Lets promise callbacks run. */
const settled = () => new Promise((r) => setTimeout(r, 0));

describe.each([0, 1_700_000_000_123.375])("admit's quota.reserve with the clock at %d", (t0) => {
  it("reserves the estimate; settle refunds what the request did not use, once", () => {
    const { admission, left, open } = setup(t0);
    const v = sync(admission.check("alice", 800));
    expect([v.allowed, typeof v.reservation, left(), open()]).toEqual([true, "string", 200, 1]);
    v.settle({ tokens: 300 });
    expect([left(), open()]).toEqual([700, 0]);
    v.settle({ tokens: 0 }); // settled once: nothing more
    v.release();
    expect(left()).toBe(700);
  });

  it("tops up what it used past the estimate; release alone settles as reserved; cancel gives all back", () => {
    const { admission, left, open } = setup(t0);
    const a = sync(admission.check("alice", 100));
    a.settle({ tokens: 250 });
    expect(left()).toBe(750);
    const b = sync(admission.check("alice", 300));
    b.release(false); // the handler failed: the work may have been done
    expect([left(), open()]).toEqual([450, 0]);
    const c = sync(admission.check("alice", 400));
    c.settle("cancel");
    c.release();
    expect([left(), open()]).toEqual([450, 0]);
  });

  it("an actual the store refuses settles as reserved: negative, not whole, a limit not charged, a promise that rejects", async () => {
    const { admission, left, open } = setup(t0);
    const actuals = [
      { tokens: -1 },
      { tokens: 1.5 },
      { tokens: Number.NaN },
      { nope: 3 },
      "300" as never,
      null as never,
      "reject",
    ];
    for (const [i, actual] of actuals.entries()) {
      const v = sync(admission.check("alice", 100));
      v.settle(actual === "reject" ? Promise.reject(new Error("the body could not be read")) : (actual as Settling));
      await settled();
      expect([left(), open()], `actual #${i}`).toEqual([1_000 - 100 * (i + 1), 0]);
    }
  });

  it("a promise of the actual settles when it resolves; release meanwhile leaves it to that", async () => {
    const { admission, left, open } = setup(t0);
    const v = sync(admission.check("alice", 800));
    let resolve: (units: { tokens: number }) => void = () => undefined;
    v.settle(new Promise((r) => (resolve = r)));
    v.release();
    expect([left(), open()]).toEqual([200, 1]);
    resolve({ tokens: 100 });
    await settled();
    expect([left(), open()]).toEqual([900, 0]);
  });

  it("a refused reserve holds nothing; a store with no room for a reservation answers 503, holding nothing", () => {
    const { admission, left, open } = setup(t0, {}, new QuotaEngine({ maxReservations: 1 }));
    const big = sync(admission.check("alice", 1_001));
    expect([big.allowed, big.status, big.reservation, open()]).toEqual([false, 429, undefined, 0]);
    const first = sync(admission.check("alice", 10));
    const second = sync(admission.check("alice", 10));
    expect([second.allowed, second.status, second.reason, second.reservation]).toEqual([
      false,
      503,
      "quota",
      undefined,
    ]);
    first.release();
    expect([left(), open()]).toEqual([990, 0]);
  });

  it("a request its per-key limits refuse once the store answered has its reservation cancelled", async () => {
    const engine = new QuotaEngine();
    engine.addLimit(tokens);
    // A store answering promises: two requests of one key are both asked, then both reserve.
    const store = {
      limit: (name: string) => engine.limit(name),
      checkAtomic: (...args: Parameters<QuotaEngine["checkAtomic"]>) => Promise.resolve(engine.checkAtomic(...args)),
      reserve: (...args: Parameters<QuotaEngine["reserve"]>) => Promise.resolve(engine.reserve(...args)),
      settle: (...args: Parameters<QuotaEngine["settle"]>) => Promise.resolve(engine.settle(...args)),
      cancel: (...args: Parameters<QuotaEngine["cancel"]>) => Promise.resolve(engine.cancel(...args)),
    } as unknown as ReservationStore;
    const admission = admit({
      clock: () => t0,
      limits: [{ name: "one", quota: 300, window: 60_000 }], // the cost counts here too: room for one
      quota: { store, charges: (_key, cost) => [charge(tenant, "tokens", cost)], reserve: { ttl: 10_000 } },
    });
    const [a, b] = await Promise.all([admission.check("alice", 300), admission.check("alice", 300)]);
    expect([a.allowed, a.reason, b.allowed, b.status, b.reason]).toEqual([true, undefined, false, 429, "rate"]);
    await settled();
    expect(engine.stats().reservations).toBe(1);
    a.settle({ tokens: 100 });
    await settled();
    expect(engine.stats().reservations).toBe(0);
    expect(engine.peekAtomic([charge(tenant, "tokens", 900)], t0).allowed).toBe(true);
    expect(engine.peekAtomic([charge(tenant, "tokens", 901)], t0).allowed).toBe(false);
  });

  it("a clock that throws at the settle leaves the reservation to its time to live, settled as reserved", () => {
    const engine = new QuotaEngine();
    engine.addLimit(tokens);
    let broken = false;
    let now = t0;
    const admission = admit({
      clock: () => {
        if (broken) throw new Error("clock broke");
        return now;
      },
      quota: { store: engine, charges: (_key, cost) => [charge(tenant, "tokens", cost)], reserve: { ttl: 5_000 } },
    });
    const v = sync(admission.check("alice", 800));
    broken = true;
    expect(() => v.settle({ tokens: 1 })).not.toThrow();
    expect(() => v.release()).not.toThrow();
    expect(engine.stats().reservations).toBe(1);
    now += 5_001;
    engine.sweep(now);
    expect(engine.stats().reservations).toBe(0);
    expect(engine.peekAtomic([charge(tenant, "tokens", 201)], now).allowed).toBe(false); // 800 stay charged
  });

  it("a charges function that throws reserves nothing; bad reserve options are refused naming them", () => {
    const { engine } = setup(t0);
    const throwing = admit({
      clock: () => t0,
      gate: 1,
      quota: {
        store: engine,
        charges: () => {
          throw new Error("no estimate");
        },
        reserve: true,
      },
    });
    expect(() => throwing.check("alice", 5)).toThrow("no estimate");
    expect([engine.stats().reservations, throwing.gate?.held]).toEqual([0, 0]);
    const store = { limit: () => undefined, checkAtomic: () => undefined } as unknown as QuotaStore;
    expect(() => admit({ quota: { store, charges: () => [], reserve: true } })).toThrow(
      "admit quota.reserve needs a store that reserves (reserve, settle and cancel: a QuotaEngine, or a Redis engine)",
    );
    expect(() => admit({ quota: { store: engine, charges: () => [], reserve: { tll: 5 } as never } })).toThrow(
      'did you mean "ttl"?',
    );
    expect(() => admit({ quota: { store: engine, charges: () => [], reserve: { ttl: -5 } } })).toThrow(
      "admit quota.reserve.ttl (ms) must be",
    );
  });
});

describe("a client that leaves before a store answering promises has reserved", () => {
  it("has its reservation cancelled, through admitFetch and through admitNode on node:http", async () => {
    const engine = new QuotaEngine();
    engine.addLimit(tokens);
    let open = (): void => undefined;
    let decided = new Promise<void>((resolve) => (open = resolve));
    const store = {
      limit: (name: string) => engine.limit(name),
      checkAtomic: () => Promise.reject(new Error("not used")),
      reserve: async (...args: Parameters<QuotaEngine["reserve"]>) => {
        await decided;
        return engine.reserve(...args);
      },
      settle: (...args: Parameters<QuotaEngine["settle"]>) => Promise.resolve(engine.settle(...args)),
      cancel: (...args: Parameters<QuotaEngine["cancel"]>) => Promise.resolve(engine.cancel(...args)),
    } as unknown as ReservationStore;
    const admission = admit({
      gate: 2,
      quota: { store, charges: (_key, cost) => [charge(tenant, "tokens", cost)], reserve: true },
    });
    const whole = () => engine.peekAtomic([charge(tenant, "tokens", 1_000)], Date.now()).allowed;
    let handled = 0;
    // Through admitFetch: the request's signal aborts while the store decides.
    const leaving = new AbortController();
    const handler = admitFetch(admission, () => (handled++, new Response("ok")), { cost: () => 400 });
    const answer = handler(new Request("http://localhost/", { signal: leaving.signal }));
    leaving.abort();
    open();
    expect((await answer).status).toBe(499);
    await until(() => engine.stats().reservations === 0 && admission.gate?.held === 0);
    expect([whole(), handled]).toEqual([true, 0]);
    // Through admitNode: the connection closes while the store decides.
    decided = new Promise<void>((resolve) => (open = resolve));
    const middleware = admitNode(admission, { cost: () => 400 });
    const server = createServer((req, res) => middleware(req, res, () => (handled++, res.end("ok"))));
    const { url, close } = await listening(server);
    let closed = false;
    server.on("connection", (socket) => socket.on("close", () => void (closed = true)));
    try {
      const client = new AbortController();
      const call = fetch(`${url}/`, { signal: client.signal }).catch(() => "aborted");
      await until(() => admission.gate?.held === 1);
      client.abort();
      expect(await call).toBe("aborted");
      await until(() => closed);
      open();
      await until(() => engine.stats().reservations === 0 && admission.gate?.held === 0);
      expect([whole(), handled]).toEqual([true, 0]);
    } finally {
      await close();
    }
  });
});

describe.each([0, 1_700_000_000_123.375])(
  "reserve then settle through admit, on random requests, with the clock at %d",
  (t0) => {
    it("leaves no reservation open and the budget charged exactly what each ending says", async () => {
      const ending = fc.record({
        estimate: fc.integer({ min: 1, max: 60 }),
        actual: fc.integer({ min: 0, max: 90 }),
        // How the request ends: settled at its actual, at a promise of it, with a function that
        // threw (as reserved), released only (as reserved), cancelled, or settled with a bad actual.
        how: fc.constantFrom("actual", "promise", "threw", "release", "cancel", "bad"),
        gap: fc.double({ min: 0, max: 50, noNaN: true }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(ending, { maxLength: 30 }), async (requests) => {
          const { admission, clock, left, open } = setup(t0);
          let spent = 0;
          for (const r of requests) {
            clock.now += r.gap;
            const v = sync(admission.check("alice", r.estimate));
            if (!v.allowed) continue;
            if (r.how === "actual") v.settle({ tokens: r.actual });
            else if (r.how === "promise") v.settle(Promise.resolve({ tokens: r.actual }));
            else if (r.how === "cancel") v.settle("cancel");
            else if (r.how === "bad") v.settle({ tokens: -r.actual - 1 });
            v.release(r.how !== "threw");
            await settled();
            // A top-up past what is left is owed, down to a budget's worth below empty (debt).
            spent += r.how === "actual" || r.how === "promise" ? r.actual : r.how === "cancel" ? 0 : r.estimate;
            expect(open()).toBe(0);
            if (spent < 1_000) expect(left()).toBe(1_000 - spent);
            else expect(left()).toBeLessThanOrEqual(1); // empty, or owing
          }
          expect(open()).toBe(0);
        }),
        { numRuns: 100 },
      );
    });
  },
);
