// admit gives back what a request took (a gate place, a shedder ticket, a key's units) whatever
// throws: a store, a charges function, a clock; and a store's answer it cannot use is named.
import { describe, expect, it } from "vitest";
import { admit } from "@tideward/guard";
import { QuotaEngine, QuotaKey, charge, limitSpec, perSecond } from "@tideward/quota-engine";
import type { AtomicReport, QuotaCharge, QuotaStore } from "@tideward/quota-engine";
import { Gate } from "@tideward/limiters";
import { Shedder } from "@tideward/shedder";
import { ManualClock } from "@tideward/time";
import { limits, policies } from "./fields";
import { field, sync } from "./support/admit";
import { STARTS } from "./support/clocks";

describe.each(STARTS)("admit gives back what a request took, whatever throws, with the clock at %d", (start) => {
  const spec = perSecond("api", 5);
  const engine = new QuotaEngine();
  engine.addLimit(spec);
  const charges = (key: string) => [charge(new QuotaKey("s", key, "r"), "api")];
  const stores: readonly (readonly [string, (real: QuotaStore) => Pick<QuotaStore, "checkAtomic">, string])[] = [
    [
      "answers null",
      () => ({ checkAtomic: () => null as never }),
      "admit quota.store.checkAtomic answered null, not an AtomicReport for 1 charges",
    ],
    [
      "answers a promise of null",
      () => ({ checkAtomic: () => Promise.resolve(null as never) }),
      "admit quota.store.checkAtomic answered null, not an AtomicReport for 1 charges",
    ],
    [
      "answers decisions of the wrong length",
      (real) => ({ checkAtomic: (c, now) => ({ ...(real.checkAtomic(c, now) as AtomicReport), decisions: [] }) }),
      "admit quota.store.checkAtomic answered [object Object], not an AtomicReport for 1 charges",
    ],
    [
      "throws",
      () => ({
        checkAtomic: () => {
          throw new Error("store down");
        },
      }),
      "store down",
    ],
    ["rejects", () => ({ checkAtomic: () => Promise.reject(new Error("store down")) }), "store down"],
  ];
  it.each(stores)(
    "a store that %s: the request rejects, naming it, and the gate and the shedder hold nothing",
    async (_, make, message) => {
      const gate = new Gate(1);
      const shedder = new Shedder({}, start);
      const clock = new ManualClock(start);
      const a = admit({
        clock: clock.now,
        gate,
        shedder,
        load: () => 0,
        quota: {
          store: { limit: (name: string) => engine.limit(name), ...make(engine) } as QuotaStore,
          limits: [spec],
          charges,
        },
      });
      for (let i = 0; i < 3; i++) {
        const error = await (async () => a.check("u"))().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect((error as Error).message).toBe(message);
        expect([gate.held, shedder.flying]).toEqual([0, 0]);
      }
    },
  );

  it("charges naming a limit that quota.limits lacks (a typo) fail the request, naming it, before the store is asked", () => {
    const gate = new Gate(1);
    let asked = 0;
    const store = {
      limit: (name: string) => engine.limit(name),
      checkAtomic: (c: readonly QuotaCharge[], now: number) => (asked++, engine.checkAtomic(c, now)),
    } as Pick<QuotaStore, "checkAtomic" | "limit"> as QuotaStore;
    const a = admit({
      clock: () => start,
      gate,
      quota: { store, limits: [spec], charges: (key) => [charge(new QuotaKey("s", key, "r"), "apj")] },
    });
    expect(() => a.check("u")).toThrow(
      new TypeError('admit quota.charges named the limit "apj", which is not in quota.limits ("api")'),
    );
    expect([gate.held, asked]).toEqual([0, 0]);
  });

  it("without quota.limits, charges may name any limit of the store, advertised as the store enforces it", () => {
    const store = new QuotaEngine();
    store.addLimit(limitSpec({ name: "tenant", capacity: 7, refill: 7, window: 60_000 }));
    store.addLimit(perSecond("api", 5));
    const a = admit({
      clock: () => start,
      quota: {
        store,
        charges: (key) => [charge(new QuotaKey("s", key, "r"), "api"), charge(new QuotaKey("t", "x", "r"), "tenant")],
      },
    });
    const v = sync(a.check("u"));
    expect(v.allowed).toBe(true);
    expect(policies(field(v.headers, "RateLimit-Policy")).map((p) => [p.name, p.q, p.w])).toEqual([
      ["api", 5, 1],
      ["tenant", 7, 60],
    ]);
    const typo = admit({
      clock: () => start,
      quota: { store, charges: () => [charge(new QuotaKey("s", "u", "r"), "apj")] },
    });
    expect(() => typo.check("u")).toThrow(
      new TypeError('admit quota.charges named the limit "apj", which is not in quota.store ("tenant", "api")'),
    );
  });

  it("quota.limits may be names; a spec there must agree with the store's, which is the one advertised", () => {
    const store = new QuotaEngine();
    store.addLimit(perSecond("api", 5));
    const named = admit({ clock: () => start, quota: { store, limits: ["api"], charges } });
    expect(policies(field(sync(named.check("u")).headers, "RateLimit-Policy"))[0].q).toBe(5);
    expect(() => admit({ quota: { store, limits: [{ ...perSecond("api", 6) }], charges } })).toThrow(
      new RangeError(
        "admit quota.limits[0].capacity is 6 where quota.store's limit \"api\" has 5: the store's is the one enforced and advertised",
      ),
    );
    expect(() => admit({ quota: { store, limits: ["api", "api"], charges } })).toThrow(
      new RangeError('admit quota.limits[1].name "api" is used twice'),
    );
    expect(() => admit({ quota: { store, limits: [5 as never], charges } })).toThrow(
      new TypeError("admit quota.limits[0] must be a LimitSpec or a limit's name, got 5"),
    );
  });

  it("a store whose limit(name) answers no spec fails the request, naming it, and the gate holds nothing", () => {
    const gate = new Gate(1);
    const store = {
      limit: () => ({ name: "api" }),
      checkAtomic: (c: readonly QuotaCharge[], now: number) => engine.checkAtomic(c, now),
    } as unknown as QuotaStore;
    const a = admit({ clock: () => start, gate, quota: { store, charges } });
    expect(() => a.check("u")).toThrow(
      new TypeError('admit quota.store.limit("api") answered [object Object], not a LimitSpec'),
    );
    expect(gate.held).toBe(0);
  });

  it("a clock that throws at release: the gate place and the shedder ticket are given back, then the error goes on", () => {
    const gate = new Gate(1);
    const shedder = new Shedder({}, start);
    let broken = false;
    const clock = () => {
      if (broken) throw new Error("clock broke");
      return start;
    };
    const a = admit({ clock, gate, shedder, load: () => 0 });
    const v = sync(a.check());
    expect([gate.held, shedder.flying]).toEqual([1, 1]);
    broken = true;
    expect(() => v.release()).toThrow("clock broke");
    expect([gate.held, shedder.flying]).toEqual([0, 0]);
    v.release(); // once only: nothing more to give back, nothing read
    broken = false;
    expect(sync(a.check()).allowed).toBe(true);
  });

  it("a quota refusal whose wait the store does not know carries busyRetryAfter, not Retry-After: 0", () => {
    const clock = new ManualClock(start);
    const unknown = {
      limit: (name: string) => engine.limit(name),
      checkAtomic: (c: readonly QuotaCharge[], now: number) => {
        const r = engine.checkAtomic(c, now);
        return {
          ...r,
          allowed: false,
          committed: false,
          retryAfter: 0,
          decisions: r.decisions.map((d) => ({ ...d, allowed: false, reason: "key_limit", retryAfter: 0 })),
        };
      },
    } as Pick<QuotaStore, "checkAtomic" | "limit"> as QuotaStore;
    const a = admit({ clock: clock.now, busyRetryAfter: 2_500, quota: { store: unknown, limits: [spec], charges } });
    const v = sync(a.check("u"));
    expect([v.status, v.retryAfter, field(v.headers, "Retry-After")]).toEqual([429, 2_500, "3"]);
    expect(limits(field(v.headers, "RateLimit"))[0].t).toBe(3);
  });

  it("a charges function that throws or answers no array: the same", () => {
    const gate = new Gate(1);
    for (const [fn, message] of [
      [
        () => {
          throw new Error("bad charges");
        },
        "bad charges",
      ],
      [() => "nope", 'admit quota.charges answered "nope", not an array of charges'],
    ] as const) {
      const a = admit({ gate, quota: { store: engine, limits: [spec], charges: fn as never } });
      expect(() => a.check("u")).toThrow(message);
      expect(gate.held).toBe(0);
    }
  });

  it("a clock that reads NaN at a request is named, and the gate place is given back", () => {
    const gate = new Gate(1);
    let reads = 0;
    const a = admit({
      clock: () => (reads++ === 0 ? start : Number.NaN),
      gate,
      limits: [{ name: "l", quota: 5, window: 1_000 }],
    });
    expect(() => a.check("k")).toThrow("admit clock() must be a finite number, got NaN");
    expect(gate.held).toBe(0);
  });

  it("a key that is not a string, or longer than its state is sized for, is refused before anything is taken", () => {
    const gate = new Gate(1);
    const a = admit({ gate, limits: [{ name: "l", quota: 5, window: 1_000 }] });
    expect(() => a.check(42 as never)).toThrow("admit check key must be a string, got number 42");
    expect(() => a.check("k".repeat(257))).toThrow(
      "admit check key must be at most 256 characters (hash a longer identity), got 257",
    );
    expect([gate.held, a.keys]).toEqual([0, 0]);
  });
});
