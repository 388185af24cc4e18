// The worked traces in the README, computed here from the package itself: test/readme.test.ts
// fails when the README's tables differ from what this prints, and
//
//   node --conditions=@tideward/source --import tsx test/traces.ts --write
//
// rewrites them (each between `<!-- trace:NAME -->` and `<!-- /trace:NAME -->`).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AimdLimit, Gradient2Limit, VegasLimit, aimd, gradient2 } from "@tideward/concurrency";

interface Row {
  readonly rtt: number;
  readonly inflight: number;
  readonly dropped?: boolean;
}

const ms = (x: number): string => (Number.isNaN(x) ? "—" : `${Number(x.toFixed(2))}`);
const num = (x: number): string => `${Number(x.toFixed(3))}`;

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}

function aimdSteps(): string {
  const limit = new AimdLimit({ ...aimd, initial: 100 });
  const samples: Row[] = [
    { rtt: 12, inflight: 100 },
    { rtt: 12, inflight: 101 },
    { rtt: 15, inflight: 40 },
    { rtt: 14, inflight: 102, dropped: true },
    { rtt: 6_000, inflight: 91 },
    { rtt: 11, inflight: 81 },
  ];
  const rows = samples.map((s, i) => {
    const before = limit.limit;
    limit.sample(s.rtt, s.inflight, s.dropped === true);
    const why = s.dropped
      ? `drop: floor(${before} × 0.9)`
      : s.rtt > aimd.timeout
        ? `over the 5000 ms timeout: floor(${before} × 0.9)`
        : s.inflight * 2 >= before
          ? `${s.inflight} × 2 ≥ ${before}: + 1`
          : `${s.inflight} × 2 < ${before}: app-limited, holds`;
    return [`${i + 1}`, ms(s.rtt), `${s.inflight}`, s.dropped ? "yes" : "", why, `${limit.limit}`];
  });
  return table(["sample", "rtt (ms)", "in flight", "dropped", "rule", "limit"], rows);
}

function vegasSteps(): string {
  const limit = new VegasLimit();
  const samples: Row[] = [
    { rtt: 10, inflight: 20 },
    { rtt: 10, inflight: 20 },
    { rtt: 11, inflight: 26 },
    { rtt: 10.5, inflight: 26 },
    { rtt: 14, inflight: 27 },
    { rtt: 20, inflight: 26 },
    { rtt: 20, inflight: 12 },
    { rtt: 18, inflight: 25, dropped: true },
    { rtt: 9, inflight: 24 },
  ];
  const rows = samples.map((s, i) => {
    const before = limit.estimate;
    const noLoad = limit.noLoad;
    limit.sample(s.rtt, s.inflight, s.dropped === true);
    let queue = "—";
    let why: string;
    if (Number.isNaN(noLoad) || s.rtt < noLoad) why = "a new lowest round trip: the baseline";
    else if (s.dropped) why = "drop: − 1";
    else if (s.inflight * 2 < before) why = `${s.inflight} × 2 < ${before}: app-limited, holds`;
    else {
      const q = Math.ceil(before * (1 - noLoad / s.rtt));
      queue = `${q}`;
      why =
        q <= 1
          ? "≤ threshold 1: + beta 6"
          : q < 3
            ? "< alpha 3: + 1"
            : q > 6
              ? "> beta 6: − 1"
              : "alpha ≤ queue ≤ beta: holds";
    }
    return [
      `${i + 1}`,
      ms(s.rtt),
      `${s.inflight}`,
      s.dropped ? "yes" : "",
      ms(limit.noLoad),
      queue,
      why,
      num(limit.estimate),
    ];
  });
  return table(["sample", "rtt (ms)", "in flight", "dropped", "noLoad (ms)", "queue", "rule", "estimate"], rows);
}

function gradient2Steps(): string {
  const limit = new Gradient2Limit({ ...gradient2, initial: 50 });
  const samples: Row[] = [
    { rtt: 10, inflight: 50 },
    { rtt: 12, inflight: 50 },
    { rtt: 14, inflight: 51 },
    { rtt: 30, inflight: 51 },
    { rtt: 30, inflight: 51 },
    { rtt: 40, inflight: 20 },
    { rtt: 9, inflight: 50 },
  ];
  const rows = samples.map((s, i) => {
    const before = limit.estimate;
    limit.sample(s.rtt, s.inflight, false);
    // The gradient the sample used: from the long-term round trip before any 5 % cut.
    const long = limit.long;
    const used = long / s.rtt > 2 / 0.95 ? long / 0.95 : long;
    const g = Math.max(0.5, Math.min(1, (1.5 * used) / s.rtt));
    const why =
      s.inflight < before / 2
        ? `${s.inflight} < ${num(before)} / 2: app-limited, holds`
        : `${num(before)} × 0.8 + (${num(before)} × ${num(g)} + 4) × 0.2`;
    return [
      `${i + 1}`,
      ms(s.rtt),
      `${s.inflight}`,
      ms(long),
      s.inflight < before / 2 ? "—" : num(g),
      why,
      num(limit.estimate),
    ];
  });
  return table(["sample", "rtt (ms)", "in flight", "long (ms)", "gradient", "rule", "estimate"], rows);
}

/**
 * A backend that serves 40 calls at once without queueing, each in `base` ms; past 40 they
 * queue, so a call takes `base × inflight / 40`; past 80 it is dropped. Demand always exceeds
 * the limit, so each call finds the limit full. At sample 3 000 the backend's own round trip
 * doubles (10 → 20 ms: a slower dependency), its capacity unchanged: the min-RTT drifts up.
 */
function drift(): string {
  const capacity = 40;
  const algorithms = [
    ["AIMD", new AimdLimit({ ...aimd, min: 1 })],
    ["Vegas", new VegasLimit()],
    ["Gradient2", new Gradient2Limit({ ...gradient2, min: 1 })],
  ] as const;
  const checkpoints = [100, 500, 1_000, 2_999, 3_010, 3_100, 3_500, 4_000, 6_000, 10_000];
  const rows: string[][] = [];
  for (let n = 1; n <= 10_000; n++) {
    const base = n <= 3_000 ? 10 : 20;
    const cells: string[] = [];
    for (const [, a] of algorithms) {
      const inflight = a.limit;
      const rtt = base * Math.max(1, inflight / capacity);
      a.sample(rtt, inflight, inflight > 2 * capacity);
      cells.push(`${a.limit}`);
    }
    if (checkpoints.includes(n)) {
      const vegasNoLoad = algorithms[1][1].noLoad;
      const long = algorithms[2][1].long;
      rows.push([
        `${n}`,
        `${base}`,
        cells[0],
        `${cells[1]} (noLoad ${ms(vegasNoLoad)})`,
        `${cells[2]} (long ${ms(long)})`,
      ]);
    }
  }
  return table(["sample", "no-load rtt (ms)", "AIMD limit", "Vegas limit", "Gradient2 limit"], rows);
}

/**
 * The preset and `drain: 1, grow: 1` side by side on a backend whose capacity halves, then returns:
 * each loaded to its limit, each call of a sample taking `10 × max(1, limit / workers)` ms.
 */
function vegasSettleSteps(): string {
  const preset = new VegasLimit({ initial: 50 });
  const fast = new VegasLimit({ initial: 50, drain: 1, grow: 1 });
  const workers = [50, 25, 25, 25, 25, 50, 50, 50, 50];
  const rtt = (l: VegasLimit, w: number): number => 10 * Math.max(1, l.limit / w);
  const rows = workers.map((w, i) => {
    const cells: string[] = [`${i + 1}`, `${w}`];
    for (const l of [preset, fast]) {
      const before = l.estimate;
      const noLoad = l.noLoad;
      const r = rtt(l, w);
      l.sample(r, l.limit, false);
      const q = Number.isNaN(noLoad) ? Number.NaN : Math.ceil(before * (1 - noLoad / r));
      let why = "";
      if (l === fast) {
        const grew = l.estimate - before;
        why = Number.isNaN(q)
          ? "the baseline"
          : q > 6
            ? `> beta: − max(1, ${q} − 3)`
            : q >= 3
              ? "holds"
              : grew > 6
                ? `third under alpha: + ${num(before)} × (${3 - Math.max(0, q)}/3)²`
                : q <= 1
                  ? "+ beta 6"
                  : "+ 1";
      }
      cells.push(ms(r), Number.isNaN(q) ? "—" : `${q}`);
      if (l === fast) cells.push(why);
      cells.push(num(l.estimate));
    }
    return cells;
  });
  return table(
    [
      "sample",
      "workers",
      "preset: rtt (ms)",
      "queue",
      "estimate",
      "drain 1, grow 1: rtt (ms)",
      "queue",
      "rule",
      "estimate",
    ],
    rows,
  );
}

/** Every trace, by the name its README markers carry. */
export function traces(): Record<string, string> {
  return {
    aimd: aimdSteps(),
    vegas: vegasSteps(),
    "vegas-settle": vegasSettleSteps(),
    gradient2: gradient2Steps(),
    drift: drift(),
  };
}

/** `readme` with each marked trace replaced by what `traces()` computes. */
export function rewrite(readme: string): string {
  let out = readme;
  for (const [name, text] of Object.entries(traces())) {
    const re = new RegExp(`(<!-- trace:${name} -->)[\\s\\S]*?(<!-- /trace:${name} -->)`);
    if (!re.test(out)) throw new Error(`README has no <!-- trace:${name} --> block`);
    out = out.replace(re, (_, open: string, close: string) => `${open}\n${text}\n${close}`);
  }
  return out;
}

export const readmePath = join(import.meta.dirname, "..", "README.md");

if (process.argv.includes("--write")) writeFileSync(readmePath, rewrite(readFileSync(readmePath, "utf8")));
else if (process.argv[1] === import.meta.filename)
  for (const [name, text] of Object.entries(traces())) console.log(`${name}\n${text}\n`);
