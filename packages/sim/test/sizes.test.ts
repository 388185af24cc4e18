// Every size a run is handed is bounded before anything is allocated, by bytes, with an error
// naming the option that made it large; and what grows with traffic is charged as it grows.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keys, latency, policy, quotaBursts, simulate, sweep, traffic } from "@tideward/sim";
import type { PolicySpec } from "@tideward/sim";
import { Budget } from "../src/memory";
import { MAX_BUCKETS, Recorder } from "../src/recorder";
import { STARTS, collect } from "./helpers";

/** What `act` throws (its class and message), or a failure when it returns. */
function refusal(act: () => unknown): { type: string; message: string } {
  try {
    act();
  } catch (e) {
    return { type: (e as Error).constructor.name, message: (e as Error).message };
  }
  throw new Error("it was not refused");
}

/** One call at the run's start. */
const once = traffic.bursts({ size: 1, spacing: 0, every: 1, count: 1 });

describe.each(STARTS)("sizes (start %s)", (start) => {
  it("a duration of 10^12 ms at the default step is refused before its series are made, naming duration and step", () => {
    const r = refusal(() => simulate({ start, duration: 1e12, traffic: once }));
    expect(r).toEqual({
      type: "RangeError",
      message:
        "simulate duration (ms) 1000000000000 in steps of 1000 ms (simulate step) makes 1 000 000 000 series buckets; a run holds at most 67 108 864, whatever its maxBytes",
    });
    // Fewer buckets than a run can hold, but more than the default ceiling: maxBytes is named.
    expect(refusal(() => simulate({ start, duration: 1e10, traffic: once })).message).toMatch(
      /^simulate duration \(ms\) 10000000000 in steps of 1000 ms \(simulate step\) makes 10 000 000 series buckets, which needs about 5\.59 GiB, past simulate maxBytes \(512 MiB\)$/,
    );
    // The same run at a coarser step fits: a thousand buckets, one call.
    const coarse = simulate({ start, duration: 1e12, step: 1e9, traffic: once });
    expect(coarse.series.t).toHaveLength(1_000);
    expect(coarse.summary.calls).toBe(1);
    // Lifting the ceiling lifts it for what can be held, not for what cannot.
    expect(refusal(() => simulate({ start, duration: 1e12, step: 1e-3, traffic: once, maxBytes: Infinity }))).toEqual({
      type: "RangeError",
      message:
        "simulate duration (ms) 1000000000000 in steps of 0.001 ms (simulate step) makes 1 000 000 000 000 000 series buckets; a run holds at most 67 108 864, whatever its maxBytes",
    });
    // And a lower ceiling refuses what the default allows.
    expect(refusal(() => simulate({ start, duration: 60_000, traffic: once, maxBytes: 10_000 })).message).toMatch(
      /^simulate duration \(ms\) 60000 in steps of 1000 ms \(simulate step\) makes 60 series buckets, which needs about 35\.7 KiB, past simulate maxBytes \(9\.77 KiB\)$/,
    );
  });

  it("10^9 uniform keys with perKey are refused, naming perKey; without it they cost only the keys that call", () => {
    const many = traffic.poisson({ rate: 100, keys: keys.uniform({ count: 1e9 }) });
    expect(refusal(() => simulate({ start, duration: 10_000, traffic: many, perKey: true }))).toEqual({
      type: "RangeError",
      message:
        "simulate perKey over the traffic's 1 000 000 000 keys needs about 104 GiB beside the 6.45 KiB already set aside, past simulate maxBytes (512 MiB)",
    });
    // A bucket per key over the same key space makes a limiter only for each key that calls.
    const run = simulate({ start, duration: 10_000, traffic: many, policies: [policy.bucket(1, { perKey: true })] });
    const seen = new Set(collect(many, 10_000, start).key);
    expect(run.summary.calls).toBeGreaterThan(900);
    expect(run.policies[0].stats.keys).toBe(seen.size);
  });

  it("keys.zipf over 10^9 keys is refused before its table is built, naming count and maxBytes", () => {
    expect(refusal(() => keys.zipf({ count: 1e9 }))).toEqual({
      type: "RangeError",
      message:
        "keys.zipf count 1 000 000 000 needs about 41 GiB for its table (44 bytes a key), past keys.zipf maxBytes (512 MiB, the default): lower count, or raise maxBytes",
    });
    expect(refusal(() => keys.zipf({ count: 1_000, maxBytes: 43_999 })).message).toMatch(/^keys\.zipf count 1 000 /);
    expect(keys.zipf({ count: 1_000, maxBytes: 44_000 }).count).toBe(1_000);
    expect(refusal(() => keys.uniform({ count: 2 ** 31 }))).toEqual({
      type: "RangeError",
      message: "keys.uniform count must be at most 2 147 483 647, got 2147483648",
    });
  });

  it("a herd too large for its call times, and a sweep of too many steps, are refused when made", () => {
    expect(refusal(() => traffic.herd({ clients: 1e9 }))).toEqual({
      type: "RangeError",
      message:
        "traffic.herd clients 1 000 000 000 need about 7.45 GiB for their call times (8 bytes a client), past traffic.herd maxBytes (512 MiB, the default): lower clients, or raise maxBytes",
    });
    expect(refusal(() => sweep(quotaBursts, "quota", { steps: 1e9 }))).toEqual({
      type: "RangeError",
      message: "sweep steps must be at most 1000, got 1000000000",
    });
  });

  it("a per-key sliding window is charged for its ring as each key first calls, and refused past the ceiling", () => {
    const wide = traffic.poisson({ rate: 200, keys: keys.uniform({ count: 1_000 }) });
    const r = refusal(() =>
      simulate({
        start,
        duration: 10_000,
        traffic: wide,
        policies: [policy.sliding(1_000_000, 1_000, { perKey: true })],
        maxBytes: 50_000_000,
      }),
    );
    expect(r.type).toBe("RangeError");
    // 8 MB a key: six rings fit in 50 MB, the seventh does not.
    expect(r.message).toMatch(
      /^policy sliding per key: the limiter of key \d+ \(the 7th\) needs about 7\.63 MiB beside the 45\.9 MiB already set aside, past simulate maxBytes \(47\.7 MiB\)$/,
    );
  });

  it("calls piling up behind a backend that never answers are refused as they grow, naming maxBytes", () => {
    const r = refusal(() =>
      simulate({
        start,
        duration: 60_000,
        traffic: traffic.constant({ rate: 1_000 }),
        backend: { latency: latency.fixed(1e9) },
        maxBytes: 4_000_000,
      }),
    );
    expect(r.type).toBe("RangeError");
    expect(r.message).toMatch(
      /^simulate: \d+ \d{3} (calls being made|attempts in flight) at once \(.+\) needs about .+, past simulate maxBytes \(3\.81 MiB\)$/,
    );
  });

  it("timeouts and deadlines left waiting after their calls ended are charged as they pile up, naming maxBytes", () => {
    // Every call ends at once, but its timeout and deadline wait 10^12 ms to fire.
    const run = (wait: number) =>
      simulate({
        start,
        duration: 10_000,
        traffic: traffic.constant({ rate: 100_000 }),
        backend: { latency: 0 },
        client: { timeout: wait, deadline: wait },
        maxBytes: 8_000_000,
      });
    const r = refusal(() => run(1e12));
    expect(r.type).toBe("RangeError");
    expect(r.message).toMatch(
      /^simulate: \d+ \d{3} events waiting at once \(timeouts, deadlines and hedges .+\) needs about .+, past simulate maxBytes \(7\.63 MiB\)$/,
    );
    // Timers that fire soon after their calls keep the queue short: the same traffic fits.
    expect(run(100).summary.calls).toBe(1_000_000);
  });

  it("a policy naming a new refusal reason for every call is refused once their counters pass the ceiling", () => {
    let n = 0;
    const chatty: PolicySpec = {
      name: "chatty",
      create: () => ({
        name: "chatty",
        side: "client",
        get reason() {
          return `reason ${n}`;
        },
        admit: () => {
          n++;
          return undefined;
        },
        settle: () => {},
      }),
    };
    const r = refusal(() =>
      simulate({
        start,
        duration: 600_000,
        traffic: traffic.constant({ rate: 10 }),
        policies: [chatty],
        maxBytes: 1_000_000,
      }),
    );
    expect(r.type).toBe("RangeError");
    expect(r.message).toMatch(
      /^simulate: refusal reason "reason \d+" \(the run's \d+th\) over 600 buckets needs about 9\.39 KiB/,
    );
  });

  it("past 256 distinct refusal reasons, the rest are counted together under (other reasons)", () => {
    let n = 0;
    const chatty: PolicySpec = {
      name: "chatty",
      create: () => ({
        name: "chatty",
        side: "client",
        get reason() {
          return `reason ${(n - 1) % 1_000}`;
        },
        admit: () => {
          n++;
          return undefined;
        },
        settle: () => {},
      }),
    };
    const r = simulate({ start, duration: 10_000, traffic: traffic.constant({ rate: 1_000 }), policies: [chatty] });
    const by = r.summary.refusedBy;
    expect(Object.keys(by)).toHaveLength(257);
    expect(by["reason 0"]).toBe(10);
    expect(by["reason 255"]).toBe(10);
    expect(by["reason 256"]).toBeUndefined();
    expect(by["(other reasons)"]).toBe(744 * 10);
    expect(Object.values(by).reduce((a, b) => a + b, 0)).toBe(r.summary.refused);
    expect(r.series.refusedBy["(other reasons)"].reduce((a, b) => a + b, 0)).toBe(7_440);
  });
});

describe("a Zipf table past V8's largest plain array", () => {
  it("is built in typed arrays alone: 4 million keys build in a process whose heap holds 32 MB", () => {
    // Built with plain arrays on V8's heap, a table past about 110 million keys (maxBytes raised
    // to 5 GB or Infinity) ended the process; a small heap shows the same use at a size a test
    // can afford. The picks are the ones the table gives in this process too.
    const script = [
      'import { keys } from "@tideward/sim";',
      "const z = keys.zipf({ count: 4_000_000 });",
      "let u = 0.5;",
      "const picks = [];",
      "for (let i = 0; i < 5; i++) picks.push(z.pick(() => (u = (u * 9301 + 0.49297) % 1)));",
      "console.log(JSON.stringify(picks));",
    ].join("\n");
    const r = spawnSync(
      process.execPath,
      [
        "--max-old-space-size=32",
        "--conditions=@tideward/source",
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        script,
      ],
      { cwd: join(import.meta.dirname, ".."), encoding: "utf8", timeout: 60_000 },
    );
    expect(r.stderr).not.toMatch(/heap out of memory/);
    expect(r.status).toBe(0);
    let u = 0.5;
    const z = keys.zipf({ count: 4_000_000 });
    const picks = Array.from({ length: 5 }, () => z.pick(() => (u = (u * 9301 + 0.49297) % 1)));
    expect(JSON.parse(r.stdout) as number[]).toEqual(picks);
  });
});

describe("series past what a plain array holds", () => {
  it.each(STARTS)(
    "a run of more than 2^26 buckets is refused before anything is made, whatever its maxBytes (start %s)",
    (start) => {
      // Only the check: a run that size would set aside some 40 GB before it got far.
      expect(() => Recorder.reserve(new Budget(Infinity, "simulate maxBytes"), 2 ** 27, 1, 0)).toThrow(
        /^simulate duration \(ms\) 134217728 in steps of 1 ms \(simulate step\) makes 134 217 728 series buckets; a run holds at most 67 108 864, whatever its maxBytes$/,
      );
      expect(() => Recorder.reserve(new Budget(Infinity, "simulate maxBytes"), MAX_BUCKETS, 1, 0)).not.toThrow();
      expect(
        refusal(() => simulate({ start, duration: 2 ** 27, step: 1, maxBytes: Infinity, traffic: traffic.replay([]) })),
      ).toEqual({
        type: "RangeError",
        message:
          "simulate duration (ms) 134217728 in steps of 1 ms (simulate step) makes 134 217 728 series buckets; a run holds at most 67 108 864, whatever its maxBytes",
      });
    },
  );
});
