// The guard's hedges: when one starts, which answer wins, what a hedge spends of the retry budget
// and what a round where all fail answers; on a simulated scheduler at clocks near 0 and near
// Date.now().
import { describe, expect, it } from "vitest";
import { RetryBudget } from "@tideward/backoff";
import { guard } from "@tideward/guard";
import type { HedgeEvent, OutcomeEvent, RefuseEvent } from "@tideward/guard";
import { simulated } from "./scheduler";
import { deferred, outcome } from "./support/promises";
import { STARTS } from "./support/clocks";

describe.each(STARTS)("guard with the clock at %d", (t0) => {
  const sim = () => simulated(t0);

  it("a hedge starts after its delay, the first good answer wins, the loser is aborted and its result discarded", async () => {
    const { s, base } = sim();
    const answers = [deferred<string>(), deferred<string>()];
    const signals: AbortSignal[] = [];
    const hedges: HedgeEvent[] = [];
    const discarded: string[] = [];
    const outcomes: OutcomeEvent[] = [];
    const g = guard(
      (a) => {
        signals.push(a.signal);
        return answers[a.attempt - 1].promise;
      },
      {
        ...base,
        hedge: { delay: 50 },
        discard: (r) => void discarded.push(r),
        onHedge: (e) => void hedges.push(e),
        onOutcome: (o) => void outcomes.push(o),
      },
    );
    const p = g();
    await s.advance(50);
    expect(hedges).toEqual([{ attempt: 2, inFlight: 2, elapsed: 50 }]);
    answers[1].resolve("second");
    expect(await p).toBe("second");
    expect(signals[0].aborted).toBe(true);
    expect(signals[1].aborted).toBe(false);
    answers[0].resolve("first, late");
    await s.run();
    expect(discarded).toEqual(["first, late"]);
    expect(outcomes.map((o) => [o.attempt, o.hedge, o.outcome])).toEqual([
      [2, true, "success"],
      [1, false, "cancelled"],
    ]);
    expect(s.pending).toBe(0);
  });

  it("hedges spend the retry budget; with it spent, no hedge starts and the first attempt answers", async () => {
    const { s, base } = sim();
    const budget = new RetryBudget({ ratio: 0, minPerSecond: 0.1, window: 10_000 }, t0); // one retry
    let calls = 0;
    const refused: RefuseEvent[] = [];
    const g = guard(
      (a) => {
        calls++;
        return new Promise<number>((resolve) => s.set(() => resolve(a.attempt), 100));
      },
      { ...base, budget, hedge: { delay: 10, max: 3 }, onRefuse: (e) => void refused.push(e) },
    );
    const first = g();
    await s.run();
    expect(await first).toBe(1); // the first attempt answered at 100, before its hedge's answer at 110
    expect(calls).toBe(2); // one hedge, then the budget refused the next
    expect(refused.map((r) => r.kind)).toEqual(["budget"]);
    const second = g();
    await s.run();
    expect(await second).toBe(1);
    expect(calls).toBe(3); // no credit left: no hedge at all
  });

  it("a failed attempt starts the next hedge at once, and a round where all fail answers the last failure", async () => {
    const { s, base } = sim();
    const at: number[] = [];
    const g = guard(
      (a) => {
        at.push(s.now() - t0);
        return Promise.reject(new Error(`fail ${a.attempt}`));
      },
      { ...base, hedge: { delay: 1_000, max: 2 }, budget: false },
    );
    const p = outcome(g());
    await s.run();
    expect(((await p).error as Error).message).toBe("fail 3");
    expect(at).toEqual([0, 0, 0]);
  });
});
