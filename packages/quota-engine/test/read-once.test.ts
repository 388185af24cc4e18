// Options and arguments are read once, copied, then checked and used: a getter that answers one
// value to the check and another to the use gets one say, and nothing can mint tokens.
import { describe, expect, it } from "vitest";
import { QuotaEngine, QuotaKey, limitSpec, perSecond } from "@tideward/quota-engine";
import type { EvaluationInput, LimitSpec, QuotaCharge, QuotaLink } from "@tideward/quota-engine";

const alice = new QuotaKey("acme", "alice", "api");
const tenant = new QuotaKey("acme", "*", "api");

/** A value that reads as `first` the first time and as `then` ever after, counting its reads. */
function twoFaced(first: unknown, then: unknown): { reads: number; get value(): unknown } {
  return {
    reads: 0,
    get value() {
      return this.reads++ === 0 ? first : then;
    },
  };
}

describe("read once", () => {
  it("a charge's cost getter answering 1 to the check and -10^6 to the charge charges 1", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 10));
    const cost = twoFaced(1, -1_000_000);
    const sneaky = {
      key: alice,
      limit: "r",
      get cost() {
        return cost.value as number;
      },
    } as QuotaCharge;
    const report = engine.checkAtomic([sneaky, { key: tenant, limit: "r", cost: 1 }], 1_000);
    expect([report.committed, report.decisions[0]?.cost, report.decisions[0]?.remaining, cost.reads]).toEqual([
      true,
      1,
      9,
      1,
    ]);
    expect(engine.checkTokenBucket(alice, "r", 1_000).remaining).toBe(8); // never above 10
  });

  it("a limit's capacity getter answering 5 to the check and -10^9 after stores 5", () => {
    const engine = new QuotaEngine();
    const capacity = twoFaced(5, -1_000_000_000);
    const spec = {
      name: "r",
      get capacity() {
        return capacity.value as number;
      },
      refill: 5,
      window: 1_000,
      burst: 5,
      align: false,
    } as LimitSpec;
    expect(engine.addLimit(spec)).toEqual({ ok: true });
    expect([engine.limit("r")?.capacity, capacity.reads]).toEqual([5, 1]);
    expect(engine.checkTokenBucket(alice, "r", 0, 5).allowed).toBe(true);
    expect(engine.checkTokenBucket(alice, "r", 0).allowed).toBe(false);
  });

  it("limitSpec reads each field once", () => {
    const window = twoFaced(1_000, -1);
    const spec = limitSpec({
      name: "r",
      capacity: 3,
      get window() {
        return window.value as number;
      },
    });
    expect([spec.window, window.reads]).toEqual([1_000, 1]);
  });

  it("a batch input's now and cost getters are read once, before any input is evaluated", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 2));
    const now = twoFaced(1_000, NaN);
    const cost = twoFaced(1, 1e9);
    const input = {
      key: alice,
      get now() {
        return now.value as number;
      },
      get cost() {
        return cost.value as number;
      },
    } as EvaluationInput;
    const report = engine.checkMany("r", [input, { key: alice, now: 1_000 }]);
    expect([report.allowed, report.denied, now.reads, cost.reads]).toEqual([2, 0, 1, 1]);
  });

  it("a link's ratio getter answering 1 to the check and 10^9 after links with ratio 1", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 10));
    const ratio = twoFaced(1, 1e9);
    const link = {
      child: alice,
      parent: tenant,
      limit: "r",
      get ratio() {
        return ratio.value as number;
      },
    } as QuotaLink;
    expect(engine.addLink(link)).toEqual({ ok: true });
    expect(engine.chain(alice, "r", 2).map((c) => c.cost)).toEqual([2, 2]);
    expect(ratio.reads).toBe(1);
  });

  it("an engine policy getter is read once", () => {
    const maxKeys = twoFaced(2, 0);
    const engine = new QuotaEngine({
      get maxKeys() {
        return maxKeys.value as number;
      },
    });
    expect([engine.policy.maxKeys, maxKeys.reads]).toEqual([2, 1]);
  });
});
