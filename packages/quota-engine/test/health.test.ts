import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, charge, limitSpec, perSecond } from "@tideward/quota-engine";

const k = (i: number): QuotaKey => new QuotaKey("t", `k${i}`, "r");

describe("validate", () => {
  it("finds nothing in a sound engine", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 5));
    expect(engine.validate()).toEqual([]);
  });

  it("reports an engine with no limits", () => {
    expect(new QuotaEngine().validate()).toEqual([
      { code: "no_limits", message: "the engine has no limits: every check answers unknown_limit" },
    ]);
  });

  it("reports a GCRA burst above the capacity", () => {
    const engine = new QuotaEngine();
    engine.addLimit(limitSpec({ name: "r", capacity: 5, burst: 50 }));
    expect(engine.validate().map((i) => i.code)).toEqual(["burst_exceeds_capacity"]);
  });

  it("reports keys at 90% of maxKeys", () => {
    const engine = new QuotaEngine({ maxKeys: 10 });
    engine.addLimit(perSecond("r", 5));
    for (let i = 0; i < 8; i++) engine.checkTokenBucket(k(i), "r", 0);
    expect(engine.validate()).toEqual([]);
    engine.checkTokenBucket(k(8), "r", 0);
    expect(engine.validate()).toEqual([
      {
        code: "keys_near_limit",
        message: "9 keys tracked of maxKeys 10: new keys will soon be refused with key_limit",
      },
    ]);
  });

  it("reports a chain longer than 8 links", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 5));
    for (let i = 0; i < 8; i++) engine.addLink({ child: k(i), parent: k(i + 1), limit: "r", ratio: 1 });
    expect(engine.validate()).toEqual([]);
    engine.addLink({ child: k(8), parent: k(9), limit: "r", ratio: 1 });
    expect(engine.validate().map((i) => i.code)).toEqual(["deep_chain"]);
  });

  it("measures the longest chain once per key, however the links were listed, and restores a long chain", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 5));
    // A chain of 3 000 added top-down (each new link below the last), and a branch of 10 off its middle.
    for (let i = 3_000; i > 0; i--) engine.addLink({ child: k(i - 1), parent: k(i), limit: "r", ratio: 1 });
    for (let i = 0; i < 10; i++) {
      const parent = i === 9 ? k(1_500) : k(10_001 + i);
      engine.addLink({ child: k(10_000 + i), parent, limit: "r", ratio: 1 });
    }
    const [issue] = engine.validate();
    expect(issue?.code).toBe("deep_chain");
    expect(issue?.message).toContain("a hierarchy chain has 3000 links");
    const copy = new QuotaEngine();
    copy.restore(engine.snapshot());
    expect(copy.validate()[0]?.message).toBe(issue?.message);
  });

  it("reports fair-share usage too large to compare exactly", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 5));
    engine.addSubject("a", 1_000);
    engine.addSubject("b", 1);
    engine.recordUsage("b", 2 ** 50);
    expect(engine.validate().map((i) => i.code)).toEqual(["fair_precision"]);
  });
});

describe("stats and toJSON", () => {
  it("count limits, keys per algorithm, links, subjects, dropped and refused keys", () => {
    const engine = new QuotaEngine({ maxKeys: 3, sweepStep: 0 });
    engine.addLimit(perSecond("r", 1));
    engine.addLimit(perSecond("s", 1));
    engine.checkTokenBucket(k(0), "r", 0);
    engine.checkWindow(k(0), "r", 0);
    engine.checkGcra(k(1), "s", 0);
    engine.checkGcra(k(2), "s", 0); // refused: no room, and nothing idle yet
    engine.addLink({ child: k(0), parent: k(1), limit: "r", ratio: 1 });
    engine.addSubject("x");
    expect(engine.stats()).toEqual({
      limits: 2,
      buckets: 1,
      windows: 1,
      gcra: 1,
      keys: 3,
      maxKeys: 3,
      links: 1,
      subjects: 1,
      dropped: 0,
      refused: 1,
      reservations: 0,
      overrides: 0,
    });
    engine.sweep(5_000, Infinity);
    expect(engine.stats()).toMatchObject({ keys: 0, dropped: 3 });
    const r = engine.reserve([charge(k(0), "s", 1)], 5_000);
    expect(engine.stats().reservations).toBe(1);
    engine.cancel(r.id, 5_000);
    expect(engine.stats().reservations).toBe(0);
  });

  it("summarise as JSON: version, clock, stats and limits, with no key state", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 2));
    engine.checkTokenBucket(k(0), "r", 42);
    expect(JSON.parse(JSON.stringify(engine))).toEqual({
      version: 4,
      clock: 42,
      stats: {
        limits: 1,
        buckets: 1,
        windows: 0,
        gcra: 0,
        keys: 1,
        maxKeys: null,
        links: 0,
        subjects: 0,
        dropped: 0,
        refused: 0,
        reservations: 0,
        overrides: 0,
      },
      limits: [{ name: "r", capacity: 2, refill: 2, window: 1_000, burst: 2, align: false }],
    });
    expect(new QuotaEngine().toJSON().clock).toBeNull();
  });
});
