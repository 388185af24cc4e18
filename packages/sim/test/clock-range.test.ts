// Every instant a run reaches lies within ±2^44 ms of the epoch: its start and end within ±2^43,
// and whatever it waits for after them (an answer, a timer, a retry, a dip's edge) at most one
// more range past. An option that would take an event further is refused, named, rather than
// run to report times around 1e300.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Jitter } from "@tideward/backoff";
import { latency, simulate, traffic } from "@tideward/sim";
import type { SimulationOptions } from "@tideward/sim";
import { STARTS } from "./helpers";

const LIMIT = 2 ** 44;
const base = { duration: 5_000, traffic: traffic.constant({ rate: 10 }) };

describe.each(STARTS)("instants past ±2^44 ms (start %s)", (start) => {
  // Far past, and just past: the first call (at the start) would wait until 1 000 ms beyond the bound.
  const past = LIMIT - start + 1_000;
  it.each<[string, number, (far: number) => Partial<SimulationOptions>, RegExp]>([
    [
      "a dip's end",
      1e300,
      (far) => ({ backend: { workers: 2, dips: [{ from: 1_000, to: far, workers: 0 }] } }),
      /^backend dips\[0\] to \(ms\) must lie within 17592186044416 ms \(2\^44\)/,
    ],
    [
      "a dip's latency factor",
      1e300,
      (far) => ({ backend: { workers: 2, dips: [{ from: 0, to: 2_000, latency: far }] } }),
      /^simulate backend overload slowdown or dips latency: a service of 10 ms stretched by 1e\+300/,
    ],
    [
      "a request leg",
      1e300,
      (far) => ({ network: { request: far } }),
      /^simulate network request: a leg of 1e\+300 ms/,
    ],
    [
      "a response leg",
      past,
      (far) => ({ network: { response: far } }),
      /^simulate network response: a leg of \d+(\.\d+)? ms/,
    ],
    ["a backend latency", past, (far) => ({ backend: { latency: far } }), /^simulate backend latency: a service of/],
    [
      "a failure's latency",
      1e300,
      (far) => ({ backend: { failures: 1, failLatency: latency.fixed(far) } }),
      /^simulate backend failLatency: /,
    ],
    [
      "a contention window",
      past,
      (far) => ({ backend: { contention: { window: far } } }),
      /^simulate backend contention window: /,
    ],
    [
      "a timeout",
      1e300,
      (far) => ({ backend: { latency: 1 }, client: { timeout: far } }),
      /^simulate client timeout: a wait of 1e\+300 ms/,
    ],
    ["a deadline", past, (far) => ({ client: { deadline: far } }), /^simulate client deadline: /],
    ["a hedge", past, (far) => ({ client: { hedge: { after: far } } }), /^simulate client hedge after: /],
    [
      "a retry's wait",
      past,
      (far) => ({
        backend: { failures: 1 },
        client: { retry: { backoff: { base: far, cap: far, jitter: Jitter.rigid } } },
      }),
      /^simulate client retry backoff: a wait of/,
    ],
    [
      "a policy's delay",
      past,
      (far) => ({
        policies: [
          {
            name: "slow",
            create: () => ({
              name: "slow",
              side: "client",
              reason: "slow",
              admit: () => true,
              settle: () => {},
              delay: far,
            }),
          },
        ],
      }),
      /^simulate policies delay: a delay of/,
    ],
  ])("%s is refused, naming the option", (_, far, options, expected) => {
    expect(() => simulate({ ...base, start, ...options(far) })).toThrow(expected);
  });

  it("a wait that ends within the range runs, and its times are reported", () => {
    const within = LIMIT - start - 10_000;
    const r = simulate({ ...base, start, network: { response: within } });
    expect(r.summary.completed).toBe(r.summary.calls);
    expect(r.summary.completionTime as number).toBeGreaterThanOrEqual(within);
    expect(start + (r.summary.completionTime as number)).toBeLessThanOrEqual(LIMIT);
  });

  it("whatever the waits, a run either stays within the range or names what left it", () => {
    const wait = fc.oneof(fc.constant(0), fc.double({ min: 1, max: 1e20, noNaN: true }));
    fc.assert(
      fc.property(wait, wait, wait, fc.double({ min: 1, max: 1e15, noNaN: true }), (leg, service, timeout, factor) => {
        let r;
        try {
          r = simulate({
            start,
            duration: 1_000,
            traffic: traffic.constant({ rate: 5 }),
            network: { request: leg },
            backend: { latency: service, workers: 1, dips: [{ from: 0, to: 500, latency: factor }] },
            client: {
              timeout: timeout === 0 ? undefined : timeout,
              retry: { backoff: { attempts: 2, base: leg + 1, cap: leg + 1 } },
            },
          });
        } catch (e) {
          expect((e as Error).message).toMatch(
            /^simulate (network request|backend latency|backend overload slowdown or dips latency|client timeout|client retry backoff): .* past ±17592186044416 ms \(2\^44\)/,
          );
          return;
        }
        expect(start + (r.summary.completionTime ?? 0)).toBeLessThanOrEqual(LIMIT);
        expect(r.summary.latency.max ?? 0).toBeLessThanOrEqual(LIMIT);
      }),
      { numRuns: 200 },
    );
  });
});
