// The burst table: bursts straddling a second boundary through a token bucket, a sliding window
// and a period with the same quota a second, each in a simulation of its own on the same bursts.
import { policy, simulate, traffic } from "@tideward/sim";
import type { PolicySpec, SimulationOptions } from "@tideward/sim";
import { call, lit } from "../code.ts";
import type { Code } from "../code.ts";
import type { Figure, Outcome, Params } from "../model.ts";
import { figure, line, n, s, sumHelper, total } from "./common.ts";
import type { Named } from "./common.ts";

/** Buckets per burst in the recorded series: fine enough to draw a burst's shape. */
const SLICES = 400;

export function burst(p: Params): Outcome {
  const calls = n(p, "calls");
  const spacing = n(p, "spacing");
  const every = n(p, "every");
  const bursts = n(p, "bursts");
  const quota = n(p, "quota");
  const window = n(p, "window");
  const before = Math.round((calls * n(p, "before")) / 100);
  // The clock starts at the first burst, `before` calls ahead of a whole window, so the aligned
  // period turns over inside it (the seed: 30 ms before 1 s, at 970 ms).
  const lead = before * spacing;
  const start = Math.max(1, Math.ceil(lead / window)) * window - lead;
  const step = every / SLICES;
  const shared = lit({
    start,
    duration: bursts * every,
    step,
    traffic: call("traffic.bursts", traffic.bursts, { size: calls, spacing, every, count: bursts }),
  });
  const limiters: [name: string, label: string, spec: Code<PolicySpec>][] = [
    [
      "bucket",
      "token bucket",
      call("policy.bucket", policy.bucket, (quota * 1_000) / window, { burst: n(p, "burst") }),
    ],
    ["sliding", "sliding window", call("policy.sliding", policy.sliding, quota, window)],
    [
      "period",
      `period${s(p, "align") === "yes" ? ", aligned" : ""}`,
      call("policy.period", policy.period, quota, window, { align: s(p, "align") === "yes" }),
    ],
  ];
  const base: Omit<SimulationOptions, "policies" | "label"> = shared.value;
  const runs: Named[] = limiters.map(([name, label, spec]) => ({
    name,
    run: simulate({ ...base, label, policies: [spec.value] }),
  }));
  const rows: { label: string; cells: Figure[] }[] = [];
  for (let k = 0; k < bursts; k++) {
    rows.push({
      label: `burst ${k}`,
      cells: runs.map((r) =>
        figure(
          `burst${k}.${r.name}`,
          `burst ${k}, ${r.name}: calls let through`,
          "",
          0,
          total(r, "admitted", k * SLICES, (k + 1) * SLICES),
        ),
      ),
    });
  }
  // Running totals, so each burst shows as a step and its shape as the step's edge.
  const running = (xs: readonly number[]): number[] => {
    let sum = 0;
    return xs.map((x) => (sum += x));
  };
  const first = runs[0];
  const x = first.run.series.t.map((t) => (start + t + step) / 1_000);
  const overlap = (calls - 1) * spacing >= every;
  return {
    charts: [
      {
        id: "admitted",
        title: `Calls let through so far: a burst of ${calls} every ${every} ms, quota ${quota} every ${window} ms`,
        x: { label: "time on the clock (s)", values: x },
        y: { label: "calls", min: 0 },
        series: [
          line("offered", running(first.run.series.offered), { color: "#6b7280", dash: true }),
          ...runs.map((r) => line(r.run.label, running(r.run.series.admitted))),
        ],
      },
    ],
    figures: runs.map((r) =>
      figure(`${r.name}.admitted`, `${r.run.label}: calls let through in all`, "", 0, total(r, "admitted")),
    ),
    tables: [
      {
        caption: `Calls let through of the ${calls} offered in each burst, quota ${quota} ${window === 1_000 ? "a second" : `every ${window} ms`}`,
        columns: ["burst", "bucket", "sliding", "period"],
        rows,
      },
    ],
    notes: [
      `Each burst starts ${lead.toFixed(1)} ms before a whole window on the clock. The bucket spends the burst it saved and then holds the rate; the sliding window refuses every call past ${quota} in any ${window} ms stretch; the ${s(p, "align") === "yes" ? "aligned " : ""}period starts a fresh ${quota} when its window turns over.`,
      ...(overlap
        ? [
            `A burst (${((calls - 1) * spacing).toFixed(1)} ms) is longer than the gap between bursts: each row counts the ${every} ms from a burst's start.`,
          ]
        : []),
    ],
    replay: {
      body: [
        sumHelper,
        `const shared = ${shared.source};`,
        ...limiters.map(
          ([name, label, spec]) =>
            `const ${name} = simulate({ ...shared, label: ${JSON.stringify(label)}, policies: [${spec.source}] });`,
        ),
      ],
    },
    simulated: { runs: runs.length, ms: bursts * every, calls: bursts * calls * runs.length },
  };
}
