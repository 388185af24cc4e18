// The burst table: bursts straddling a second boundary through a token bucket, a sliding window
// and a period with the same quota a second, each in a simulation of its own on the same bursts.
import { Bucket } from "@tideward/limiters";
import { policy, simulate, traffic } from "@tideward/sim";
import type { PolicySpec, SimulationOptions } from "@tideward/sim";
import { call, lit } from "../code.ts";
import type { Code } from "../code.ts";
import type { Figure, Outcome, Params } from "../model.ts";
import { counted } from "../units.ts";
import { figure, line, n, s, sumHelper, total } from "./common.ts";
import type { Named } from "./common.ts";

/** Buckets per burst in the recorded series: fine enough to draw a burst's shape. */
const SLICES = 400;

/**
 * Why the first burst's figures are what they are: the most each limiter can let through of a
 * burst shorter than its window, and, when all three are there, that more calls in a burst
 * change only the refusals, and from how many calls the bucket's figure moves. `first` is the
 * first burst's figures (bucket, sliding, period). Nothing is said of a burst as long as the
 * window, where the bounds are not these, or as the gap between bursts, where a row counts
 * only the gap's length of it.
 */
export function bounds(p: Params, before: number, first: readonly number[]): string[] {
  const calls = n(p, "calls");
  const spacing = n(p, "spacing");
  const quota = n(p, "quota");
  const window = n(p, "window");
  const burst = n(p, "burst");
  const every = n(p, "every");
  const long = (calls - 1) * spacing;
  if (long >= window || long >= every) return [];
  const rate = (quota * 1_000) / window;
  // The bucket starts the first burst full and lets through its burst and what accrues until
  // the last call, less what is lost while it sits full between two calls: what a real bucket
  // passes of calls `spacing` ms apart, counted for every burst size the knob offers.
  const refill = (rate * long) / 1_000;
  const bucket = new Bucket(rate, { burst });
  let passed = 0;
  const upTo = [0];
  for (let i = 0; i < 200; i++) upTo.push((passed += bucket.take(i * spacing) ? 1 : 0));
  const tokens = upTo[calls] ?? 0;
  const after = calls - before;
  const straddles = s(p, "align") === "yes" && before > 0 && after > 0;
  const most = [
    Math.min(calls, tokens),
    Math.min(calls, quota),
    straddles ? Math.min(before, quota) + Math.min(after, quota) : Math.min(calls, quota),
  ];
  // Full: the bound no longer grows with the calls in a burst (the bucket's still grows with
  // the burst's length, said below).
  const full = [tokens < calls, calls >= quota, straddles ? before >= quota && after >= quota : calls >= quota];
  const periodSaid = straddles
    ? `${quota} in each of the two windows the burst falls in (${before} calls before the second turns over, ${after} after), so ${most[2]}`
    : `${quota} in the window the burst falls in, so ${most[2]}`;
  const lines = [
    `The most each can let through of a burst of ${counted(calls, "calls")}, ${long.toFixed(1)} ms from first to last: the bucket, its ${counted(burst, "tokens")} and what accrues in those ${long.toFixed(1)} ms (${refill.toFixed(2)} at most), so ${most[0]}; the sliding window, ${quota} in any ${window} ms, so ${most[1]}; the period, ${periodSaid}.`,
  ];
  if (most.every((m, i) => full[i] === true && first[i] === m)) {
    // The burst that lasts long enough for one more token.
    const next = upTo.findIndex((k) => k > tokens);
    const moves =
      next > 0 && (next - 1) * spacing < Math.min(window, every)
        ? `; the bucket's figure moves at ${next} calls, a burst long enough (${((next - 1) * spacing).toFixed(1)} ms) for one more token to accrue`
        : "";
    lines.push(
      `The first burst's figures, ${most.join(" / ")}, are these bounds. Each limiter lets through all it can, so more calls in a burst add only refusals${moves}.`,
    );
  }
  return lines;
}

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
    figures: [],
    tables: [
      {
        caption: `Calls let through of the ${calls} offered in each burst, quota ${quota} ${window === 1_000 ? "a second" : `every ${window} ms`}`,
        columns: ["burst", "bucket", "sliding", "period"],
        rows,
      },
      {
        caption: `All ${counted(bursts, "bursts")} together`,
        columns: ["", "bucket", "sliding", "period"],
        rows: [
          {
            label: "calls offered",
            cells: runs.map((r) =>
              figure(`${r.name}.offered`, `${r.run.label}: calls offered in all`, "", 0, total(r, "offered")),
            ),
          },
          {
            label: "calls let through",
            cells: runs.map((r) =>
              figure(`${r.name}.admitted`, `${r.run.label}: calls let through in all`, "", 0, total(r, "admitted")),
            ),
          },
          {
            label: "calls refused",
            cells: runs.map((r) =>
              figure(`${r.name}.refused`, `${r.run.label}: calls refused in all`, "", 0, total(r, "refused")),
            ),
          },
        ],
      },
    ],
    notes: [
      `Each burst starts ${lead.toFixed(1)} ms before a whole window on the clock. The bucket spends the burst it saved and then holds the rate; the sliding window refuses every call past ${quota} in any ${window} ms stretch; the ${s(p, "align") === "yes" ? "aligned " : ""}period starts a fresh ${quota} when its window turns over.`,
      ...bounds(p, before, rows[0]?.cells.map((c) => c.value) ?? []),
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
