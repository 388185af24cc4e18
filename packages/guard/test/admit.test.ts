import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { admit, PROBLEM_JSON, PROBLEM_TYPES, RATELIMIT_DRAFT } from "@tideward/guard";
import type { Field, Verdict } from "@tideward/guard";
import { QuotaEngine, QuotaKey, charge, limitSpec, perSecond } from "@tideward/quota-engine";
import type { AtomicReport, QuotaCharge, QuotaStore } from "@tideward/quota-engine";
import { Gate } from "@tideward/limiters";
import { Shedder } from "@tideward/shedder";
import { ManualClock } from "@tideward/time";
import { limits, policies, retryAfter } from "./fields";

/** The value of every field line named `name`, joined as a recipient joins them. */
function field(headers: readonly Field[], name: string): string | null {
  const lines = headers.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
  return lines.length === 0 ? null : lines.join(", ");
}

const sync = (v: Verdict | Promise<Verdict>): Verdict => {
  if (v instanceof Promise) throw new Error("expected a synchronous verdict");
  return v;
};

// Clocks near 0 and near Date.now(), fractional: every promise must hold at both.
const STARTS = [0, 1_700_000_000_123.375];

describe.each(STARTS)("admit with the clock at %d", (start) => {
  it("pins the draft revision its fields follow", () => {
    expect(RATELIMIT_DRAFT).toBe("draft-ietf-httpapi-ratelimit-headers-11");
  });

  it("advertises each policy: 50 of 100 left, and t=1 (a unit is back in 0.6 s, not the 30 s until whole)", () => {
    const clock = new ManualClock(start);
    const a = admit({ clock: clock.now, limits: [{ name: "burst", quota: 100, window: 60_000 }] });
    let v = sync(a.check("alice"));
    for (let i = 1; i < 50; i++) v = sync(a.check("alice"));
    expect(v.allowed).toBe(true);
    expect(v.status).toBe(200);
    expect(policies(field(v.headers, "RateLimit-Policy"))).toEqual([{ name: "burst", q: 100, w: 60 }]);
    expect(limits(field(v.headers, "RateLimit"))).toEqual([{ name: "burst", r: 50, t: 1 }]);
    expect(field(v.headers, "Retry-After")).toBeNull();
  });

  it("refuses past the limit with 429, Retry-After in whole seconds rounded up, and r=0 with t equal to it", () => {
    const clock = new ManualClock(start);
    const a = admit({ clock: clock.now, limits: [{ name: "per-second", quota: 3, window: 2_500 }] });
    for (let i = 0; i < 3; i++) expect(sync(a.check("bob")).allowed).toBe(true);
    const v = sync(a.check("bob"));
    expect(v.allowed).toBe(false);
    expect(v.status).toBe(429);
    expect(v.reason).toBe("rate");
    // 3 per 2.5 s: a token every 833.3 ms.
    expect(v.retryAfter).toBeCloseTo(2_500 / 3, 2);
    expect(retryAfter(field(v.headers, "Retry-After"))).toBe(1);
    expect(limits(field(v.headers, "RateLimit"))).toEqual([{ name: "per-second", r: 0, t: 1 }]);
    expect(policies(field(v.headers, "RateLimit-Policy"))).toEqual([{ name: "per-second", q: 3, w: 3 }]);
    expect(v.body).toBe("Too Many Requests\n");
    // Another key is a different client.
    expect(sync(a.check("carol")).allowed).toBe(true);
    // After the wait the field asks for, the same client passes again.
    clock.advance(1_000);
    expect(sync(a.check("bob")).allowed).toBe(true);
  });

  it("checks several limits all or none: a refusal by one charges none", () => {
    const clock = new ManualClock(start);
    const a = admit({
      clock: clock.now,
      limits: [
        { name: "burst", quota: 2, window: 1_000 },
        { name: "daily", quota: 1_000, window: 86_400_000, kind: "period" },
      ],
    });
    sync(a.check("k"));
    sync(a.check("k"));
    const refused = sync(a.check("k"));
    expect(refused.allowed).toBe(false);
    const members = limits(field(refused.headers, "RateLimit"));
    expect(members.map((m) => [m.name, m.r])).toEqual([
      ["burst", 0],
      ["daily", 998], // the refused request took nothing from the daily quota
    ]);
    expect(policies(field(refused.headers, "RateLimit-Policy"))).toEqual([
      { name: "burst", q: 2, w: 1 },
      { name: "daily", q: 1_000, w: 86_400 },
    ]);
  });

  it("every kind of limit admits its quota and then refuses with a Retry-After that is enough", () => {
    for (const kind of ["bucket", "gcra", "sliding", "period"] as const) {
      const clock = new ManualClock(start);
      const a = admit({ clock: clock.now, limits: [{ name: kind, quota: 5, window: 1_000, kind }] });
      for (let i = 0; i < 5; i++) expect(sync(a.check("x")).allowed, `${kind} #${i}`).toBe(true);
      const v = sync(a.check("x"));
      expect(v.allowed, kind).toBe(false);
      clock.advance(retryAfter(field(v.headers, "Retry-After")) * 1_000);
      expect(sync(a.check("x")).allowed, `${kind} after Retry-After`).toBe(true);
    }
  });

  it("the gate refuses with 503 when full, and release gives the place back once", () => {
    const gate = new Gate(2);
    const a = admit({ gate, busyRetryAfter: 1_500 });
    const one = sync(a.check());
    const two = sync(a.check());
    const three = sync(a.check());
    expect([one.allowed, two.allowed, three.allowed]).toEqual([true, true, false]);
    expect(three.status).toBe(503);
    expect(three.reason).toBe("gate");
    expect(retryAfter(field(three.headers, "Retry-After"))).toBe(2);
    expect(gate.held).toBe(2);
    one.release();
    one.release();
    expect(gate.held).toBe(1);
    two.release(false);
    expect(gate.held).toBe(0);
  });

  it("the shedder refuses with 503 when hot and full, and a refusal holds no gate place", () => {
    const clock = new ManualClock(start);
    const shedder = new Shedder({}, start);
    let load = 0;
    const gate = new Gate(1_000);
    const a = admit({ clock: clock.now, shedder, load: () => load, gate });
    const held = Array.from({ length: 200 }, () => sync(a.check()));
    for (const v of held.slice(0, 100)) v.release(false); // the average of flight climbs past 100
    load = 1_000;
    const v = sync(a.check());
    expect(v.allowed).toBe(false);
    expect(v.status).toBe(503);
    expect(v.reason).toBe("shed");
    expect(gate.held).toBe(100);
    expect(shedder.flying).toBe(100);
    for (const h of held.slice(100)) h.release();
    expect(gate.held).toBe(0);
    expect(shedder.flying).toBe(0);
  });

  it("a problem+json body names the type, the status and the violated policies", () => {
    const clock = new ManualClock(start);
    const a = admit({ clock: clock.now, problem: true, limits: [{ name: "burst", quota: 1, window: 1_000 }], gate: 1 });
    const first = sync(a.check("p"));
    const full = sync(a.check("q"));
    expect(full.contentType).toBe(PROBLEM_JSON);
    expect(JSON.parse(full.body as string)).toMatchObject({ type: PROBLEM_TYPES.capacity, status: 503 });
    first.release();
    sync(a.check("q")).release();
    const limited = sync(a.check("q"));
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.body as string)).toMatchObject({
      type: PROBLEM_TYPES.quota,
      status: 429,
      "violated-policies": ["burst"],
    });
  });

  it("charges a quota-engine set all or none, in process, with one member per limit", () => {
    const clock = new ManualClock(start);
    const engine = new QuotaEngine();
    const user = perSecond("user", 2);
    const tenant = limitSpec({ name: "tenant", capacity: 3, refill: 3, window: 1_000 });
    engine.addLimit(user);
    engine.addLimit(tenant);
    const a = admit({
      clock: clock.now,
      quota: {
        store: engine,
        limits: [user, tenant],
        charges: (key) => [
          charge(new QuotaKey("acme", key, "api"), "user"),
          charge(new QuotaKey("acme", "*", "api"), "tenant"),
        ],
      },
    });
    expect(sync(a.check("alice")).allowed).toBe(true);
    expect(sync(a.check("alice")).allowed).toBe(true);
    const third = sync(a.check("alice"));
    expect(third.status).toBe(429);
    expect(third.reason).toBe("quota");
    expect(limits(field(third.headers, "RateLimit")).map((m) => [m.name, m.r])).toEqual([
      ["user", 0],
      ["tenant", 1], // not charged: the set did not fit
    ]);
    expect(policies(field(third.headers, "RateLimit-Policy"))).toEqual([
      { name: "user", q: 2, w: 1 },
      { name: "tenant", q: 3, w: 1 },
    ]);
    expect(retryAfter(field(third.headers, "Retry-After"))).toBe(1);
    expect(sync(a.check("bob")).allowed).toBe(true);
    expect(sync(a.check("carol")).allowed).toBe(false); // the tenant is spent
  });

  it("works with any QuotaStore, asynchronous ones included", async () => {
    const clock = new ManualClock(start);
    const engine = new QuotaEngine();
    const spec = perSecond("api", 1);
    engine.addLimit(spec);
    // A store that answers promises, as one over Redis does.
    const remote = {
      limit: (name: string) => engine.limit(name),
      checkAtomic: (charges, now) => Promise.resolve(engine.checkAtomic(charges, now)),
    } as Pick<QuotaStore, "checkAtomic" | "limit"> as QuotaStore;
    const gate = new Gate(10);
    const a = admit({
      clock: clock.now,
      gate,
      quota: { store: remote, limits: [spec], charges: (key) => [charge(new QuotaKey("s", key, "r"), "api")] },
    });
    const first = a.check("u");
    expect(first).toBeInstanceOf(Promise);
    expect((await first).allowed).toBe(true);
    const second = await a.check("u");
    expect(second.status).toBe(429);
    expect(gate.held).toBe(1); // the refused one gave its place back
  });

  it("keeps per-key state bounded by maxKeys, dropping keys at rest first", () => {
    const clock = new ManualClock(start);
    const a = admit({ clock: clock.now, maxKeys: 100, limits: [{ name: "l", quota: 10, window: 1_000 }] });
    for (let i = 0; i < 1_000; i++) sync(a.check(`k${i}`));
    expect(a.keys).toBeLessThanOrEqual(100);
    clock.advance(10_000); // every bucket full again: at rest
    for (let i = 0; i < 50; i++) sync(a.check(`fresh${i}`));
    expect(a.keys).toBeLessThanOrEqual(100);
  });

  it("Retry-After is always whole seconds rounded up from the exact wait, and the wait is enough", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.double({ min: 10, max: 3_600_000, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        (quota, window, offset) => {
          const clock = new ManualClock(start + offset);
          const a = admit({ clock: clock.now, limits: [{ name: "p", quota, window }] });
          let v = sync(a.check("z"));
          for (let i = 0; i < quota && v.allowed; i++) v = sync(a.check("z"));
          expect(v.allowed).toBe(false);
          const header = retryAfter(field(v.headers, "Retry-After"));
          expect(header).toBe(Math.ceil(v.retryAfter / 1_000));
          expect(header * 1_000).toBeGreaterThanOrEqual(v.retryAfter);
          // A client that waits what the field says is admitted.
          clock.advance(header * 1_000);
          expect(sync(a.check("z")).allowed).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe.each(STARTS)("admit: per-key limits beside a quota set, with the clock at %d", (start) => {
  const setup = (asynchronous: boolean, capacity: number) => {
    const engine = new QuotaEngine();
    const spec = limitSpec({ name: "tenant", capacity, refill: capacity, window: 3_600_000 });
    engine.addLimit(spec);
    let broken = false;
    const store = {
      limit: (name: string) => engine.limit(name),
      checkAtomic: (c: readonly QuotaCharge[], now: number) => {
        const r = engine.checkAtomic(c, now);
        return asynchronous ? Promise.resolve(r) : r;
      },
    } as Pick<QuotaStore, "checkAtomic" | "limit"> as QuotaStore;
    const a = admit({
      clock: () => start,
      limits: [{ name: "per-ip", quota: 3, window: 3_600_000 }],
      quota: {
        store,
        limits: [spec],
        charges: () => {
          if (broken) throw new Error("charges broke");
          return [charge(new QuotaKey("acme", "*", "api"), "tenant")];
        },
      },
    });
    return { a, breakCharges: () => void (broken = true) };
  };
  const left = (v: Verdict) => limits(field(v.headers, "RateLimit")).find((m) => m.name === "per-ip")?.r;

  it.each([false, true])(
    "requests the quota refuses spend none of the per-key limits (store answers promises: %s)",
    async (asynchronous) => {
      const { a } = setup(asynchronous, 1);
      const first = await a.check("ip1");
      expect([first.status, left(first)]).toEqual([200, 2]);
      for (let i = 0; i < 5; i++) {
        const v = await a.check("ip1");
        expect([v.status, v.reason, left(v)]).toEqual([429, "quota", 2]);
      }
    },
  );

  it("requests whose charges throw spend none of them", () => {
    const { a, breakCharges } = setup(false, 10);
    expect(left(sync(a.check("ip1")))).toBe(2);
    breakCharges();
    for (let i = 0; i < 3; i++) expect(() => a.check("ip1")).toThrow("charges broke");
  });

  it("with a store that answers later, two requests racing for a key's last unit: one admitted, one refused by the key's limit", async () => {
    const { a } = setup(true, 100);
    await a.check("ip1");
    await a.check("ip1");
    const both = await Promise.all([a.check("ip1"), a.check("ip1")]);
    expect(both.map((v) => [v.status, v.reason])).toEqual([
      [200, undefined],
      [429, "rate"],
    ]);
    expect(left(both[0])).toBe(0);
  });
});

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

describe("admit: per-key state is bounded by bytes, refused before anything is allocated", () => {
  it("a sliding quota of 50 000 at the default maxKeys would hold 38 GiB: refused, saying so and what fits", () => {
    expect(() => admit({ limits: [{ name: "s", quota: 50_000, window: 60_000, kind: "sliding" }] })).toThrow(
      'admit limits hold up to 400952 B a key (limits[0] "s", a sliding window of quota 50000 (8 B a unit), 400280 B); at maxKeys 100000 that is 37.3 GiB, past maxBytes (256.0 MiB): lower maxKeys to 669 or less, lower the quota, or raise maxBytes',
    );
    const fits = admit({ maxKeys: 669, limits: [{ name: "s", quota: 50_000, window: 60_000, kind: "sliding" }] });
    expect(sync(fits.check("k")).allowed).toBe(true);
    expect(
      admit({ maxBytes: 2 ** 36, limits: [{ name: "s", quota: 50_000, window: 60_000, kind: "sliding" }] }).keys,
    ).toBe(0);
  });

  it("the defaults hold a bucket and a sliding window of a hundred for 100 000 keys", () => {
    expect(() =>
      admit({
        limits: [
          { name: "b", quota: 100, window: 1_000 },
          { name: "s", quota: 100, window: 60_000, kind: "sliding" },
        ],
      }),
    ).not.toThrow();
  });

  it("a period charges any cost in one step: a cost of 10^15 against a quota of 10^15 leaves none", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const a = admit({ clock: clock.now, limits: [{ name: "bytes", quota: 1e15, window: 86_400_000, kind: "period" }] });
    expect(limits(field(sync(a.check("k", 1e15)).headers, "RateLimit"))).toEqual([{ name: "bytes", r: 0, t: 86_400 }]);
    expect(sync(a.check("k")).status).toBe(429);
  });

  it("at most 16 policies, each a member of every response's two fields; a wait past 15 digits is held to the largest Integer", () => {
    const many = Array.from({ length: 17 }, (_, i) => ({ name: `l${i}`, quota: 1, window: 1_000 }));
    expect(() => admit({ limits: many })).toThrow(
      "admit limits must be at most 16 policies (every response carries a member of each), got 17",
    );
    const a = admit({ gate: 1, busyRetryAfter: 1e300 });
    sync(a.check());
    expect(field(sync(a.check()).headers, "Retry-After")).toBe("999999999999999");
  });

  it("a sliding quota above 2^24 is refused at construction, not at every request", () => {
    expect(() =>
      admit({
        maxKeys: 1,
        maxBytes: 2 ** 40,
        limits: [{ name: "s", quota: 2 ** 24 + 1, window: 1_000, kind: "sliding" }],
      }),
    ).toThrow(
      "admit limits[0].quota must be at most 16777216 for a sliding window (2^24 stamps, 8 B each), got 16777217",
    );
  });
});

describe("admit: bad options", () => {
  it.each([
    [{ gate: -1 }, RangeError, /gate/],
    [{ gate: 1.5 }, RangeError, /gate/],
    [{ limits: {} }, TypeError, /limits must be an array/],
    [{ limits: [{ name: "a", quota: 0, window: 1 }] }, RangeError, /quota/],
    [{ limits: [{ name: "a", quota: 1, window: 0 }] }, RangeError, /window/],
    [{ limits: [{ name: "a", quota: 1, window: 1, kind: "leaky" }] }, TypeError, /kind/],
    [{ limits: [{ name: "é", quota: 1, window: 1 }] }, TypeError, /printable ASCII/],
    [
      {
        limits: [
          { name: "a", quota: 1, window: 1 },
          { name: "a", quota: 2, window: 1 },
        ],
      },
      RangeError,
      /used twice/,
    ],
    [{ limits: [{ name: "a", quota: 1, windw: 1 }] }, TypeError, /did you mean "window"/],
    [{ shedder: {} }, TypeError, /needs a load/],
    [{ gat: 3 }, TypeError, /did you mean "gate"/],
    [{ maxKeys: 0 }, RangeError, /maxKeys/],
    [{ maxBytes: 0 }, RangeError, /admit maxBytes must be above 0, got 0/],
    [
      { limits: [{ name: "a", quota: 1, window: 1e-9 }] },
      RangeError,
      /admit limits\[0\]\.window \(ms\) must be at least 0.0625/,
    ],
    [
      { limits: [{ name: "a", quota: 1, window: 2 ** 45 }] },
      RangeError,
      /admit limits\[0\]\.window \(ms\) must be at most/,
    ],
    [
      { quota: { store: new QuotaEngine(), limits: [{ name: "q", capacity: 0 }], charges: () => [] } },
      RangeError,
      /^admit quota\.limits\[0\] names the limit "q", which quota\.store does not have: add it with store\.addLimit\(spec\) first$/,
    ],
    [{ busyRetryAfter: -5 }, RangeError, /busyRetryAfter/],
    [{ problem: "yes" }, TypeError, /problem/],
    [{ quota: { store: {}, limits: [], charges: () => [] } }, TypeError, /QuotaStore/],
    [{ clock: 5 }, TypeError, /clock/],
  ] as const)("%j", (options, type, message) => {
    expect(() => admit(options as never)).toThrow(type);
    expect(() => admit(options as never)).toThrow(message);
  });

  it("a cost that is not a whole number from 1 is refused at the call", () => {
    const a = admit({ limits: [{ name: "a", quota: 5, window: 1_000 }] });
    expect(() => a.check("k", 0)).toThrow(RangeError);
    expect(() => a.check("k", 1.5)).toThrow(RangeError);
    expect(a.keys).toBe(0); // nothing was charged
  });
});

describe("admit: which admitted responses carry the fields", () => {
  it('"low" sends them once a tenth of a quota or less is left, "refused" only on refusals; refusals always do', () => {
    const clock = new ManualClock(1_700_000_000_000);
    for (const [fields, shownFrom] of [
      ["always", 1],
      ["low", 18],
      ["refused", Infinity],
    ] as const) {
      const a = admit({ clock: clock.now, fields, limits: [{ name: "l", quota: 20, window: 60_000 }] });
      for (let i = 1; i <= 20; i++) {
        const v = sync(a.check("k"));
        expect(v.headers.length > 0, `${fields} #${i}`).toBe(i >= shownFrom);
      }
      const refused = sync(a.check("k"));
      expect(limits(field(refused.headers, "RateLimit"))).toEqual([{ name: "l", r: 0, t: 3 }]);
    }
    expect(() => admit({ fields: "never" as never })).toThrow(/"always", "low" or "refused"/);
  });

  it.each([0, 1_700_000_000_000.5])(
    '"low" sends every policy\'s fields once any is low, whichever comes first (clock at %d)',
    (start) => {
      const clock = new ManualClock(start);
      const engine = new QuotaEngine();
      const spec = limitSpec({ name: "tenant", capacity: 10, refill: 10, window: 3_600_000 });
      engine.addLimit(spec);
      const a = admit({
        clock: clock.now,
        fields: "low",
        limits: [{ name: "per-ip", quota: 100, window: 3_600_000 }],
        quota: { store: engine, limits: [spec], charges: () => [charge(new QuotaKey("acme", "*", "api"), "tenant")] },
      });
      const names = (v: Verdict) => {
        const value = field(v.headers, "RateLimit");
        return value === null ? [] : limits(value).map((m) => [m.name, m.r]);
      };
      for (let i = 1; i <= 8; i++) expect(names(sync(a.check("ip"))), `#${i}`).toEqual([]);
      // The tenant's quota, asked after the per-key limit, has a tenth left: both policies show.
      expect(names(sync(a.check("ip")))).toEqual([
        ["per-ip", 91],
        ["tenant", 1],
      ]);
    },
  );
});
