// Latency on both legs of a call: an attempt reaches the server a request leg after it is sent,
// and every answer — a result, a failure, a server-side refusal — comes back a response leg later.
import { describe, expect, it } from "vitest";
import { latency, policy, simulate, traffic } from "@tideward/sim";
import { STARTS, spy } from "./helpers";

const one = traffic.bursts({ size: 1, spacing: 0, every: 1, count: 1 });

describe.each(STARTS)("the network (start %s)", (start) => {
  const legs = { request: 7, response: 5 };

  it("a success is heard a request leg, the service and a response leg after it was sent", () => {
    const client = spy("client");
    const server = spy("server");
    const r = simulate({
      start,
      duration: 1,
      traffic: one,
      network: legs,
      backend: { latency: 10 },
      policies: [client.spec, server.spec],
    });
    expect(client.seen.map((s) => [s.admitted - start, s.ended - start, s.how])).toEqual([[0, 22, "ok"]]);
    expect(server.seen.map((s) => [s.admitted - start, s.ended - start, s.how])).toEqual([[7, 17, "ok"]]);
    expect(r.summary.latency.max).toBe(22);
    expect(r.summary.completionTime).toBe(22);
  });

  it("a server-side refusal is heard after the return leg; the client's places are given back then", () => {
    const client = spy("client");
    const server = spy("server", () => true);
    const r = simulate({ start, duration: 1, traffic: one, network: legs, policies: [client.spec, server.spec] });
    expect(server.refusedAt.map((t) => t - start)).toEqual([7]);
    expect(client.seen.map((s) => [s.ended - start, s.how])).toEqual([[12, "released"]]);
    expect(r.summary).toMatchObject({ refused: 1, gaveUp: 1, backendLoad: 0, completionTime: 12 });
    // A client-side refusal crosses no network.
    const local = spy("client", () => true);
    const near = simulate({ start, duration: 1, traffic: one, network: legs, policies: [local.spec] });
    expect(near.summary).toMatchObject({ refused: 1, gaveUp: 1, completionTime: 0 });
  });

  it("a full queue's refusal comes back over the response leg too", () => {
    const r = simulate({
      start,
      duration: 1,
      traffic: traffic.bursts({ size: 3, spacing: 0, every: 1, count: 1 }),
      network: legs,
      backend: { latency: 100, workers: 1, queue: 1 },
    });
    // The third call finds the worker busy and the one place in the queue taken.
    expect(r.summary).toMatchObject({ failed: 1, completed: 2, completionTime: 7 + 200 + 5 });
    expect(r.summary.latency.max).toBe(212);
  });

  it("the client's timeout counts from the send, across both legs", () => {
    const r = simulate({
      start,
      duration: 10_000,
      traffic: traffic.poisson({ rate: 100 }),
      network: legs,
      backend: { latency: latency.fixed(10) },
      client: { timeout: 22.5 },
    });
    expect(r.summary.completed).toBe(r.summary.calls);
    const late = simulate({
      start,
      duration: 10_000,
      traffic: traffic.poisson({ rate: 100 }),
      network: legs,
      backend: { latency: latency.fixed(10) },
      client: { timeout: 21.5 },
    });
    // 22 ms a call: every answer comes after the client stopped waiting, and is work for nobody.
    expect(late.summary).toMatchObject({ completed: 0, timedOut: late.summary.calls, wasted: 0 });
    expect(late.summary.backendLoad).toBe(late.summary.calls);
  });

  it("every leg is drawn afresh, and the run is the same for the same seed", () => {
    const base = {
      start,
      seed: 9,
      duration: 20_000,
      traffic: traffic.poisson({ rate: 200 }),
      network: { request: latency.exponential(5), response: latency.logNormal({ median: 4 }) },
      backend: { latency: latency.exponential(10), workers: 4 },
      client: { timeout: 60, retry: { backoff: { attempts: 3 } } },
      policies: [policy.breaker(), policy.shedder()],
    };
    const a = simulate(base);
    expect(JSON.stringify(simulate(base))).toBe(JSON.stringify(a));
    expect(simulate({ ...base, seed: 10 }).summary.hash).not.toBe(a.summary.hash);
    // The client sees the legs: its mean latency is the service's plus both legs' means (about 5 + 10 + 4.5).
    expect(a.summary.latency.mean as number).toBeGreaterThan(18);
  });
});
