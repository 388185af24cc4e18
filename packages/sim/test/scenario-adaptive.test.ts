// The adaptive-concurrency scenarios: a spike of prefetch traffic, where priority is what keeps
// user calls answered, and a backend whose capacity halves, where the limits must learn it. And
// the limits as simulator policies, checked by the simulator's own invariants.
import { describe, expect, it } from "vitest";
import { Priorities } from "@tideward/concurrency";
import { capacityShift, keys, policy, prefetchSpike, simulate, traffic } from "@tideward/sim";
import { adaptiveLimit } from "../src/scenarios/adaptive-policies";
import { LimitTrace, settleTime } from "../src/scenarios/limit-trace";
import { gate } from "../src/policies/limiters";
import type { PolicySpec } from "../src/policy";
import { SHIFT_CONTENDERS, SHIFT_TRACE_STEP, runShift } from "../src/scenarios/capacity-shift";
import type { CapacityShiftParams } from "@tideward/sim";

const T0 = 1_700_000_000_000.375;
const LIMITS = ["gradient2", "vegas", "aimd", "fixed"] as const;

describe("prefetch spike", () => {
  const r = prefetchSpike.run({}, { start: T0 });
  const f = r.figures;

  it("runs every contender on the same calls, and records user and prefetch calls apart", () => {
    for (const run of r.runs) {
      expect(run.series.offered).toEqual(r.runs[0].series.offered);
      expect(Object.keys(run.summary.byPriority ?? {}).sort()).toEqual(["prefetch", "user"]);
    }
  });

  it("with priority, every limit answers more user calls in time through the spike than without, and more than prefetch", () => {
    for (const k of LIMITS) {
      expect(f[`${k}+priority.userInSpike`], k).toBeGreaterThan(f[`${k}.userInSpike`] + 0.3);
      expect(f[`${k}+priority.userInSpike`], k).toBeGreaterThan(f[`${k}+priority.prefetchInSpike`]);
    }
    // Each adaptive limit with priority keeps 99 % of user calls in time (Vegas too, its samples
    // a second's calls, so the spread of service times no longer reads as queueing); none under a tenth.
    for (const k of ["gradient2", "vegas", "aimd"])
      expect(f[`${k}+priority.userInSpike`], k).toBeGreaterThanOrEqual(0.99);
    expect(f["none.userInSpike"]).toBeLessThan(0.1);
    // No policy lets the backend be offered far past its capacity in the spike; a limit keeps it near it.
    expect(f["none.loadInSpike"]).toBeGreaterThan(1.5 * f.capacity);
    for (const k of ["gradient2", "vegas", "aimd"]) {
      expect(f[`${k}+priority.loadInSpike`], k).toBeLessThan(1.05 * f.capacity);
      expect(f[`${k}+priority.loadInSpike`], k).toBeGreaterThan(0.95 * f.capacity);
    }
  });

  it("says where a fixed limit sized for the backend does as well, and why", () => {
    expect(f["fixed+priority.userInSpike"]).toBeGreaterThanOrEqual(0.98);
    expect(r.report).toContain("A fixed limit of 16 places");
  });
});

describe("capacity shift", () => {
  const r = capacityShift.run({}, { start: T0 });
  const f = r.figures;

  it("every policy answers more in time during the shift than none; the limits and the static gate what the workers left can serve", () => {
    for (const id of ["gradient2", "vegas", "aimd", "shedder", "fixed"])
      expect(f[`${id}.goodputInShift`], id).toBeGreaterThan(5 * f["none.goodputInShift"]);
    // Half of 16 workers serve 200 of the 280 calls offered a second: each limit and the gate come within 2 % of it, the shedder not.
    for (const id of ["gradient2", "vegas", "aimd", "fixed"])
      expect(f[`${id}.goodputInShift`], id).toBeGreaterThan((200 / 280) * 0.98);
    expect(f["shedder.goodputInShift"]).toBeLessThan((200 / 280) * 0.9);
  });

  it("traces each adaptive limit: Gradient2's and Vegas's fall in the shift and rise when the workers return; AIMD's, with no drop, only rises", () => {
    const p = capacityShift.defaults as CapacityShiftParams;
    const at = (values: readonly number[], s: number) => values[Math.floor((s * 1_000) / SHIFT_TRACE_STEP) - 1];
    const end = p.shiftFrom + p.shiftLength;
    for (const k of ["gradient2", "vegas", "aimd"]) {
      const c = SHIFT_CONTENDERS.find((x) => x.id === k);
      if (c === undefined) throw new Error(`no ${k} in the lineup`);
      const values = runShift(p, T0, c).trace ?? [];
      expect(values).toHaveLength((p.duration * 1_000) / SHIFT_TRACE_STEP);
      if (k === "aimd") {
        expect(at(values, end), k).toBeGreaterThan(at(values, p.shiftFrom));
        expect(f["aimd.refusedBefore"]).toBeLessThan(0.01);
      } else {
        expect(at(values, end), k).toBeLessThan(at(values, p.shiftFrom) * 0.7);
        expect(at(values, p.duration), k).toBeGreaterThan(at(values, end) * 1.5);
      }
      expect(f[`${k}.settleDown`], k).toBeDefined();
    }
    expect(f["shedder.settleDown"]).toBeUndefined();
  });

  it("gives the refusals made while probing for the no-load round trip, for the limits only, in its table", () => {
    const i = r.tables[0].columns.indexOf("refused before the shift, at steady load (of which while probing min-RTT)");
    expect(i).toBeGreaterThan(0);
    const pct = (x: number) => `${(Math.round(x * 1_000) / 10).toFixed(1)} %`;
    for (const row of r.tables[0].rows) {
      const id = SHIFT_CONTENDERS.find((c) => c.label === row[0])?.id ?? "";
      if (["gradient2", "vegas", "aimd"].includes(id)) {
        expect(f[`${id}.refusedProbing`], id).toBeLessThanOrEqual(f[`${id}.refusedBefore`]);
        expect(row[i]).toBe(`${pct(f[`${id}.refusedBefore`])} (${pct(f[`${id}.refusedProbing`])})`);
      } else {
        expect(row[i], id).toBe(pct(f[`${id}.refusedBefore`]));
        expect(f[`${id}.refusedProbing`], id).toBeUndefined();
      }
    }
  });
});

describe("capacity shift, a contender with other settings", () => {
  const p = capacityShift.defaults as CapacityShiftParams;
  const vegas = SHIFT_CONTENDERS.find((c) => c.id === "vegas");

  it("runs one contender as the scenario does (1 s sample windows), and a sample a call makes Vegas refuse more at steady load", () => {
    if (vegas === undefined) throw new Error("no Vegas in the lineup");
    const own = runShift(p, T0, vegas);
    expect(own.figures).toEqual(
      Object.fromEntries(
        Object.entries(capacityShift.run({}, { start: T0 }).figures).filter(([k]) => k.startsWith("vegas.")),
      ),
    );
    expect(runShift(p, T0, vegas, { id: "vegas", window: { min: 1_000, max: 1_000, size: 10 } }).figures).toEqual(
      own.figures,
    );
    const each = runShift(p, T0, vegas, { id: "vegas/call", window: null });
    expect(Object.keys(each.figures).every((k) => k.startsWith("vegas/call."))).toBe(true);
    // Sampled a call at a time, the spread of service times reads as queueing.
    expect(each.figures["vegas/call.refusedBefore"]).toBeGreaterThan(0.01);
    expect(own.figures["vegas.refusedBefore"]).toBeLessThan(each.figures["vegas/call.refusedBefore"] / 4);
    // Vegas's probe is passive: what it refuses while probing is a part of what it refuses.
    for (const run of [own, each])
      expect(run.refusedProbing).toBeLessThanOrEqual(
        run.figures[Object.keys(run.figures).find((k) => k.endsWith(".refusedBefore")) ?? ""],
      );
  });
});

describe("adaptive limits as simulator policies", () => {
  const mixed = traffic.merge(
    traffic.priority("user", traffic.poisson({ rate: 300, keys: keys.single("user") })),
    traffic.priority("prefetch", traffic.poisson({ rate: 600, keys: keys.single("prefetch") })),
  );
  const priorities = new Priorities({ levels: ["user", "prefetch"], shares: [0.5, 0.5], fallback: "user" });

  it.each(["aimd", "vegas", "gradient2"] as const)(
    "%s with priority keeps the simulator's own count of places, and refuses prefetch first",
    (kind) => {
      const trace = new LimitTrace(T0, 10_000, 100);
      const run = simulate({
        seed: 4,
        start: T0,
        duration: 10_000,
        traffic: mixed,
        backend: { latency: 20, workers: 8, queue: 100 },
        client: { deadline: 500 },
        policies: [adaptiveLimit({ kind, policy: { min: 1 }, priorities, trace })],
        invariants: true,
      });
      const by = run.summary.byPriority ?? {};
      expect(by.prefetch.refused / by.prefetch.calls).toBeGreaterThan(by.user.refused / by.user.calls);
      expect(Object.keys(run.summary.refusedBy).every((k) => k.startsWith(`${kind}/`))).toBe(true);
      const values = trace.values();
      expect(values.every((v) => v >= 1 && v <= 200)).toBe(true);
    },
  );

  it("a prioritised shedder and a fixed limit keep the simulator's count too", () => {
    for (const p of [
      policy.shedder({}, { priorities }),
      adaptiveLimit({ kind: "fixed", policy: { limit: 8 }, priorities }),
    ]) {
      const run = simulate({
        seed: 2,
        start: T0,
        duration: 20_000,
        traffic: mixed,
        backend: { latency: 20, workers: 8, queue: 100 },
        policies: [p],
        invariants: true,
      });
      const by = run.summary.byPriority ?? {};
      const mine = Object.entries(run.summary.refusedBy).filter(([k]) => k === p.name || k.startsWith(`${p.name}/`));
      expect(
        mine.reduce((a, [, n]) => a + n, 0),
        p.name,
      ).toBe(run.summary.refused);
      expect(run.summary.refused, p.name).toBeGreaterThan(0);
      expect(by.prefetch.refused / by.prefetch.calls, p.name).toBeGreaterThan(by.user.refused / by.user.calls);
    }
  });

  it("counts the refusals made while a limit probes for its no-load round trip apart: some of Vegas's, none of AIMD's", () => {
    const refusedProbing = (kind: "vegas" | "aimd"): [number, number] => {
      const trace = new LimitTrace(T0, 10_000, 100);
      const run = simulate({
        seed: 3,
        start: T0,
        duration: 10_000,
        traffic: traffic.poisson({ rate: 900 }),
        backend: { latency: 20, workers: 8, queue: 100 },
        // A probe every 1 × limit × jitter samples: Vegas probes most of the time it runs.
        policies: [adaptiveLimit({ kind, policy: kind === "vegas" ? { min: 1, probe: 1 } : { min: 1 }, trace })],
      });
      return [trace.probingRefusals(0, 10_000), run.summary.refused];
    };
    const [vegasProbing, vegasAll] = refusedProbing("vegas");
    expect(vegasProbing).toBeGreaterThan(0);
    expect(vegasProbing).toBeLessThan(vegasAll);
    const [aimdProbing, aimdAll] = refusedProbing("aimd");
    expect(aimdAll).toBeGreaterThan(0);
    expect(aimdProbing).toBe(0);
  });

  it("learns nothing of a call the backend dropped unserved, its caller gone (as admit's limit), nor of one a later policy refused", () => {
    // Twice what 4 workers of 20 ms serve, callers who give up after 100 ms, a backend that drops
    // what they gave up on: AIMD (a timeout far past any round trip) learns only of the calls
    // served, their places given back (the simulator's count checked at every step).
    const limitOver = (abandoned: "serve" | "drop", after?: PolicySpec): number => {
      const trace = new LimitTrace(T0, 10_000, 100);
      simulate({
        seed: 5,
        start: T0,
        duration: 10_000,
        traffic: traffic.poisson({ rate: 400 }),
        backend: { latency: 20, workers: 4, queue: 1_000, abandoned },
        client: { timeout: 100 },
        policies: [
          adaptiveLimit({ kind: "aimd", policy: { min: 1, timeout: 60_000 }, trace }),
          ...(after === undefined ? [] : [after]),
        ],
        invariants: true,
      });
      // The mean limit over the last 5 s.
      const tail = trace.values().slice(50);
      return tail.reduce((a, b) => a + b, 0) / tail.length;
    };
    // Served, every call's round trip is a pass under the timeout: the limit grows to its max.
    expect(limitOver("serve")).toBe(200);
    // Dropped, only the calls served teach it, each a pass: it grows, more slowly (heard as
    // drops, it sawed under 40).
    const dropped = limitOver("drop");
    expect(dropped).toBeLessThan(200);
    expect(dropped).toBeGreaterThan(60);
    // A gate of one place after the limit refuses most calls the instant the limit lets them
    // in: released, not dropped, so the limit stays where it started (20).
    expect(limitOver("drop", gate(1))).toBe(20);
  });

  it("refuses a kind it does not know, and a policy its algorithm refuses, when defined", () => {
    expect(() => adaptiveLimit({ kind: "bbr" as never })).toThrow(
      /^adaptiveLimit kind must be "aimd", "vegas", "gradient2" or "fixed", got .*"bbr"$/,
    );
    expect(() => adaptiveLimit({ kind: "aimd", policy: { backoff: 1 } })).toThrow(/Aimd backoff/);
    expect(() => adaptiveLimit({ kind: "fixed" })).toThrow(/FixedLimit limit/);
  });
});

describe("settleTime", () => {
  it("is when the limit came within the band and stayed, or null", () => {
    // One value a second: out, in, out, in, in, in.
    const values = [20, 9, 20, 8.5, 7.5, 8];
    expect(settleTime(values, 1_000, 0, 6_000, 8, 0.2)).toBe(3);
    expect(settleTime(values, 1_000, 4_000, 6_000, 8, 0.2)).toBe(0);
    expect(settleTime([20, 20], 1_000, 0, 2_000, 8, 0.2)).toBe(null);
    // In the band for the last 3 s only: settled, unless it must hold for 4.
    expect(settleTime(values, 1_000, 0, 6_000, 8, 0.2, 3_000)).toBe(3);
    expect(settleTime(values, 1_000, 0, 6_000, 8, 0.2, 4_000)).toBe(null);
  });
});
