// policy.stage: any stage of the guard's pipeline as a policy, with no code of its own — here the
// adaptive concurrency limit, which the guard and admit gained as one stage module — built anew
// for each run, at clocks near 0 and near Date.now().
import { describe, expect, it } from "vitest";
import { AimdLimit, FixedLimit, Limiter, Priorities } from "@tideward/concurrency";
import { QuotaEngine, QuotaKey, charge, perSecond } from "@tideward/quota-engine";
import { keys, latency, policy, simulate, traffic } from "@tideward/sim";
import type { Adapter, PolicyContext, PolicySpec } from "@tideward/sim";

function context(start: number): PolicyContext {
  return { start, random: () => 0.5, keys: 1, keyName: String, cpu: () => 0 };
}

describe.each([0, 1_700_000_000_000.375])("policy.stage, the clock at %d", (t0) => {
  it("runs the concurrency limit stage: a place a call until it settles or is released", () => {
    const a = policy.stage("limit", () => ({ limit: new Limiter(new FixedLimit(2)) })).create(context(t0));
    expect(a.side).toBe("server");
    const first = a.admit(t0, 0, 1);
    const second = a.admit(t0 + 1, 0, 1);
    expect(first).not.toBeUndefined();
    expect(second).not.toBeUndefined();
    expect(a.admit(t0 + 2, 0, 1)).toBeUndefined();
    expect(a.stats?.()).toEqual({ "tideward.concurrency.limit": 2, "tideward.concurrency.in_flight": 2 });
    a.settle(first, t0 + 3, true);
    a.release?.(second, t0 + 3);
    expect(a.stats?.()["tideward.concurrency.in_flight"]).toBe(0);
    expect(a.admit(t0 + 4, 0, 1)).not.toBeUndefined();
  });

  it("refuses in a run past its limit, a fresh limiter each run, the same run for the same seed", () => {
    let made = 0;
    const limit = policy.stage("limit", () => {
      made++;
      return { limit: new Limiter(new FixedLimit(3)) };
    });
    const run = () =>
      simulate({
        start: t0,
        seed: 5,
        duration: 5_000,
        traffic: traffic.poisson({ rate: 100 }),
        backend: { latency: latency.fixed(50) },
        policies: [limit],
      });
    const r = run();
    // About five calls in flight at once against three places.
    expect(r.summary.refusedBy.limit).toBeGreaterThan(50);
    expect(r.summary.admitted).toBeGreaterThan(200);
    expect(r.policies[0].stats).toEqual({ "tideward.concurrency.limit": 3, "tideward.concurrency.in_flight": 0 });
    expect(run()).toEqual(r);
    expect(made).toBe(2);
  });

  // User calls at twice the rate prefetch is offered, each key's priority its traffic's.
  const mixed = traffic.merge(
    traffic.priority("user", traffic.poisson({ rate: 150, keys: keys.single("user") })),
    traffic.priority("prefetch", traffic.poisson({ rate: 300, keys: keys.single("prefetch") })),
  );
  const levels = () => new Priorities({ levels: ["user", "prefetch"], shares: [0.5, 0.5], fallback: "user" });
  const limited = (spec: PolicySpec) =>
    simulate({
      start: t0,
      seed: 3,
      duration: 5_000,
      traffic: mixed,
      backend: { latency: latency.fixed(40) },
      policies: [spec],
    });

  it("asks each call at its key's priority, and names each refusal by the limit's reason", () => {
    // Eight places, half of them kept for user calls: about eighteen calls would be in flight.
    const r = limited(
      policy.stage("limit", () => ({ limit: new Limiter(new FixedLimit(8), { priorities: levels() }) })),
    );
    const by = r.summary.byPriority ?? {};
    // Prefetch may fill only half the places: most of it is refused, as "reserved"; user calls
    // fill the rest and are refused only when every place is taken.
    expect(by.prefetch.refused / by.prefetch.calls).toBeGreaterThan(0.3);
    expect(by.prefetch.refused / by.prefetch.calls).toBeGreaterThan(2 * (by.user.refused / by.user.calls));
    expect(r.summary.refusedBy["limit/reserved"]).toBeGreaterThan(0);
    expect(Object.keys(r.summary.refusedBy).sort()).toEqual(["limit", "limit/reserved"]);
    // Named otherwise, each reason is the name's.
    const named = limited(
      policy.stage("limit", () => ({ limit: new Limiter(new FixedLimit(8), { priorities: levels() }) }), {
        name: "fixed",
      }),
    );
    expect(Object.keys(named.summary.refusedBy).sort()).toEqual(["fixed/limit", "fixed/reserved"]);
    expect(named.summary.refused).toBe(r.summary.refused);
  });

  it("hands a hand-written adapter each call's priority, and none for traffic without", () => {
    const seen = new Map<number, unknown>();
    const spy: PolicySpec = {
      name: "spy",
      create: (): Adapter => ({
        name: "spy",
        side: "server",
        reason: "spy",
        admit: (_now, key, _cost, priority) => {
          seen.set(key, priority);
          return true;
        },
        settle: () => {},
      }),
    };
    limited(spy);
    expect([...seen.entries()].sort()).toEqual([
      [0, "user"],
      [1, "prefetch"],
    ]);
    seen.clear();
    simulate({ start: t0, seed: 1, duration: 1_000, traffic: traffic.poisson({ rate: 50 }), policies: [spy] });
    expect([...seen.values()]).toEqual([undefined]);
  });

  // AIMD whose own timeout is past any round trip: it backs off only on a drop.
  const aimd = () => new Limiter(new AimdLimit({ min: 1, timeout: 60_000 }), { now: t0 });

  it("settles on the server as admit's verdict is released: a failure and a call dropped unserved teach the limit nothing", () => {
    // Twice what 4 workers of 20 ms serve, a tenth of calls failing, callers who give up after
    // 100 ms, what they gave up on dropped unserved.
    const run = (spec: PolicySpec) =>
      simulate({
        start: t0,
        seed: 5,
        duration: 10_000,
        traffic: traffic.poisson({ rate: 400 }),
        backend: { latency: 20, workers: 4, queue: 60, abandoned: "drop", failures: 0.1 },
        client: { timeout: 100 },
        policies: [spec],
      });
    const limiters: Limiter[] = [];
    const made = () => {
      limiters.push(aimd());
      return limiters[limiters.length - 1];
    };
    const staged = run(policy.stage("limit", () => ({ limit: made() })));
    const admitted = run(policy.admission({ limit: made }));
    expect(staged.summary.failed - staged.summary.timedOut).toBeGreaterThan(0);
    expect(staged.summary.dropped).toBeGreaterThan(1_000);
    expect(staged.summary.refusedBy.limit).toBeGreaterThan(0);
    // Every decision and the limit as admit's own limit made them.
    expect(staged.summary.refusedBy.limit).toBe(admitted.summary.refusedBy["admission/limit"]);
    expect(staged.series.admitted).toEqual(admitted.series.admitted);
    expect(staged.series.failed).toEqual(admitted.series.failed);
    expect(limiters[0].limit).toBe(limiters[1].limit);
    // Only successes moved it: it grew from its 20 places.
    expect(limiters[0].limit).toBeGreaterThan(20);
  });

  it("settles on the client as a guard's attempt ends: the client's timeout is a drop", () => {
    const limitAfter = (side: "client" | "server"): number => {
      const limiter = aimd();
      simulate({
        start: t0,
        seed: 5,
        duration: 5_000,
        traffic: traffic.poisson({ rate: 50 }),
        // Every call answered in 300 ms, the client giving up after 100.
        backend: { latency: 300 },
        client: { timeout: 100 },
        policies: [policy.stage("limit", () => ({ limit: limiter }), { side })],
      });
      return limiter.limit;
    };
    // Each timeout backs the client's limit off to its floor; the server's answers are successes.
    expect(limitAfter("client")).toBe(1);
    expect(limitAfter("server")).toBeGreaterThan(20);
  });

  it("tells observe of every admission, settlement and release, reading the run's own instance", () => {
    const seen: [number, boolean, number][] = [];
    let limiter: Limiter | undefined;
    const a = policy
      .stage(
        "limit",
        () => {
          limiter = new Limiter(new FixedLimit(1));
          return { limit: limiter };
        },
        { observe: (now, refused) => seen.push([now - t0, refused, limiter?.flying ?? -1]) },
      )
      .create(context(t0));
    const first = a.admit(t0 + 1, 0, 1);
    expect(a.admit(t0 + 2, 0, 1)).toBeUndefined();
    a.settle(first, t0 + 3, true);
    a.release?.(a.admit(t0 + 4, 0, 1), t0 + 5);
    expect(seen).toEqual([
      [1, false, 1],
      [2, true, 1],
      [3, false, 0],
      [4, false, 1],
      [5, false, 0],
    ]);
    expect(() => policy.stage("limit", () => ({}), { observe: 5 as never })).toThrow(
      "policy.stage observe must be a function, got number 5",
    );
  });

  it("an observer that throws stops the run, named, and the limiter keeps no place for the call", () => {
    const limiter = new Limiter(new AimdLimit({ initial: 4, min: 1 }), { now: t0 });
    let words = 0;
    const run = () =>
      simulate({
        start: t0,
        seed: 5,
        duration: 2_000,
        traffic: traffic.poisson({ rate: 100 }),
        // Answered at once, so no call is in flight but the one the observer throws on (its 7th
        // word: the 4th call's admission).
        backend: { latency: latency.fixed(0) },
        policies: [
          policy.stage("limit", () => ({ limit: limiter }), {
            observe: () => {
              if (++words === 7) throw new Error("observer broke");
            },
          }),
        ],
      });
    expect(run).toThrow(/^simulate: policy limit admit failed .*: observer broke$/);
    expect([words, limiter.flying]).toEqual([7, 0]);
  });

  it("names a kind the guard has no stage of, and a side its stage does not stand on", () => {
    expect(() => policy.stage("limits", () => ({}))).toThrow(
      /^policy\.stage kind must be one of .*"limit".*, got "limits"$/,
    );
    // Each kind once, though two stages (the bucket and the per-key limits) refuse as "rate".
    let listed: string[] = [];
    try {
      policy.stage("limits", () => ({}));
    } catch (e) {
      listed = (e as Error).message.replace(/, got .*$/, "").match(/"[a-z]+"/g) ?? [];
    }
    expect(listed).toContain('"rate"');
    expect(new Set(listed).size).toBe(listed.length);
    expect(() => policy.stage("breaker", () => ({}), { side: "server" })).toThrow(
      'policy.stage side: a stage of kind "breaker" stands on no server side',
    );
  });

  // Fifty clients of a Zipf spread, the busiest far past ten calls a second, the rest under it.
  const clients = traffic.poisson({ rate: 300, keys: keys.zipf({ count: 50, prefix: "client-" }) });
  const perClient = (spec: PolicySpec) =>
    simulate({
      start: t0,
      seed: 9,
      duration: 10_000,
      traffic: clients,
      backend: { latency: latency.fixed(20) },
      policies: [spec],
      perKey: true,
    });

  it("runs admit's per-key limits on the server side: each client's own, asked with its key's text as admit is", () => {
    const limits = [{ name: "api", quota: 10, window: 1_000 }];
    const staged = perClient(policy.stage("rate", () => ({ limits }), { side: "server" }));
    const admitted = perClient(policy.admission({ limits }));
    expect(staged.policies[0].side).toBe("server");
    expect(staged.summary.refusedBy.rate).toBeGreaterThan(0);
    expect(staged.summary.refusedBy.rate).toBe(admitted.summary.refusedBy["admission/rate"]);
    expect(staged.keys).toEqual(admitted.keys);
    expect(staged.series.admitted).toEqual(admitted.series.admitted);
    // Held to ten calls a second in all (every call under one key), it would admit about a hundred.
    expect(staged.summary.admitted).toBeGreaterThan(1_000);
    // The busiest client is held to its ten a second, plus its first burst.
    const top = staged.keys?.admitted ?? [];
    expect(Math.max(...top)).toBeLessThanOrEqual(10 * 10 + 10);
  });

  it("asks a stage driven by hand with its key's text too", () => {
    const a = policy
      .stage("rate", () => ({ limits: [{ name: "api", quota: 2, window: 1_000 }] }), { side: "server" })
      .create({ ...context(t0), keys: 2, keyName: (i) => `client-${i}` });
    expect([0, 0, 0, 1].map((key) => a.admit(t0, key, 1) !== undefined)).toEqual([true, true, false, true]);
  });

  it("runs a quota charge set whose charges name each request's key, as admit's do", () => {
    const seen = new Set<string>();
    const staged = perClient(
      policy.stage("quota", () => {
        const store = new QuotaEngine();
        store.addLimit(perSecond("user", 10));
        return {
          quota: {
            store,
            charges: (key: string, cost: number) => {
              seen.add(key);
              return [charge(new QuotaKey("acme", key, "api"), "user", cost)];
            },
          },
        };
      }),
    );
    const limited = perClient(
      policy.stage("rate", () => ({ limits: [{ name: "user", quota: 10, window: 1_000 }] }), { side: "server" }),
    );
    expect([...seen].sort()).toEqual([...(staged.keys?.names ?? [])].sort());
    expect(seen.size).toBeGreaterThan(10);
    // A bucket of ten a second per key, in the store as in the per-key limits.
    expect(staged.summary.refusedBy.quota).toBe(limited.summary.refusedBy.rate);
    expect(staged.keys).toEqual(limited.keys);
  });
});
