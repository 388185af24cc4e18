// The RateLimit fields admit writes, read back by a real structured-field parser
// (structured-headers) and checked against an independent model of each kind of limit, at clocks
// near 0 and near Date.now(): `r` is the units left; `t` the seconds until more quota is
// available (one unit more for a policy that admits, the request's cost for one that refuses);
// `Retry-After` on a refusal is the `t` of the policy that refused longest. Every field parses,
// for any name a policy may have.
import fc from "fast-check";
import { parseList } from "structured-headers";
import { describe, expect, it } from "vitest";
import { admit } from "@tideward/guard";
import type { LimitKind } from "@tideward/guard";
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import type { ChargeKind } from "@tideward/quota-engine";
import { ManualClock } from "@tideward/time";
import { limits, policies } from "./fields";
import { decide, model } from "./model";
import { field, sync } from "./support/admit";
import { STARTS } from "./support/clocks";

const KINDS: readonly LimitKind[] = ["bucket", "gcra", "sliding", "period"];
const SF_MAX = 999_999_999_999_999;

/** A `t` the model says `want`: exact, or one more where the exact wait is a whole second. */
function agrees(got: number, want: { s: number; edge: boolean }): boolean {
  if (want.s === Infinity) return got === SF_MAX;
  return got === want.s || (want.edge && got === want.s + 1);
}

describe.each(STARTS)("RateLimit fields against a model of each kind, with the clock at %d", (start) => {
  const step = fc.record({ dt: fc.integer({ min: 0, max: 90_000 }), cost: fc.integer({ min: 1, max: 6 }) });
  const policy = fc.record({
    kind: fc.constantFrom(...KINDS),
    quota: fc.integer({ min: 1, max: 5 }),
    window: fc.constantFrom(1_000, 2_500, 7_777, 10_000, 60_000),
  });

  it("one policy: what it admits, r, t, and Retry-After equal to the refusing policy's t", () => {
    fc.assert(
      fc.property(policy, fc.array(step, { minLength: 1, maxLength: 40 }), (p, steps) => {
        const clock = new ManualClock(start);
        const a = admit({ clock: clock.now, limits: [{ name: "p", ...p }] });
        const m = model(p.kind, p.quota, p.window);
        let at = 0;
        for (const { dt, cost } of steps) {
          at += Math.floor(dt / (p.window < 10_000 ? 10 : 1));
          clock.set(start + at);
          const v = sync(a.check("k", cost));
          const want = decide([m], [p.quota], at, cost);
          expect(v.allowed).toBe(want.allowed);
          expect(policies(field(v.headers, "RateLimit-Policy"))).toEqual([
            { name: "p", q: p.quota, w: Math.ceil(p.window / 1_000) },
          ]);
          const [member] = limits(field(v.headers, "RateLimit"));
          expect(member.r).toBe(want.members[0].r);
          expect(
            agrees(member.t, want.members[0].t),
            `t ${member.t} against ${JSON.stringify(want.members[0].t)}`,
          ).toBe(true);
          const retryAfter = field(v.headers, "Retry-After");
          if (want.allowed || want.retry?.s === Infinity) expect(retryAfter).toBeNull();
          else expect(Number(retryAfter)).toBe(member.t);
        }
      }),
      { numRuns: 120 },
    );
  });

  it("two policies, all or none: each member as its model says, Retry-After the longest refusing t", () => {
    fc.assert(
      fc.property(policy, policy, fc.array(step, { minLength: 1, maxLength: 30 }), (p, q, steps) => {
        const clock = new ManualClock(start);
        const a = admit({
          clock: clock.now,
          limits: [
            { name: "first", ...p },
            { name: "second", ...q },
          ],
        });
        const models = [model(p.kind, p.quota, p.window), model(q.kind, q.quota, q.window)];
        let at = 0;
        for (const { dt, cost } of steps) {
          at += Math.floor(dt / 10);
          clock.set(start + at);
          const v = sync(a.check("k", cost));
          const want = decide(models, [p.quota, q.quota], at, cost);
          expect(v.allowed).toBe(want.allowed);
          const members = limits(field(v.headers, "RateLimit"));
          expect(members.map((x) => x.name)).toEqual(["first", "second"]);
          for (const [i, x] of members.entries()) {
            expect(x.r).toBe(want.members[i].r);
            expect(agrees(x.t, want.members[i].t)).toBe(true);
          }
          if (!want.allowed && want.retry?.s !== Infinity) {
            const longest = Math.max(...members.filter((_, i) => want.members[i].refused).map((x) => x.t));
            expect(Number(field(v.headers, "Retry-After"))).toBe(longest);
          }
        }
      }),
      { numRuns: 100 },
    );
  });

  it("a quota-engine charge set: the same r, t and Retry-After, for a bucket, a fixed window and GCRA", () => {
    // The engine's bucket and GCRA of `capacity` per `window` admit as a bucket does; its fixed
    // window as a period opened by the first charge.
    const kinds: readonly (readonly [ChargeKind, LimitKind])[] = [
      ["bucket", "bucket"],
      ["gcra", "gcra"],
      ["window", "period"],
    ];
    const two = fc.record({
      kind: fc.constantFrom(...kinds),
      quota: fc.integer({ min: 1, max: 5 }),
      window: fc.constantFrom(1_000, 2_500, 7_777, 10_000),
    });
    fc.assert(
      fc.property(two, two, fc.array(step, { minLength: 1, maxLength: 30 }), (p, q, steps) => {
        const clock = new ManualClock(start);
        const engine = new QuotaEngine();
        const specs = [p, q].map((x, i) =>
          limitSpec({ name: `l${i}`, capacity: x.quota, refill: x.quota, burst: x.quota, window: x.window }),
        );
        for (const spec of specs) engine.addLimit(spec);
        const a = admit({
          clock: clock.now,
          quota: {
            store: engine,
            limits: specs,
            charges: (key, cost) => [
              charge(new QuotaKey("t", key, "api"), "l0", cost, p.kind[0]),
              charge(new QuotaKey("t", key, "api"), "l1", cost, q.kind[0]),
            ],
          },
        });
        const models = [model(p.kind[1], p.quota, p.window), model(q.kind[1], q.quota, q.window)];
        let at = 0;
        for (const { dt, cost } of steps) {
          at += Math.floor(dt / 10);
          clock.set(start + at);
          const v = sync(a.check("k", cost));
          const want = decide(models, [p.quota, q.quota], at, cost);
          expect(v.allowed).toBe(want.allowed);
          const members = limits(field(v.headers, "RateLimit"));
          for (const [i, x] of members.entries()) {
            expect(x.r).toBe(want.members[i].r);
            expect(agrees(x.t, want.members[i].t), `${x.name} t ${x.t}: ${JSON.stringify(want.members[i])}`).toBe(true);
          }
          if (!want.allowed && want.retry?.s !== Infinity) {
            const longest = Math.max(...members.filter((_, i) => want.members[i].refused).map((x) => x.t));
            expect(Number(field(v.headers, "Retry-After"))).toBe(longest);
          }
        }
      }),
      { numRuns: 100 },
    );
  });

  it("the draft's example: a bucket of 100 per 60 s after 50 requests says r=50 and t=1 (a unit is back in 0.6 s)", () => {
    const clock = new ManualClock(start);
    const a = admit({ clock: clock.now, limits: [{ name: "burst", quota: 100, window: 60_000 }] });
    let v = sync(a.check("alice"));
    for (let i = 1; i < 50; i++) v = sync(a.check("alice"));
    expect(limits(field(v.headers, "RateLimit"))).toEqual([{ name: "burst", r: 50, t: 1 }]);
  });

  it("a sliding window refuses a cost of 2 until two stamps have fallen out: Retry-After 8, then 4", () => {
    // Three per 10 s, requests at 0, 4 s and 5 s; a cost of 2 needs the stamps of 0 and 4 s gone (14 s).
    const clock = new ManualClock(start);
    const a = admit({ clock: clock.now, limits: [{ name: "s", quota: 3, window: 10_000, kind: "sliding" }] });
    for (const at of [0, 4_000, 5_000]) {
      clock.set(start + at);
      expect(sync(a.check("k")).allowed).toBe(true);
    }
    for (const [at, wait] of [
      [6_000, 8],
      [10_000, 4],
    ] as const) {
      clock.set(start + at);
      const v = sync(a.check("k", 2));
      expect([v.status, field(v.headers, "Retry-After")]).toEqual([429, String(wait)]);
      expect(limits(field(v.headers, "RateLimit"))[0].t).toBe(wait);
    }
    clock.set(start + 14_000);
    expect(sync(a.check("k", 2)).allowed).toBe(true);
  });

  it.each(["bucket", "gcra"] as const)("%s, cost 2 with nothing left: t and Retry-After are the same wait", (kind) => {
    const clock = new ManualClock(start);
    const a = admit({ clock: clock.now, limits: [{ name: "b", quota: 2, window: 6_000, kind }] });
    sync(a.check("k", 2));
    const v = sync(a.check("k", 2));
    expect(limits(field(v.headers, "RateLimit"))).toEqual([{ name: "b", r: 0, t: 6 }]);
    expect(field(v.headers, "Retry-After")).toBe("6");
  });
});

describe("every field parses, whatever printable name a policy has", () => {
  const printable = fc
    .array(fc.integer({ min: 0x20, max: 0x7e }), { minLength: 1, maxLength: 20 })
    .map((codes) => String.fromCharCode(...codes));
  it('names with ; , = " \\ and spaces are written as Strings that a parser reads back whole', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.oneof(printable, fc.constantFrom("a;b", 'say "hi"', "back\\slash", "x, y", "r=0;t=1")), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.constantFrom(...KINDS),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 8 }),
        (names, kind, costs) => {
          const clock = new ManualClock(1_700_000_000_000);
          const a = admit({
            clock: clock.now,
            limits: names.map((name, i) => ({ name, quota: 2 + i, window: 1_000, kind })),
          });
          for (const cost of costs) {
            const v = sync(a.check("k", cost));
            for (const name of ["RateLimit-Policy", "RateLimit"]) {
              const value = field(v.headers, name) as string;
              const items = parseList(value);
              expect(items.map(([item]) => item as unknown)).toEqual(names);
            }
            clock.advance(300);
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it("a name that cannot be sent is refused at construction, naming it", () => {
    expect(() => admit({ limits: [{ name: "é", quota: 1, window: 1_000 }] })).toThrow(
      'admit limits[0].name must be a non-empty string of printable ASCII (it is sent as a structured-field String), got "é"',
    );
    expect(() => admit({ limits: [{ name: "tab\there", quota: 1, window: 1_000 }] })).toThrow(TypeError);
    expect(() => admit({ limits: [{ name: "", quota: 1, window: 1_000 }] })).toThrow(TypeError);
    expect(() => admit({ limits: [{ name: "n".repeat(257), quota: 1, window: 1_000 }] })).toThrow(
      "admit limits[0].name must be at most 256 characters, got 257",
    );
  });

  it("a hole in the limits is refused by its index, not skipped", () => {
    const limits: unknown[] = [{ name: "a", quota: 1, window: 1_000 }];
    limits[2] = { name: "b", quota: 1, window: 1_000 };
    expect(() => admit({ limits: limits as never })).toThrow(
      new TypeError("admit limits[1] must be a limit { name, quota, window, kind }, got undefined"),
    );
  });
});
