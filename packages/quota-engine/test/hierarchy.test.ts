import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, limitSpec, perSecond } from "@tideward/quota-engine";
import type { QuotaLink } from "@tideward/quota-engine";

const user = new QuotaKey("acme", "alice", "*");
const team = new QuotaKey("acme", "team-1", "*");
const tenant = new QuotaKey("acme", "*", "*");

function engine(): QuotaEngine {
  const e = new QuotaEngine();
  e.addLimit(limitSpec({ name: "req", capacity: 100, refill: 100, window: 1_000 }));
  e.addLink({ child: user, parent: team, limit: "req", ratio: 1 });
  e.addLink({ child: team, parent: tenant, limit: "req", ratio: 3 });
  return e;
}

describe("chain", () => {
  it("lists the key and its ancestors, each charged its ratio times the level below", () => {
    expect(
      engine()
        .chain(user, "req", 2)
        .map((c) => [c.key.subject, c.cost]),
    ).toEqual([
      ["alice", 2],
      ["team-1", 2],
      ["*", 6],
    ]);
  });

  it("is the key alone for a limit it has no link for, or a key with no parent", () => {
    expect(engine().chain(user, "other", 2)).toEqual([{ key: user, limit: "other", cost: 2, kind: "bucket" }]);
    expect(engine().chain(tenant, "req")).toEqual([{ key: tenant, limit: "req", cost: 1, kind: "bucket" }]);
  });

  it("refuses a chained cost past 2^53", () => {
    const e = engine();
    expect(() => e.chain(user, "req", 2 ** 52)).toThrow(RangeError);
  });
});

describe("checkHierarchy", () => {
  it("charges the chain atomically and reports the tightest level in the child's units", () => {
    const e = engine();
    // tenant: 100 − 3·10 = 70 left, 70 / 3 = 23 more of the child's units.
    expect(e.checkHierarchy(user, "req", 0, 10)).toMatchObject({ allowed: true, reason: "ok", remaining: 23 });
    expect(e.checkHierarchy(user, "req", 0, 24)).toMatchObject({ allowed: false, reason: "exhausted", remaining: 23 });
    expect(e.checkTokenBucket(user, "req", 0).remaining).toBe(89); // the refused 24 took nothing
  });

  it("traces every level with its key and answer", () => {
    const e = engine();
    expect(e.checkHierarchy(user, "req", 0, 30).trace).toEqual([
      `bucket req @ ${user.id}: ok`,
      `bucket req @ ${team.id}: ok`,
      `bucket req @ ${tenant.id}: ok`,
    ]);
    // The tenant would need 3 · 40 = 120 of its 100: never.
    expect(e.checkHierarchy(user, "req", 0, 40).trace).toEqual([
      `bucket req @ ${user.id}: not_committed`,
      `bucket req @ ${team.id}: not_committed`,
      `bucket req @ ${tenant.id}: too_large`,
    ]);
  });

  it("runs on windows and GCRA flows too", () => {
    const e = engine();
    expect(e.checkHierarchy(user, "req", 0, 30, "window")).toMatchObject({ allowed: true, remaining: 3 });
    expect(e.checkHierarchy(user, "req", 0, 4, "window")).toMatchObject({
      allowed: false,
      reason: "exhausted",
      retryAfter: 1_000,
    });
    expect(e.checkHierarchy(user, "req", 0, 1, "gcra").trace.every((line) => line.startsWith("gcra req @"))).toBe(true);
  });

  it("answers unknown_limit for an unknown limit", () => {
    expect(engine().checkHierarchy(user, "nope", 0)).toMatchObject({
      allowed: false,
      reason: "unknown_limit",
      retryAfter: Infinity,
    });
  });
});

describe("addLink (property): never lets a chain loop", () => {
  it("refuses exactly the links that would close a cycle", () => {
    const nodes = Array.from({ length: 6 }, (_, i) => new QuotaKey("s", `n${i}`, "r"));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 5 })), { maxLength: 30 }),
        (pairs) => {
          const e = new QuotaEngine();
          e.addLimit(perSecond("req", 1));
          const parent = new Map<number, number>();
          const reaches = (from: number, to: number): boolean => {
            for (let at: number | undefined = from; at !== undefined; at = parent.get(at)) if (at === to) return true;
            return false;
          };
          for (const [c, p] of pairs) {
            const link: QuotaLink = { child: nodes[c], parent: nodes[p], limit: "req", ratio: 1 };
            const result = e.addLink(link);
            const expected = parent.has(c) && c !== p ? "duplicate_link" : reaches(p, c) ? "cycle" : "ok";
            if ((result.ok ? "ok" : result.code) !== expected) return false;
            if (result.ok) parent.set(c, p);
          }
          // Every chain ends, and visits distinct keys.
          return nodes.every((n) => new Set(e.chain(n, "req").map((x) => x.key.id)).size === e.chain(n, "req").length);
        },
      ),
    );
  });

  it("refuses malformed links with invalid_link", () => {
    const e = engine();
    const bad = [
      { child: "alice", parent: team, limit: "req", ratio: 1 },
      { child: user, parent: null, limit: "req", ratio: 1 },
      { child: tenant, parent: team, limit: "req", ratio: 1.5 },
    ];
    expect(
      bad.map((l) => {
        const r = e.addLink(l as unknown as QuotaLink);
        return r.ok ? "ok" : `${r.code}: ${r.reason}`;
      }),
    ).toEqual([
      'invalid_link: QuotaLink child must be a QuotaKey, got "alice"',
      "invalid_link: QuotaLink parent must be a QuotaKey, got null",
      "invalid_link: QuotaLink ratio must be a whole number of at least 1, got 1.5",
    ]);
    expect(e.stats().links).toBe(2);
  });
});
