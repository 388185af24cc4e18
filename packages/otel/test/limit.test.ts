// The concurrency limit in otel, on the real SDK: the limit and the calls in flight as gauges, and
// refusals by reason and by priority, for an instrumented guard and an instrumented admission.
import { FixedLimit, Limiter, Queue, criticality } from "@tideward/concurrency";
import type { Verdict } from "@tideward/guard";
import { ManualClock } from "@tideward/time";
import { describe, expect, it } from "vitest";
import { instrumentAdmit, instrumentGuard } from "../src/index";
import { metricsSdk } from "./support/sdk";

const STARTS = [0, 1_700_000_000_000.37];

describe.each(STARTS)("a concurrency limit in otel, clock at %d", (t0) => {
  it("instrumentGuard: the limit and in-flight gauges, and refusals by reason and the guard's priority", async () => {
    const sdk = metricsSdk();
    const clock = new ManualClock(t0);
    const limiter = new Limiter(new FixedLimit(5), { now: t0, priorities: criticality });
    let open!: () => void;
    const door = new Promise<void>((resolve) => (open = resolve));
    const options = { limit: limiter, priority: "sheddable", clock: clock.now };
    const prefetch = instrumentGuard(() => door.then(() => "ok"), options, { meter: sdk.meter, name: "prefetch" });
    const calls = Array.from({ length: 4 }, () => prefetch().catch((e: unknown) => (e as { kind: string }).kind));
    let m = await sdk.collect();
    expect(m.points("tideward.concurrency.limit", { "tideward.name": "prefetch" }).map((p) => p.value)).toEqual([5]);
    expect(m.points("tideward.concurrency.in_flight", { "tideward.name": "prefetch" }).map((p) => p.value)).toEqual([
      3,
    ]);
    expect(
      m
        .points("tideward.guard.refusals")
        .map((p) => [p.attributes["tideward.refusal.kind"], p.attributes["tideward.priority"], p.value]),
    ).toEqual([["reserved", "sheddable", 1]]);
    open();
    expect(await Promise.all(calls)).toEqual(["ok", "ok", "ok", "reserved"]);
    m = await sdk.collect();
    expect(m.sum("tideward.concurrency.in_flight")).toBe(0);
    prefetch.close();
    await sdk.shutdown();
  });

  it("instrumentGuard with a priority function: each refusal carries the level its call was judged at", async () => {
    const sdk = metricsSdk();
    const clock = new ManualClock(t0);
    const limiter = new Limiter(new FixedLimit(5), { now: t0, priorities: criticality });
    let open!: () => void;
    const door = new Promise<void>((resolve) => (open = resolve));
    const get = instrumentGuard(
      (_a, _purpose: string) => door.then(() => "ok"),
      {
        limit: limiter,
        clock: clock.now,
        // An unknown answer is the least important level; none, the priorities' fallback.
        priority: (purpose) => (purpose === "user" ? 0 : purpose === "none" ? undefined : purpose),
      },
      { meter: sdk.meter, name: "mixed" },
    );
    const purposes = ["prefetch", "prefetch", "prefetch", "prefetch", "none", "none", "user", "user"];
    const calls = purposes.map((p) => get(p).catch((e: unknown) => (e as { kind: string }).kind));
    const m = await sdk.collect();
    expect(
      m
        .points("tideward.guard.refusals")
        .map((p) => [p.attributes["tideward.refusal.kind"], p.attributes["tideward.priority"], p.value]),
    ).toEqual([
      ["reserved", "sheddable", 1],
      ["reserved", "critical", 1],
      ["limit", "critical_plus", 1],
    ]);
    open();
    expect(await Promise.all(calls)).toEqual(["ok", "ok", "ok", "reserved", "ok", "reserved", "ok", "limit"]);
    get.close();
    await sdk.shutdown();
  });

  it("instrumentAdmit: verdicts by status, reason and level (a priority that is not a level reads as the least important)", async () => {
    const sdk = metricsSdk();
    const limiter = new Limiter(new FixedLimit(10), { now: t0, priorities: criticality });
    const a = instrumentAdmit({ limit: limiter, clock: () => t0 }, { meter: sdk.meter, name: "web" });
    expect(a.limit).toBe(limiter);
    const verdicts: Verdict[] = [];
    for (let i = 0; i < 7; i++) verdicts.push(a.check("", 1, "sheddable") as Verdict);
    verdicts.push(a.check("", 1, "vip") as Verdict);
    for (let i = 0; i < 5; i++) verdicts.push(a.check("", 1, 0) as Verdict);
    const m = await sdk.collect();
    const rows = m
      .points("tideward.admit.verdicts")
      .map((p) => [
        p.attributes["http.response.status_code"],
        p.attributes["tideward.refusal.kind"],
        p.attributes["tideward.priority"],
        p.value,
      ])
      .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
    expect(rows).toEqual([
      [200, undefined, "critical_plus", 4],
      [200, undefined, "sheddable", 6],
      [503, "limit", "critical_plus", 1],
      [503, "reserved", "sheddable", 2],
    ]);
    expect(m.points("tideward.concurrency.limit").map((p) => p.value)).toEqual([10]);
    expect(m.points("tideward.concurrency.in_flight").map((p) => p.value)).toEqual([10]);
    for (const v of verdicts) v.release();
    expect(limiter.flying).toBe(0);
    a.close();
    await sdk.shutdown();
  });

  it("instrumentAdmit with a wait: a served waiter counts once, a wait its caller abandoned not at all", async () => {
    const sdk = metricsSdk();
    const clock = new ManualClock(t0);
    const limiter = new Limiter(new FixedLimit(1), { now: t0 });
    const a = instrumentAdmit(
      { limit: limiter, wait: new Queue({ interval: 1_000 }, { now: t0 }), clock: clock.now },
      { meter: sdk.meter, name: "web" },
    );
    expect(a.waits).toBe(true);
    const first = a.check() as Verdict;
    const served = a.check() as Promise<Verdict>;
    const controller = new AbortController();
    const abandoned = (a.check("", 1, undefined, controller.signal) as Promise<Verdict>).catch((e: unknown) => e);
    expect(a.waiting).toBe(2);
    controller.abort(new Error("client left"));
    expect(((await abandoned) as Error).message).toBe("client left");
    first.release();
    (await served).release();
    const m = await sdk.collect();
    expect(
      m.points("tideward.admit.verdicts").map((p) => [p.attributes["http.response.status_code"], p.value]),
    ).toEqual([[200, 2]]);
    expect([a.waiting, limiter.flying]).toEqual([0, 0]);
    a.close();
    await sdk.shutdown();
  });
});

describe("priorities in otel are bounded by the levels", () => {
  it("a hundred thousand distinct priorities make no more verdict rows than levels and answers", async () => {
    const sdk = metricsSdk();
    const limiter = new Limiter(new FixedLimit(50), { priorities: criticality });
    const a = instrumentAdmit({ limit: limiter, clock: () => 0 }, { meter: sdk.meter, name: "web" });
    for (let i = 0; i < 100_000; i++) {
      const v = a.check("", 1, i % 3 === 0 ? `p${i}` : i % 3 === 1 ? i + 0.5 : -i) as Verdict;
      if (v.allowed && i % 2 === 0) v.release();
    }
    const m = await sdk.collect();
    // Every one of them is the least important level: admitted, or refused as reserved.
    expect(m.values("tideward.admit.verdicts", "tideward.priority")).toEqual(["sheddable"]);
    expect(m.points("tideward.admit.verdicts").length).toBeLessThanOrEqual(2);
    a.close();
    await sdk.shutdown();
  });
});
