// The contention backend (one resource under optimistic concurrency control) and the figures of
// a finite job: its completion time, with retries bounded by a deadline rather than a count.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Jitter } from "@tideward/backoff";
import { backends, latency, simulate, traffic } from "@tideward/sim";
import type { PolicySpec, SimulationOptions } from "@tideward/sim";
import { STARTS } from "./helpers";

/** A server-side policy noting, in the order the run makes them, each attempt's read (admission) and write (settle). */
function witness(): { spec: PolicySpec; log: { step: number; read: number; write: number; ok: boolean }[] } {
  const log: { step: number; read: number; write: number; ok: boolean }[] = [];
  let step = 0;
  const spec: PolicySpec = {
    name: "witness",
    create: () => ({
      name: "witness",
      side: "server",
      reason: "witness",
      admit: () => ({ read: step++ }),
      settle: (token, _now, ok) =>
        void log.push({ step: step, read: (token as { read: number }).read, write: step++, ok }),
    }),
  };
  return { spec, log };
}

/** N clients calling at once and retrying until they succeed, as in Brooker's study. */
function study(start: number, clients: number, jitter: Jitter | undefined, seed = 1): SimulationOptions {
  return {
    start,
    seed,
    duration: 1,
    step: 1,
    traffic: traffic.herd({ clients }),
    network: { request: backends.brookerLeg, response: backends.brookerLeg },
    backend: backends.contention(),
    client: {
      deadline: 3_600_000,
      retry: {
        attempts: Infinity,
        backoff: jitter === undefined ? { base: 0, cap: 0, jitter: Jitter.rigid } : { base: 10, cap: 2_000, jitter },
      },
    },
  };
}

describe.each(STARTS)("contention (start %s)", (start) => {
  it("a write fails exactly when another write succeeded between its read and itself", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 30 }), fc.integer({ min: 1, max: 1_000 }), (clients, seed) => {
        const w = witness();
        const r = simulate({ ...study(start, clients, Jitter.full, seed), policies: [w.spec] });
        // Every client got its write in once, and the deadline was never met.
        expect(r.summary.goodput).toBe(clients);
        expect(w.log.filter((x) => x.ok)).toHaveLength(clients);
        const commits = w.log.filter((x) => x.ok).map((x) => x.write);
        for (const x of w.log) {
          const between = commits.filter((c) => c > x.read && c < x.write).length;
          expect([x.ok, between > 0]).toEqual([between === 0, !x.ok]);
        }
      }),
      { numRuns: 25 },
    );
  });

  it("one client never conflicts; its job takes its request leg, window and response leg", () => {
    const r = simulate({
      ...study(start, 1, Jitter.full),
      network: { request: 7, response: 5 },
      backend: { contention: { window: 20 } },
    });
    expect(r.summary.attempts).toBe(1);
    expect(r.summary.completionTime).toBe(32);
    expect(r.summary.latency.max).toBe(32);
  });

  it("without jitter, exponential backoff costs more calls and far more time than full jitter", () => {
    const run = (jitter: Jitter | undefined) => {
      let calls = 0;
      let time = 0;
      for (const seed of [1, 2, 3, 4, 5]) {
        const s = simulate(study(start, 20, jitter, seed)).summary;
        calls += s.backendLoad;
        time += s.completionTime as number;
      }
      return { calls, time };
    };
    const rigid = run(Jitter.rigid);
    const full = run(Jitter.full);
    const none = run(undefined);
    expect(rigid.calls).toBeGreaterThan(1.2 * full.calls);
    expect(rigid.time).toBeGreaterThan(5 * full.time);
    // No backoff at all finishes soonest and wastes the most: N clients, N − 1 losers each round.
    expect(none.calls).toBeGreaterThan(full.calls);
    expect(none.time).toBeLessThan(full.time);
  });

  it("is deterministic by seed", () => {
    const a = simulate(study(start, 15, Jitter.decorrelated, 3));
    const b = simulate(study(start, 15, Jitter.decorrelated, 3));
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(simulate(study(start, 15, Jitter.decorrelated, 4)).summary.hash).not.toBe(a.summary.hash);
  });
});

describe.each(STARTS)("a caller's deadline, and retries bounded by it (start %s)", (start) => {
  it("retries until the deadline and no later: no attempt starts at or after it", () => {
    const sent: number[] = [];
    const r = simulate({
      start,
      duration: 1,
      step: 1,
      traffic: traffic.herd({ clients: 1 }),
      backend: { latency: 10, failures: 1 },
      client: { deadline: 1_000, retry: { attempts: Infinity, backoff: { base: 50, cap: 50, jitter: Jitter.rigid } } },
      policies: [
        {
          name: "sent",
          create: () => ({
            name: "sent",
            side: "client",
            reason: "sent",
            admit: (now) => sent.push(now - start) > 0,
            settle: () => {},
          }),
        },
      ],
    });
    // An attempt every 60 ms (10 of work, 50 of waiting): 0, 60, …, 960; the next would start at 1 020.
    expect(sent).toEqual(Array.from({ length: 17 }, (_, i) => i * 60));
    expect(r.summary).toMatchObject({ calls: 1, attempts: 17, gaveUp: 1, goodput: 0, completionTime: 970 });
  });

  it("stops waiting at the deadline: a slower answer is a timeout, never goodput", () => {
    const r = simulate({
      start,
      duration: 10_000,
      traffic: traffic.poisson({ rate: 100 }),
      backend: { latency: latency.exponential(50) },
      client: { deadline: 50 },
    });
    const s = r.summary;
    expect(s.latency.max as number).toBeLessThanOrEqual(50);
    expect(s.goodput).toBe(s.completed);
    expect(s.timedOut).toBe(s.gaveUp);
    // About e^(−1) of the answers take longer than the mean.
    expect(s.gaveUp / s.calls).toBeGreaterThan(0.3);
    expect(s.gaveUp / s.calls).toBeLessThan(0.45);
    // The series count what ended within the run's duration; the totals, the drain's too.
    const series = r.series.goodput.reduce((a, b) => a + b, 0);
    expect(series).toBeLessThanOrEqual(s.goodput);
    expect(series).toBeGreaterThan(s.goodput - 10);
    // The backend finished every abandoned call for nobody.
    expect(s.wasted).toBe(s.gaveUp);
  });

  it("goodput is at most the calls completed, and those at most the attempts that succeeded", () => {
    fc.assert(
      fc.property(
        fc.record({
          rate: fc.integer({ min: 10, max: 400 }),
          deadline: fc.integer({ min: 5, max: 2_000 }),
          timeout: fc.integer({ min: 5, max: 500 }),
          failures: fc.double({ min: 0, max: 0.6, noNaN: true }),
          request: fc.integer({ min: 0, max: 30 }),
          seed: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        }),
        (p) => {
          const r = simulate({
            start,
            seed: p.seed,
            duration: 5_000,
            traffic: traffic.poisson({ rate: p.rate }),
            network: { request: latency.exponential(p.request), response: latency.exponential(p.request) },
            backend: backends.metastable({ capacity: 200, trigger: { from: 1_000, to: 2_000, latency: 3 } }),
            client: { timeout: p.timeout, deadline: p.deadline, retry: { backoff: { attempts: 3, base: 20 } } },
          });
          const s = r.summary;
          expect(s.goodput).toBeLessThanOrEqual(s.completed);
          expect(s.completed).toBeLessThanOrEqual(s.succeeded);
          expect(s.completed + s.gaveUp + s.unfinished).toBe(s.calls);
          expect(r.series.goodput.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(s.goodput);
        },
      ),
      { numRuns: 20 },
    );
  });

  it("refuses unbounded attempts without a deadline to bound them", () => {
    expect(() =>
      simulate({
        duration: 10,
        traffic: traffic.constant({ rate: 1 }),
        client: { retry: { attempts: Infinity } },
      }),
    ).toThrow(
      "simulate client retry attempts Infinity needs a client deadline to bound it (for a job that must finish, a long one)",
    );
    expect(() =>
      simulate({ duration: 10, traffic: traffic.constant({ rate: 1 }), client: { retry: { attempts: 0 } } }),
    ).toThrow("simulate client retry attempts must be 1 or more, got 0");
  });

  it("refuses a finite count of attempts too large to finish with nothing else to end the run", () => {
    const failing = (client: object, drain?: number) => () =>
      simulate({
        duration: 1_000,
        traffic: traffic.constant({ rate: 10 }),
        backend: { failures: 1 },
        client,
        ...(drain === undefined ? {} : { drain }),
      });
    expect(failing({ retry: { attempts: 1e12, backoff: { cap: 1_000 } } })).toThrow(
      new RangeError(
        "simulate client retry attempts must be at most 10 000 without a client deadline or a finite drain to end the run (a call that keeps failing makes every one), got 1 000 000 000 000",
      ),
    );
    expect(failing({ retry: { backoff: { attempts: 1e12 } } })).toThrow(
      /^simulate client retry backoff attempts must be at most 10 000 without /,
    );
    // A deadline or a drain ends the run, whatever the count.
    const timed = failing({ deadline: 2_000, retry: { attempts: 1e12, backoff: { base: 100, cap: 100 } } })();
    expect(timed.summary.gaveUp).toBe(10);
    expect(failing({ retry: { attempts: 1e12, backoff: { cap: 1_000 } } }, 5_000)().summary.calls).toBe(10);
    // The largest count allowed alone still finishes: each failing call makes every attempt.
    const most = failing({ retry: { attempts: 10_000, backoff: { base: 1, cap: 1, jitter: Jitter.rigid } } })();
    expect(most.summary.attempts).toBe(100_000);
  });
});
