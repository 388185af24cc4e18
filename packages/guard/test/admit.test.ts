// admit: what it advertises and refuses, with the fields draft-ietf-httpapi-ratelimit-headers
// gives them; several limits, the gate, the shedder and a quota set decided all or none. What it
// gives back when something throws is in admit-throws.test.ts, bad options and sizes in
// admit-input.test.ts.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { admit, PROBLEM_JSON, PROBLEM_TYPES, RATELIMIT_DRAFT } from "@tideward/guard";
import type { Verdict } from "@tideward/guard";
import { QuotaEngine, QuotaKey, charge, limitSpec, perSecond } from "@tideward/quota-engine";
import type { QuotaCharge, QuotaStore } from "@tideward/quota-engine";
import { Gate } from "@tideward/limiters";
import { Shedder } from "@tideward/shedder";
import { ManualClock } from "@tideward/time";
import { limits, policies, retryAfter } from "./fields";
import { field, sync } from "./support/admit";
import { STARTS } from "./support/clocks";

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
