// The page's own scenarios and their knobs (the simulator's catalogue comes whole, see
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

export const burstScenario: Scenario = {
  id: "burst",
  tab: "Three quotas",
  title: "Three quotas on bursty traffic",
  blurb:
    "The burst table: one burst of calls every two seconds, straddling a second boundary, offered to a token bucket, a sliding window and a period, all with the same quota a second.",
  knobs: [
    range("traffic", "calls", "Calls in a burst", 1, 200, 1, 40, "calls"),
    range("traffic", "spacing", "Between two calls of a burst", 0.1, 50, 0.1, 1.5, "ms"),
    range("traffic", "every", "Between bursts", 100, 10_000, 100, 2_000, "ms"),
    range("traffic", "bursts", "Bursts", 1, 20, 1, 4, "bursts"),
    range("traffic", "before", "Share of a burst before the second turns over", 0, 100, 5, 50, "%"),
    range("quotas", "quota", "Quota: calls a window", 1, 200, 1, 20, "calls"),
    range(
      "quotas",
      "window",
      "Window: the sliding window's and the period's length",
      100,
      10_000,
      100,
      1_000,
      "ms",
      "The bucket refills the quota over the same length.",
    ),
    range(
      "quotas",
      "burst",
      "Bucket burst",
      1,
      200,
      1,
      20,
      "tokens",
      "The most the bucket holds; here it is the quota.",
    ),
    choice(
      "quotas",
      "align",
      "Period opens",
      [
        ["yes", "on multiples of the window (align)"],
        ["no", "at the first call after the last period"],
      ],
      "yes",
    ),
  ],
};

export const quotaScenario: Scenario = {
  id: "quota",
  tab: "Quota engine",
  title: "Quota engine: atomic or one after another",
  blurb:
    "An LLM gateway charges each request to three budgets: the user's requests, the tenant's tokens and the model's tokens. Charged as one atomic set a refused request costs nothing; charged one after another, the budgets passed before the refusing one pay for a request that never ran.",
  knobs: [
    range("traffic", "rate", "Requests", 1, 500, 1, 20, "requests/s"),
    range("traffic", "duration", "Simulated time", 10, 3_600, 10, 60, "s"),
    range("traffic", "users", "Users of the tenant", 1, 100, 1, 4, "users"),
    range("traffic", "tokensMin", "Tokens a request, from", 10, 10_000, 10, 200, "tokens"),
    range("traffic", "tokensMax", "Tokens a request, to", 10, 20_000, 10, 2_000, "tokens"),
    range("user requests", "userCapacity", "Burst", 1, 100, 1, 5, "requests"),
    range("user requests", "userRefill", "Refill", 1, 50, 1, 2, "requests/s"),
    range("tenant tokens", "tenantCapacity", "Burst", 1_000, 200_000, 1_000, 20_000, "tokens"),
    range("tenant tokens", "tenantRefill", "Refill", 100, 50_000, 100, 4_000, "tokens/s"),
    range("model tokens", "modelCapacity", "Burst", 1_000, 200_000, 1_000, 12_000, "tokens"),
    range("model tokens", "modelRefill", "Refill", 100, 50_000, 100, 3_000, "tokens/s"),
    seed(),
  ],
};

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

/** The page's own scenarios, which the simulator's catalogue does not have in this form. */
export const pageScenarios: readonly Scenario[] = [burstScenario, quotaScenario, guardScenario];
