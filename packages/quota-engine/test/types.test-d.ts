// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import { describe, expectTypeOf, test } from "vitest";
import {
  QuotaEngine,
  QuotaKey,
  charge,
  enginePolicy,
  isSnapshotError,
  limitSpec,
  perSecond,
  reasons,
} from "@tideward/quota-engine";
import type {
  AtomicReport,
  ChargeKind,
  Decision,
  EnginePolicy,
  IssueCode,
  LimitSpec,
  LinkCode,
  QuotaStore,
  Reason,
  Result,
  ValidationIssue,
} from "@tideward/quota-engine";
import { quotaConformance } from "@tideward/quota-engine/conformance";
import type { ConformanceApi } from "@tideward/quota-engine/conformance";

const engine = new QuotaEngine();
const alice = new QuotaKey("tenant-a", "alice", "api");

describe("Decision", () => {
  test("says why with one of six reasons, so a switch over them is exhaustive", () => {
    expectTypeOf<Reason>().toEqualTypeOf<
      "ok" | "exhausted" | "too_large" | "unknown_limit" | "not_committed" | "key_limit"
    >();
    expectTypeOf(reasons).toEqualTypeOf<readonly Reason[]>();
    const d = engine.checkTokenBucket(alice, "requests", 0);
    expectTypeOf(d).toEqualTypeOf<Decision>();
    expectTypeOf(d.reason).toEqualTypeOf<Reason>();
    expectTypeOf(d.retryAfter).toEqualTypeOf<number>();
    const waits = (reason: Reason): boolean => {
      switch (reason) {
        case "ok":
        case "not_committed":
        case "key_limit":
        case "exhausted":
          return true;
        case "too_large":
        case "unknown_limit":
          return false;
      }
    };
    expectTypeOf(waits).returns.toEqualTypeOf<boolean>();
    // @ts-expect-error -- not a reason
    const r: Reason = "denied";
    void r;
    // @ts-expect-error -- a decision is read-only
    d.allowed = true;
  });
});

describe("Result", () => {
  test("is ok, or a code from the call's own set with a reason", () => {
    const added = engine.addLimit(perSecond("api", 10));
    expectTypeOf(added).toEqualTypeOf<Result<"duplicate_limit" | "invalid_limit">>();
    if (!added.ok) {
      expectTypeOf(added.code).toEqualTypeOf<"duplicate_limit" | "invalid_limit">();
      expectTypeOf(added.reason).toEqualTypeOf<string>();
    } else {
      // @ts-expect-error -- a success has no code
      void added.code;
    }
    const linked = engine.addLink({
      child: alice,
      parent: new QuotaKey("tenant-a", "*", "api"),
      limit: "api",
      ratio: 1,
    });
    expectTypeOf(linked).toEqualTypeOf<Result<LinkCode>>();
    expectTypeOf<LinkCode>().toEqualTypeOf<"unknown_limit" | "cycle" | "duplicate_link" | "invalid_link">();
    expectTypeOf(engine.addSubject("a")).toEqualTypeOf<Result<"duplicate_subject" | "invalid_subject">>();
    expectTypeOf(engine.recordUsage("a", 1)).toEqualTypeOf<Result<"unknown_subject" | "invalid_cost">>();
  });
});

describe("the engine", () => {
  test("takes a Partial of its policy, and limits from a spec with optional fields", () => {
    expectTypeOf<ConstructorParameters<typeof QuotaEngine>>().toEqualTypeOf<[policy?: Partial<EnginePolicy>]>();
    expectTypeOf(enginePolicy).toEqualTypeOf<EnginePolicy>();
    expectTypeOf(limitSpec({ name: "tokens", capacity: 4 })).toEqualTypeOf<LimitSpec>();
    // @ts-expect-error -- a limit needs its capacity
    limitSpec({ name: "tokens" });
    // @ts-expect-error -- not a policy field
    new QuotaEngine({ maxkeys: 10 });
  });

  test("charges are typed by kind, and an atomic check reports every decision", () => {
    expectTypeOf<ChargeKind>().toEqualTypeOf<"bucket" | "window" | "gcra">();
    const report = engine.checkAtomic([charge(alice, "api", 1, "gcra")], 0);
    expectTypeOf(report).toEqualTypeOf<AtomicReport>();
    expectTypeOf(report.decisions).toEqualTypeOf<readonly Decision[]>();
    // @ts-expect-error -- not a kind
    charge(alice, "api", 1, "leaky");
    expectTypeOf(engine.validate()).toEqualTypeOf<ValidationIssue[]>();
    expectTypeOf<ValidationIssue["code"]>().toEqualTypeOf<IssueCode>();
    const e: unknown = new Error("x");
    if (isSnapshotError(e)) expectTypeOf(e.field).toEqualTypeOf<string>();
  });

  test("is a QuotaStore, synchronous in process; the conformance suite takes either", () => {
    expectTypeOf(engine).toExtend<QuotaStore>();
    expectTypeOf(engine.checkWindow(alice, "api", 0)).not.toExtend<PromiseLike<unknown>>();
    const api = {} as ConformanceApi;
    expectTypeOf(quotaConformance).toBeCallableWith(api, () => new QuotaEngine());
    expectTypeOf(quotaConformance).toBeCallableWith(api, async () => Promise.resolve(new QuotaEngine()));
    // @ts-expect-error -- the factory makes a store, not a limit
    quotaConformance(api, () => perSecond("api", 1));
  });
});
