// An option given as null is refused by name, not taken for its default; left out, it takes its
// default.
import { describe, expect, it } from "vitest";
import {
  Simulator,
  backends,
  failures,
  keys,
  latency,
  policy,
  quotaBursts,
  simulate,
  sweep,
  traffic,
} from "@tideward/sim";
import { apiLimit } from "./helpers";

describe("an option given as null is refused by name, not taken for its default", () => {
  const tr = traffic.constant({ rate: 10 });
  it.each<[string, () => unknown, string, string]>([
    [
      "shaped label",
      () => traffic.shaped({ rate: () => 1, peak: 1, label: null as never }),
      "TypeError",
      "traffic.shaped label must be text, got null",
    ],
    [
      "daily amplitude",
      () => traffic.daily({ mean: 1, amplitude: null as never }),
      "TypeError",
      "traffic.daily amplitude must be a number, got object null",
    ],
    [
      "constant keys",
      () => traffic.constant({ rate: 1, keys: null as never }),
      "TypeError",
      "traffic.constant keys must be a key model (keys.single, keys.uniform, keys.zipf), got null",
    ],
    [
      "constant at",
      () => traffic.constant({ rate: 1, at: null as never }),
      "TypeError",
      "traffic.constant at (ms) must be a number, got object null",
    ],
    [
      "gate side",
      () => policy.gate(1, { side: null as never }),
      "TypeError",
      'policy.gate side must be "client" or "server", got null',
    ],
    [
      "classic threshold",
      () => policy.classicBreaker({ threshold: null as never }),
      "TypeError",
      "classicBreaker threshold must be a number, got object null",
    ],
    [
      "sampling minimumRps",
      () => policy.samplingBreaker({ minimumRps: null as never }),
      "TypeError",
      "samplingBreaker minimumRps must be a number, got object null",
    ],
    [
      "quota kind",
      () => policy.quota({ dimensions: [{ ...apiLimit[0], kind: null as never }] }),
      "TypeError",
      'policy.quota dimensions[0] kind must be "bucket", "window" or "gcra", got null',
    ],
    [
      "quota units",
      () => policy.quota({ dimensions: [{ ...apiLimit[0], units: null as never }] }),
      "TypeError",
      'policy.quota dimensions[0] units must be "calls" or "cost", got null',
    ],
    [
      "quota label",
      () => policy.quota({ dimensions: [{ ...apiLimit[0], label: null as never }] }),
      "TypeError",
      "policy.quota dimensions[0] label must be text, got null",
    ],
    [
      "quota label 5",
      () => policy.quota({ dimensions: [{ ...apiLimit[0], label: 5 as never }] }),
      "TypeError",
      "policy.quota dimensions[0] label must be text, got 5",
    ],
    [
      "quota mode",
      () => policy.quota({ dimensions: apiLimit, mode: null as never }),
      "TypeError",
      'policy.quota mode must be "atomic" or "sequential", got null',
    ],
    [
      "quota onError",
      () => policy.quota({ dimensions: apiLimit, onError: null as never }),
      "TypeError",
      'policy.quota onError must be "open", "closed" or "local", got null',
    ],
    [
      "quota store",
      () => policy.quota({ dimensions: apiLimit, store: null as never }),
      "TypeError",
      "policy.quota store must be a function making a fresh store, got null",
    ],
    [
      "quota faults timeout",
      () => policy.quota({ dimensions: apiLimit, faults: { timeout: null as never } }),
      "TypeError",
      "policy.quota faults timeout (ms) must be a number, got object null",
    ],
    [
      "quota faults skew",
      () => policy.quota({ dimensions: apiLimit, faults: { skew: null as never } }),
      "TypeError",
      "policy.quota faults skew must be an array of clock offsets (ms), one per instance, got null",
    ],
    [
      "opossum resetTimeout",
      () => policy.opossumBreaker({ resetTimeout: null as never }),
      "TypeError",
      "opossumBreaker resetTimeout (ms) must be a number, got object null",
    ],
    [
      "simulate seed",
      () => simulate({ duration: 10, traffic: tr, seed: null as never }),
      "TypeError",
      "simulate seed must be a number, got object null",
    ],
    [
      "simulate start",
      () => simulate({ duration: 10, traffic: tr, start: null as never }),
      "TypeError",
      "simulate start (ms) must be a number, got object null",
    ],
    [
      "simulate policies",
      () => simulate({ duration: 10, traffic: tr, policies: null as never }),
      "TypeError",
      "simulate policies must be an array of policies, got null",
    ],
    [
      "simulate hedge max",
      () => simulate({ duration: 10, traffic: tr, client: { hedge: { after: 1, max: null as never } } }),
      "TypeError",
      "simulate client hedge max must be a number, got object null",
    ],
    [
      "simulate retry backoff",
      () => simulate({ duration: 10, traffic: tr, client: { retry: { backoff: null as never } } }),
      "TypeError",
      "simulate client retry backoff must be a Backoff or its fields, got null",
    ],
    [
      "metastable capacity",
      () => backends.metastable({ capacity: null as never }),
      "TypeError",
      "backends.metastable capacity (calls per second) must be a number, got object null",
    ],
    [
      "metastable trigger",
      () => backends.metastable({ trigger: null as never }),
      "TypeError",
      "backends.metastable trigger must be a dip such as { from: 20000, to: 30000, latency: 2 }, got null",
    ],
    [
      "metastable abandoned",
      () => backends.metastable({ abandoned: null as never }),
      "TypeError",
      'backends.metastable abandoned must be "serve" or "drop", got null',
    ],
    [
      "outage rate",
      () => failures.outage({ from: 0, to: 1, rate: null as never }),
      "TypeError",
      "failures.outage rate must be a number, got object null",
    ],
    [
      "outage base",
      () => failures.outage({ from: 0, to: 1, base: null as never }),
      "TypeError",
      "failures.outage base must be a number, got object null",
    ],
    [
      "logNormal sigma",
      () => latency.logNormal({ median: 1, sigma: null as never }),
      "TypeError",
      "logNormal sigma must be a number, got object null",
    ],
    [
      "bimodal share",
      () => latency.bimodal({ fast: latency.fixed(1), slow: latency.fixed(2), share: null as never }),
      "TypeError",
      "bimodal share must be a number, got object null",
    ],
    [
      "zipf exponent",
      () => keys.zipf({ count: 2, exponent: null as never }),
      "TypeError",
      "keys.zipf exponent must be a number, got object null",
    ],
    [
      "replay at",
      () => traffic.replay([], { at: null as never }),
      "TypeError",
      "traffic.replay at (ms) must be a number, got object null",
    ],
    [
      "backend failures",
      () => simulate({ duration: 10, traffic: tr, backend: { failures: null as never } }),
      "TypeError",
      "backend failures must be a share in [0, 1] or a failure schedule, got null",
    ],
    [
      "backend abandoned",
      () => simulate({ duration: 10, traffic: tr, backend: { abandoned: null as never } }),
      "TypeError",
      'backend abandoned must be "serve" or "drop", got null',
    ],
    [
      "backend latency",
      () => simulate({ duration: 10, traffic: tr, backend: { latency: null as never } }),
      "TypeError",
      "backend latency (ms) must be a number or a distribution (fixed, uniform, exponential, logNormal, normal, bimodal), got null",
    ],
    [
      "backend cpuSmoothing",
      () => simulate({ duration: 10, traffic: tr, backend: { cpuSmoothing: null as never } }),
      "TypeError",
      "backend cpuSmoothing (ms) must be a number, got object null",
    ],
    [
      "backend overload slowdown",
      () => simulate({ duration: 10, traffic: tr, backend: { workers: 1, overload: { slowdown: null as never } } }),
      "TypeError",
      "backend overload slowdown must be a number, got object null",
    ],
    [
      "backend dips latency",
      () =>
        simulate({
          duration: 10,
          traffic: tr,
          backend: { workers: 1, dips: [{ from: 0, to: 1, latency: null as never }] },
        }),
      "TypeError",
      "backend dips[0] latency (a factor) must be a number, got object null",
    ],
    [
      "scenario start",
      () => quotaBursts.run({}, { start: null as never }),
      "TypeError",
      "scenario quota-bursts start (ms) must be a number, got object null",
    ],
    [
      "sweep steps",
      () => sweep(quotaBursts, "bursts", { steps: null as never }),
      "TypeError",
      "sweep steps must be a number, got object null",
    ],
    [
      "Simulator seed",
      () => new Simulator({ seed: null as never }),
      "TypeError",
      "Simulator seed must be a number, got object null",
    ],
    [
      "herd spread",
      () => traffic.herd({ clients: 1, spread: null as never }),
      "TypeError",
      "traffic.herd spread (ms) must be a number, got object null",
    ],
  ])("%s", (_, act, type, message) => {
    let thrown: unknown;
    try {
      act();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(type === "TypeError" ? TypeError : RangeError);
    expect((thrown as Error).message).toBe(message);
  });

  it("left out, each takes its default as before", () => {
    const r = simulate({ duration: 1_000, traffic: traffic.constant({ rate: 10 }), backend: backends.metastable({}) });
    expect(r.summary.calls).toBe(10);
    expect(policy.quota({ dimensions: apiLimit }).name).toBe("quota");
    expect(failures.outage({ from: 0, to: 1 }).windows[0].rate).toBe(1);
  });
});
