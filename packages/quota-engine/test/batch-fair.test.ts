import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, perSecond } from "@tideward/quota-engine";
import type { EvaluationInput } from "@tideward/quota-engine";

const keys = [0, 1, 2].map((i) => new QuotaKey("t", `k${i}`, "r"));

describe("checkMany", () => {
  it("answers exactly as the same checks made one by one", () => {
    const inputs: EvaluationInput[] = Array.from({ length: 200 }, (_, i) => ({
      key: keys[(i * 7) % 3],
      now: i * 40,
      cost: 1 + (i % 3),
    }));
    for (const kind of ["bucket", "window", "gcra"] as const) {
      const batch = new QuotaEngine();
      const single = new QuotaEngine();
      batch.addLimit(perSecond("r", 5));
      single.addLimit(perSecond("r", 5));
      const report = batch.checkMany("r", inputs, kind);
      const one = inputs.map((x) =>
        kind === "bucket"
          ? single.checkTokenBucket(x.key, "r", x.now, x.cost)
          : kind === "window"
            ? single.checkWindow(x.key, "r", x.now, x.cost)
            : single.checkGcra(x.key, "r", x.now, x.cost),
      );
      expect(report.decisions).toEqual(one);
      const allowed = one.filter((d) => d.allowed).length;
      expect([report.total, report.allowed, report.denied]).toEqual([200, allowed, 200 - allowed]);
      expect(allowed).toBeGreaterThan(0);
      expect(allowed).toBeLessThan(200);
    }
  });

  it("checks every input before evaluating any", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 5));
    const inputs = [
      { key: keys[0], now: 0 },
      { key: keys[1], now: NaN },
    ] as EvaluationInput[];
    expect(() => engine.checkMany("r", inputs)).toThrow(
      new RangeError("inputs[1].now must be a finite number of milliseconds, got NaN"),
    );
    expect(() => engine.checkMany("r", [{ key: keys[0], now: 0, cost: -1 }])).toThrow(
      "inputs[0].cost must be a whole number of at least 1, got -1",
    );
    expect(engine.stats().keys).toBe(0);
  });

  it("counts every input of an unknown limit as denied", () => {
    const report = new QuotaEngine().checkMany("nope", [{ key: keys[0], now: 0 }]);
    expect([report.total, report.allowed, report.denied, report.decisions[0]?.reason]).toEqual([
      1,
      0,
      1,
      "unknown_limit",
    ]);
  });
});

describe("fair share", () => {
  it("serves the least used per weight", () => {
    const engine = new QuotaEngine();
    engine.addSubject("small", 1);
    engine.addSubject("big", 3);
    const served: string[] = [];
    for (let i = 0; i < 8; i++) {
      const next = engine.nextFairSubject() as string;
      served.push(next);
      engine.recordUsage(next, 1);
    }
    // Least used per weight; a tie (0/1 vs 0/3, then 1/1 vs 3/3) goes to the heavier weight.
    expect(served).toEqual(["big", "small", "big", "big", "big", "small", "big", "big"]);
    expect(engine.fairSnapshot()).toEqual([
      { subject: "small", weight: 1, used: 2, score: 2 },
      { subject: "big", weight: 3, used: 6, score: 2 },
    ]);
  });

  it("breaks a tie of equal weights by name, whatever the order added", () => {
    for (const order of [
      ["b", "a", "c"],
      ["c", "b", "a"],
    ]) {
      const engine = new QuotaEngine();
      for (const s of order) engine.addSubject(s, 2);
      expect(engine.nextFairSubject()).toBe("a");
      engine.recordUsage("a", 4);
      expect(engine.nextFairSubject()).toBe("b");
    }
  });

  it("has no subject to serve when none were added", () => {
    expect(new QuotaEngine().nextFairSubject()).toBeUndefined();
  });

  it("refuses duplicates, bad weights, unknown subjects and bad costs with a code", () => {
    const engine = new QuotaEngine();
    expect(engine.addSubject("a", 2)).toEqual({ ok: true });
    const answers = [
      engine.addSubject("a"),
      engine.addSubject("b", 0),
      engine.addSubject("", 1),
      engine.recordUsage("z", 1),
      engine.recordUsage("a", 0),
      engine.recordUsage("a", 1.5),
    ];
    expect(answers.map((r) => (r.ok ? "ok" : r.code))).toEqual([
      "duplicate_subject",
      "invalid_subject",
      "invalid_subject",
      "unknown_subject",
      "invalid_cost",
      "invalid_cost",
    ]);
    expect(answers[1]).toEqual({
      ok: false,
      code: "invalid_subject",
      reason: "Fair-share weight must be a whole number of at least 1, got 0",
    });
    expect(engine.fairSnapshot()).toEqual([{ subject: "a", weight: 2, used: 0, score: 0 }]);
  });
});
