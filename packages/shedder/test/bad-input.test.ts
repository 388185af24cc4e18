// Bad input to the shedder and its Node sampler, as a table: each case answers with its exact
// error (or, on the hot path, exactly what its documented equivalent answers) and leaves the
// shedder, the preset and the timers as they were.
import { describe, expect, it } from "vitest";
import { eachRefusal, eachTwin } from "../../../scripts/test-support/bad-input.ts";
import type { Refusal, Twin } from "../../../scripts/test-support/bad-input.ts";
import { Shedder, shed } from "@tideward/shedder";
import type { Shed, Ticket } from "@tideward/shedder";
import { LoadSampler } from "@tideward/shedder/node";
import { availableCores, parseCpuMax } from "@tideward/shedder/internal";
import type { LoadSamplerOptions, SamplerSystem } from "@tideward/shedder/node";
import { burst, drive, steady } from "./drive";

const not = <T>(x: unknown): T => x as T;
const T0 = 1_700_000_000_000.25;

/** Warmed at Date.now() scale: a second of traffic passing in 50 ms, then a queue of 6 on a hot CPU. */
function busy(): { s: Shedder; pending: { end: number; ticket: Ticket }[] } {
  const s = new Shedder({}, T0);
  const run = drive(s, steady(T0, T0 + 1_000, 10, 0, 50), T0 + 1_000);
  const queue = drive(s, burst(T0 + 1_000, 6, 850), T0 + 1_000, run.pending);
  return { s, pending: queue.pending };
}

const snapshot = (s: Shedder): number[] => [
  s.flying,
  s.average,
  s.capacity(T0 + 1_000, 950),
  s.capacity(T0 + 3_000, 0),
];

// A fake process for the sampler, so that no case leaves a real timer behind.
function fake(): { system: SamplerSystem; timers: number[] } {
  const timers: number[] = [];
  const system: SamplerSystem = {
    now: () => 0,
    cpuUsage: () => ({ user: 0, system: 0 }),
    eventLoopUtilization: () => ({ active: 0, idle: 0 }),
    readText: () => undefined,
    availableParallelism: () => 2,
    setInterval: (_tick, ms) => timers.push(ms),
    clearInterval: () => undefined,
  };
  return { system, timers };
}

const construction: Refusal[] = [
  [
    "a policy given as text",
    () => new Shedder(not("abc")),
    TypeError,
    'Shedder policy must be an object, got string "abc"',
  ],
  ["a null policy", () => new Shedder(not(null)), TypeError, "Shedder policy must be an object, got null"],
  [
    "a policy given as a number",
    () => new Shedder(not(900)),
    TypeError,
    "Shedder policy must be an object, got number 900",
  ],
  [
    "a misspelt cpu",
    () => new Shedder(not({ cpus: 800 })),
    TypeError,
    'Shedder has no option "cpus"; did you mean "cpu"?',
  ],
  [
    "an option nothing like any",
    () => new Shedder(not({ threshold: 800 })),
    TypeError,
    'Shedder has no option "threshold"; its options are "size", "window", "cpu", "latency", "beta", "cool", "floor"',
  ],
  [
    "10^8 buckets",
    () => new Shedder({ size: 1e8, window: 1e9 }),
    RangeError,
    "Shed size must be at most 1000000 buckets, got 100000000",
  ],
  [
    "2^32 buckets",
    () => new Shedder({ size: 2 ** 32, window: 1e12 }),
    RangeError,
    "Shed size must be at most 1000000 buckets, got 4294967296",
  ],
  [
    "buckets under 0.01 ms",
    () => new Shedder({ window: 0.1 }),
    RangeError,
    "Shed window (ms) must be at least 0.5 for 50 buckets (0.01 ms a bucket), got 0.1",
  ],
  [
    "a cpu of 1000",
    () => new Shedder({ cpu: 1_000 }),
    RangeError,
    "Shed cpu (thousandths) must be 0 or more and under 1000, got 1000",
  ],
  [
    "a cpu given as text",
    () => new Shedder(not({ cpu: "900" })),
    TypeError,
    'Shed cpu (thousandths) must be a number, got string "900"',
  ],
  ["a NaN start", () => new Shedder({}, Number.NaN), RangeError, "Shedder now (ms) must be a finite number, got NaN"],
  [
    "LoadSampler options given as text",
    () => new LoadSampler(not("fast")),
    TypeError,
    'LoadSampler options must be an object, got string "fast"',
  ],
  [
    "LoadSampler null options",
    () => new LoadSampler(not(null)),
    TypeError,
    "LoadSampler options must be an object, got null",
  ],
  [
    "a misspelt interval",
    () => new LoadSampler(not({ intervall: 100 })),
    TypeError,
    'LoadSampler has no option "intervall"; did you mean "interval"?',
  ],
  [
    "an interval of 2^31 ms",
    () => new LoadSampler({ interval: 2 ** 31, system: fake().system }),
    RangeError,
    "LoadSampler interval (ms) must be between 1 and 2147483647 (what Node's timers honour), got 2147483648",
  ],
  [
    "a misspelt system call",
    () => new LoadSampler(not<LoadSamplerOptions>({ system: { cpuUse: () => 0 } })),
    TypeError,
    'LoadSampler has no option "cpuUse"; did you mean "cpuUsage"?',
  ],
  [
    "a system call that is not a function",
    () => new LoadSampler(not({ system: { now: 5 } })),
    TypeError,
    "LoadSampler system.now must be a function, got number 5",
  ],
  [
    "a null system",
    () => new LoadSampler(not({ system: null })),
    TypeError,
    "LoadSampler system must be an object, got null",
  ],
  [
    "cores of 0",
    () => new LoadSampler({ cores: 0, system: fake().system }),
    RangeError,
    "LoadSampler cores must be above 0, got 0",
  ],
  [
    "availableCores null options",
    () => availableCores(not(null)),
    TypeError,
    "availableCores options must be an object, got null",
  ],
  [
    "availableCores parallelism of 0",
    () => availableCores({ parallelism: 0, read: () => undefined }),
    RangeError,
    "availableCores parallelism must be above 0, got 0",
  ],
  [
    "availableCores read that is not a function",
    () => availableCores(not({ read: "/proc" })),
    TypeError,
    'cgroupCores read must be a function, got string "/proc"',
  ],
  [
    "parseCpuMax of a number",
    () => parseCpuMax(not(100_000)),
    TypeError,
    "parseCpuMax text must be a string, got number 100000",
  ],
];

// Hot-path cases: the odd call and the call it is documented to behave as, each on a twin.
const sym = Symbol("odd");
const hot: Twin<Shedder>[] = [
  ["a Symbol cpu reads as 0", (s) => s.allow(T0 + 1_000, not(sym)), (s) => s.allow(T0 + 1_000, 0)],
  ["a BigInt cpu reads as 0", (s) => s.allow(T0 + 1_000, not(950n)), (s) => s.allow(T0 + 1_000, 0)],
  ["a cpu given as text reads as 0", (s) => s.allow(T0 + 1_000, not("950")), (s) => s.allow(T0 + 1_000, 0)],
  ["a NaN cpu reads as 0", (s) => s.allow(T0 + 1_000, Number.NaN), (s) => s.allow(T0 + 1_000, 0)],
  ["a cpu over 1000 reads as 1000", (s) => s.allow(T0 + 1_000, 5_000), (s) => s.allow(T0 + 1_000, 1_000)],
  ["a Symbol now stands still", (s) => s.allow(not(sym), 950), (s) => s.allow(T0 + 1_000, 950)],
  ["a BigInt now stands still", (s) => s.allow(not(10n ** 13n), 950), (s) => s.allow(T0 + 1_000, 950)],
  [
    "a now given as text stands still",
    (s) => s.allow(not("1700000009000"), 0)?.start,
    (s) => s.allow(T0 + 1_000, 0)?.start,
  ],
  ["a clock stepped back stands still", (s) => s.allow(0, 0)?.start, (s) => s.allow(T0 + 1_000, 0)?.start],
  [
    "capacity at a Symbol reads where the shedder stands",
    (s) => s.capacity(not(sym), not(sym)),
    (s) => s.capacity(T0 + 1_000, 0),
  ],
  [
    "a ticket passed at a Symbol passes where the shedder stands",
    (s) => s.allow(T0 + 1_000, 0)?.pass(not(sym)),
    (s) => s.allow(T0 + 1_000, 0)?.pass(T0 + 1_000),
  ],
];

describe("bad input to the shedder", () => {
  it("has at least fifteen cases", () => {
    expect(construction.length + hot.length).toBeGreaterThanOrEqual(15);
  });

  eachRefusal(construction, shed);

  eachTwin(hot, () => busy().s, snapshot);

  it("the hot CPU refuses in that state, so the cases above would show a difference", () => {
    expect(busy().s.allow(T0 + 1_000, 950)).toBeUndefined();
    expect(busy().s.allow(T0 + 1_000, 0)).toBeDefined();
  });

  it("starts no timer when the options are refused", () => {
    const f = fake();
    expect(() => new LoadSampler({ interval: 0.5, system: f.system })).toThrow(RangeError);
    expect(() => new LoadSampler({ beta: 1, system: f.system })).toThrow(RangeError);
    expect(f.timers).toEqual([]);
  });

  it("reads each policy field once, so a getter cannot change a size between the check and the use", () => {
    let reads = 0;
    const policy = {
      get size() {
        reads++;
        return reads === 1 ? 4 : 1e9;
      },
    };
    const s = new Shedder(not<Partial<Shed>>(policy));
    expect([s.policy.size, reads]).toEqual([4, 1]);
  });
});
