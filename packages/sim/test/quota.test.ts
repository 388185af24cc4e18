import { describe, expect, it } from "vitest";
import { Jitter } from "@tideward/backoff";
import { QuotaKey, perSecond } from "@tideward/quota-engine";
import { isInvariantError, keys, latency, policy, simulate, traffic } from "@tideward/sim";
import type { QuotaDimension } from "@tideward/sim";
import { STARTS } from "./helpers";

// Ten users in two tenants, calling an LLM: a user may make 5 calls a second, a tenant 15, and
// the model takes 200 tokens a second in all; each call costs 10 tokens.
const users = keys.uniform({ count: 10, prefix: "user-" });
const dimensions: QuotaDimension[] = [
  { limit: perSecond("user", 5), key: (_k, name) => new QuotaKey(`tenant-${name.endsWith("1") ? 1 : 0}`, name, "llm") },
  { limit: perSecond("tenant", 15), key: (k) => new QuotaKey(`tenant-${k % 2}`, "*", "llm") },
  { limit: perSecond("tokens", 200), key: () => new QuotaKey("*", "*", "llm"), units: "cost" },
];
const load = traffic.poisson({ rate: 60, keys: users, cost: 10 });

describe.each(STARTS)("quota engine (start %s)", (start) => {
  const base = { start, duration: 30_000, traffic: load };

  it("atomic: every dimension charged or none; its exact envelopes hold at every step", () => {
    const r = simulate({ ...base, policies: [policy.quota({ dimensions })], invariants: true });
    expect(r.summary.refused).toBeGreaterThan(0);
    expect(r.policies[0].stats.wasted).toBe(0);
    // The model's 200 tokens a second is 20 calls a second: the tightest dimension here.
    const rate = r.summary.admitted / 30;
    expect(rate).toBeLessThanOrEqual(20 + 200 / 10 / 30 + 1e-9);
    expect(rate).toBeGreaterThan(19);
    expect(Object.keys(r.summary.refusedBy).every((k) => k.startsWith("quota/"))).toBe(true);
  });

  it("sequential: a hot user's refused calls drain the tenant's budget that the atomic way keeps for the others", () => {
    // One tenant: a hot user at 50 calls a second, nine others at one a second each. The tenant
    // may make 20 a second, each user 3. Charged tenant first, then user.
    const hot = traffic.merge(
      traffic.poisson({ rate: 50, keys: keys.single("hot") }),
      traffic.poisson({ rate: 9, keys: keys.uniform({ count: 9, prefix: "user-" }) }),
    );
    const dims: QuotaDimension[] = [
      { limit: perSecond("tenant", 20), key: () => new QuotaKey("acme", "*", "api") },
      { limit: perSecond("user", 3) },
    ];
    const atomic = simulate({
      ...base,
      traffic: hot,
      policies: [policy.quota({ dimensions: dims })],
      perKey: true,
      invariants: true,
    });
    const sequential = simulate({
      ...base,
      traffic: hot,
      policies: [policy.quota({ dimensions: dims, mode: "sequential" })],
      perKey: true,
      invariants: true,
    });
    expect(sequential.series.offered).toEqual(atomic.series.offered);
    expect(atomic.policies[0].stats.wasted).toBe(0);
    // The tenant was charged for every hot call the user limit then refused.
    expect(sequential.policies[0].stats.wasted).toBeGreaterThan(30 * 10);
    const others = (r: typeof atomic) => (r.keys?.admitted ?? []).slice(1).reduce((a, b) => a + b, 0);
    // Atomic: the nine get nearly all of their 9 a second; sequential: a fraction.
    expect(others(atomic) / 30).toBeGreaterThan(8);
    expect(others(sequential) / 30).toBeLessThan(5);
  });

  it("fixed-window and GCRA dimensions keep their envelopes too", () => {
    const kinds: QuotaDimension[] = [
      { limit: perSecond("window", 4), kind: "window" },
      { limit: perSecond("gcra", 6), kind: "gcra", key: (k) => new QuotaKey("t", String(k % 3), "g") },
    ];
    const r = simulate({ ...base, policies: [policy.quota({ dimensions: kinds })], invariants: true });
    expect(r.summary.refusedBy["quota/window"]).toBeGreaterThan(0);
    expect(r.summary.refusedBy["quota/gcra"]).toBeGreaterThan(0);
  });

  it("a refusal names the dimension that refused", () => {
    const r = simulate({
      ...base,
      policies: [
        policy.quota({
          dimensions: [
            { limit: perSecond("user", 1) },
            { limit: perSecond("tenant", 1_000), key: () => new QuotaKey("t", "*", "api") },
          ],
        }),
      ],
    });
    expect(Object.keys(r.summary.refusedBy)).toEqual(["quota/user"]);
  });
});

describe.each(STARTS)("store faults (start %s)", (start) => {
  const one: QuotaDimension[] = [{ limit: perSecond("api", 50), key: () => new QuotaKey("t", "*", "api") }];
  const base = { start, duration: 20_000, traffic: traffic.poisson({ rate: 40 }) };

  it("down: failing closed refuses while the store is away; failing open admits", () => {
    const faults = { down: [{ from: 5_000, to: 10_000 }], timeout: 30 };
    const closed = simulate({ ...base, policies: [policy.quota({ dimensions: one, faults })] });
    const open = simulate({ ...base, policies: [policy.quota({ dimensions: one, faults, onError: "open" })] });
    const t = closed.series.t;
    const during = (xs: readonly number[]) =>
      xs.filter((_, i) => t[i] >= 5_000 && t[i] < 10_000).reduce((a, b) => a + b, 0);
    expect(during(closed.series.refusedBy["quota/store-down"])).toBe(during(closed.series.attempts));
    expect(closed.summary.refused).toBe(closed.summary.refusedBy["quota/store-down"]);
    expect(open.summary.refused).toBe(0);
    expect(open.policies[0].stats.errors).toBeGreaterThan(150);
    // Each call waited for the store's timeout before it went on.
    expect(open.series.latencyMean[6] as number).toBeCloseTo(30 + 10, 6);
  });

  it("slow: answers add their latency; past the timeout the caller gives up though the store charged", () => {
    const faults = {
      slow: [
        { from: 0, to: 10_000, latency: 20 },
        { from: 10_000, to: 20_000, latency: 80 },
      ],
      timeout: 50,
    };
    const r = simulate({
      ...base,
      backend: { latency: latency.fixed(5) },
      policies: [policy.quota({ dimensions: one, faults })],
    });
    expect(r.series.latencyMean[3] as number).toBeCloseTo(25, 6);
    expect(r.series.succeeded[15]).toBe(0);
    expect(r.policies[0].stats.lost).toBe(r.summary.refusedBy["quota/store-timeout"]);
  });

  it("commit-then-timeout with retries charges one call more than once: the exact check says so", () => {
    let error: unknown;
    try {
      simulate({
        ...base,
        traffic: traffic.poisson({ rate: 60 }),
        client: { retry: { backoff: { attempts: 3, base: 10, jitter: Jitter.rigid }, refusals: true } },
        policies: [policy.quota({ dimensions: one, faults: { lost: 0.3 }, exact: true })],
        invariants: true,
      });
    } catch (e) {
      error = e;
    }
    expect(isInvariantError(error)).toBe(true);
    expect(String(error)).toMatch(/refused with room.*counted twice/);
  });

  it("skewed clocks: a caller whose clock runs ahead refills the bucket early, within the stated overshoot", () => {
    // The second instance calls 400 ms in the future: the engine's clock jumps there (and, never
    // stepping back, stays), so the bucket refills at most 50 × 0.4 = 20 tokens early, once.
    const faults = { skew: [0, 400] };
    const heavy = { ...base, traffic: traffic.poisson({ rate: 200 }) };
    const skewed = simulate({ ...heavy, policies: [policy.quota({ dimensions: one, faults })], invariants: true });
    const plain = simulate({ ...heavy, policies: [policy.quota({ dimensions: one })] });
    expect(Math.abs(skewed.summary.admitted - plain.summary.admitted)).toBeLessThanOrEqual(21);
    // A bucket drained before the fast instance first calls does gain them: start it in a burst.
    const burst = traffic.merge(
      traffic.bursts({ size: 50, spacing: 0, every: 1e9 }),
      traffic.poisson({ rate: 200, at: 100 }),
    );
    const late = { ...base, traffic: burst };
    const a = simulate({
      ...late,
      policies: [policy.quota({ dimensions: one, faults: { skew: [0, 0, 0, 0, 0, 0, 0, 0, 0, 400] } })],
      invariants: true,
    });
    const b = simulate({ ...late, policies: [policy.quota({ dimensions: one })] });
    expect(a.summary.admitted - b.summary.admitted).toBeGreaterThanOrEqual(10);
    expect(a.summary.admitted - b.summary.admitted).toBeLessThanOrEqual(21);
  });

  it("local fallback: each instance falls back to a limiter of its own", () => {
    const r = simulate({
      ...base,
      policies: [
        policy.quota({ dimensions: one, faults: { down: [{ from: 0, to: 20_000 }], skew: [0, 0] }, onError: "local" }),
      ],
    });
    expect(r.policies[0].stats.fallbacks).toBe(r.summary.attempts);
    expect(r.summary.refused).toBe(0);
  });

  it("rejects a store that answers with promises, and names bad options", () => {
    const asyncStore = () =>
      ({ addLimit: () => ({ ok: true as const }), checkTokenBucket: () => Promise.resolve({}) }) as never;
    expect(() => simulate({ ...base, policies: [policy.quota({ dimensions: one, store: asyncStore })] })).toThrow(
      /answered with a promise/,
    );
    expect(() => policy.quota({ dimensions: [] })).toThrow(/non-empty array/);
    expect(() => policy.quota({ dimensions: one, mode: "eventual" as never })).toThrow(/mode/);
    expect(() => policy.quota({ dimensions: one, exact: "no" as never })).toThrow(
      new TypeError('policy.quota exact must be true or false, got "no"'),
    );
    expect(() => policy.quota({ dimensions: one, faults: { down: [{ from: 5, to: 1 }] } })).toThrow(/down\[0\] to/);
  });
});
