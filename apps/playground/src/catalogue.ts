// The page's own scenario and its knobs (the simulator's catalogue comes whole, see
// sim-scenarios.ts); the page's own scenarios have a knob for every policy field and every
// traffic parameter, defaults the packages' presets, so an untouched page shows tideward as
// shipped. This module is all the page's own script needs; the runs live in the worker.
import type { Knob, NumberKnob, RangeKnob, Scenario, SelectKnob } from "./model.ts";

function range(
  group: string,
  key: string,
  label: string,
  min: number,
  max: number,
  step: number,
  value: number,
  unit: string,
  help?: string,
): RangeKnob {
  return { kind: "range", group, key, label, min, max, step, value, unit, ...(help === undefined ? {} : { help }) };
}

function number(
  group: string,
  key: string,
  label: string,
  min: number,
  max: number,
  step: number,
  value: number,
  unit: string,
  help?: string,
): NumberKnob {
  return { kind: "number", group, key, label, min, max, step, value, unit, ...(help === undefined ? {} : { help }) };
}

function choice(
  group: string,
  key: string,
  label: string,
  options: readonly [string, string][],
  value: string,
  help?: string,
): SelectKnob {
  return {
    kind: "select",
    group,
    key,
    label,
    options: options.map(([v, l]) => ({ value: v, label: l })),
    value,
    ...(help === undefined ? {} : { help }),
  };
}

const seed = (group = "run"): NumberKnob =>
  number(group, "seed", "Seed", 1, 2_147_483_647, 1, 1, "", "The same seed and knobs give the same run, bit for bit.");

/** The shedder's policy (`Shed`), preset values as defaults. */
const shedKnobs = (group: string): Knob[] => [
  range(group, "cpu", "cpu: hot at or above", 500, 990, 10, 900, "‰"),
  range(group, "size", "size: buckets in the window", 5, 200, 1, 50, "buckets"),
  range(group, "window", "window: how far back it looks", 1_000, 30_000, 500, 5_000, "ms"),
  range(group, "latency", "latency: assumed until measured", 10, 5_000, 10, 1_000, "ms"),
  range(group, "beta", "beta: weight of the old in-flight average", 0, 0.99, 0.01, 0.9, ""),
  range(group, "cool", "cool: stays hot after the CPU falls", 0, 10_000, 100, 1_000, "ms"),
  range(group, "floor", "floor: least share of capacity admitted", 0, 1, 0.05, 0.1, ""),
];

/** The rising load's knobs, as the shedder's and the guard's runs read them: `start` calls/s rising to `peak`, held, then back. */
const risingLoadKnobs = (start: number, peak: number): Knob[] => [
  range("traffic", "start", "Load at the start", 10, 2_000, 10, start, "calls/s"),
  range("traffic", "peak", "Load at the peak", 10, 5_000, 10, peak, "calls/s"),
  range("traffic", "ramp", "Ramp lasts", 0, 600, 5, 30, "s"),
  range("traffic", "hold", "Peak held for", 0, 600, 5, 30, "s"),
  range("traffic", "after", "Back at the start load for", 0, 600, 5, 30, "s"),
];

/** The server those runs load: its workers and the time each call takes. */
const serverKnobs = (): Knob[] => [
  range("server", "workers", "Workers", 1, 64, 1, 4, "workers"),
  range("server", "service", "Service time per call", 1, 200, 1, 16, "ms"),
];

export const guardScenario: Scenario = {
  id: "guard",
  tab: "Guard",
  title: "Guard in front of a server",
  blurb:
    "Many clients, a few of them far busier than the rest (Zipf popularity), offer a load that ramps past what a server of workers can do. @tideward/guard's admission (its shedder reading the server's CPU, a gate on calls in flight, a per-key limit) next to the same admission without the per-key limit and to no policy at all, on the same seed and traffic.",
  knobs: [
    ...risingLoadKnobs(100, 600),
    range("clients", "keys", "Clients (keys)", 1, 100_000, 1, 1_000, "keys"),
    range(
      "clients",
      "exponent",
      "Skew: Zipf exponent s",
      0,
      3,
      0.05,
      1.1,
      "",
      "Key i is picked in proportion to 1 / (i + 1)^s; 0 is uniform.",
    ),
    ...serverKnobs(),
    ...shedKnobs("guard: shedder").map((k) => ({ ...k, key: `shed.${k.key}` })),
    range("guard: gate", "gate", "gate: calls in flight at most", 1, 1_000, 1, 8, "calls"),
    range("guard: per-key limit", "limit.quota", "quota: calls a key may make a window", 1, 1_000, 1, 20, "calls"),
    range("guard: per-key limit", "limit.window", "window", 100, 60_000, 100, 1_000, "ms"),
    choice(
      "guard: per-key limit",
      "limit.kind",
      "kind",
      [
        ["bucket", "token bucket"],
        ["gcra", "GCRA"],
        ["sliding", "sliding window"],
        ["period", "fixed period"],
      ],
      "bucket",
    ),
    number(
      "guard: per-key limit",
      "limit.maxKeys",
      "maxKeys: keys with limiter state at once",
      1,
      1_000_000,
      1,
      100_000,
      "keys",
      "Past it, idle keys' state is dropped and a returning key starts afresh.",
    ),
    seed(),
  ],
};

/**
 * The page's own scenarios, which the simulator's catalogue does not have: the guard's server
 * admission in front of many clients. (The burst table and the quota engine, once tabs of their
 * own, are the catalogue's `quota-bursts` and `quota-atomic`: one place for each.)
 */
export const pageScenarios: readonly Scenario[] = [guardScenario];
