// The head-to-head table of @tideward/concurrency's README: the prefetch-spike and capacity-shift
// scenarios over seeds 1–10 and each main knob 20 % either side of its default, every
// contender's figures given as the range they took; and the capacity shift at a backend of 64
// workers, where ±20 % of the true concurrency is wider than the queue a limit keeps, timing how
// long each limit takes to settle there after each change, and to its own steady level (with the
// queue it keeps). Vegas runs with its preset and with its opt-in drain and grow. Rewrites the block between
// `<!-- head-to-head -->` and `<!-- /head-to-head -->` in packages/concurrency/README.md.
// Minutes of one core: run it alone on a shared machine.
//
//   flock /tmp/tideward-bench.lock nice pnpm bench claims-concurrency [--check]
//   (or node --conditions=@tideward/source --import tsx packages/sim/test/concurrency-head-to-head.ts)
//
// With --check it only says whether the README is up to date (exit 1 if not).
import { readFileSync, writeFileSync } from "node:fs";
import { capacityShift, prefetchSpike } from "@tideward/sim";
import type { CapacityShiftParams, Scenario, ScenarioResult } from "@tideward/sim";
import { SHIFT_CONTENDERS, SHIFT_TRACE_STEP, runShift } from "../src/scenarios/capacity-shift";
import { settleTime } from "../src/scenarios/limit-trace";
import type { ShiftRun, ShiftVariant } from "../src/scenarios/capacity-shift";

const README = new URL("../../concurrency/README.md", import.meta.url);
/** Seeds 1–10; `--seeds=N` for a quick look at fewer (the README's block says how many). */
const seedCount = Number(process.argv.find((a) => a.startsWith("--seeds="))?.slice("--seeds=".length) ?? 10);
if (!Number.isInteger(seedCount) || seedCount < 1)
  throw new RangeError(`--seeds= must be a whole number from 1, got ${String(seedCount)}`);
const SEEDS = Array.from({ length: seedCount }, (_, i) => i + 1);

/** Each setting: the defaults, then one knob at a time 20 % under and over its default. */
function settings(s: Scenario, knobs: readonly string[]): Record<string, number>[] {
  const out: Record<string, number>[] = [{}];
  for (const k of knobs) {
    const d = s.defaults[k] as number;
    out.push({ [k]: d * 0.8 }, { [k]: d * 1.2 });
  }
  return out;
}

function runAll(s: Scenario, knobs: readonly string[]): ScenarioResult[] {
  const out: ScenarioResult[] = [];
  for (const p of settings(s, knobs))
    for (const seed of SEEDS) {
      process.stderr.write(`${s.name} ${JSON.stringify({ ...p, seed })}\n`);
      out.push(s.run({ ...p, seed }));
    }
  return out;
}

const pct = (x: number) => `${(Math.round(x * 1_000) / 10).toFixed(1)}`;
/** A range of shares as `"97.1–99.9 %"`, or one value when they round alike. */
function shares(xs: readonly number[]): string {
  const lo = pct(Math.min(...xs));
  const hi = pct(Math.max(...xs));
  return lo === hi ? `${lo} %` : `${lo}–${hi} %`;
}
/** A range of places, one decimal. */
function places(xs: readonly number[]): string {
  const lo = Math.min(...xs).toFixed(1);
  const hi = Math.max(...xs).toFixed(1);
  return lo === hi ? lo : `${lo}–${hi}`;
}

/** A range of milliseconds, whole. */
function millis(xs: readonly number[]): string {
  const lo = Math.min(...xs).toFixed(0);
  const hi = Math.max(...xs).toFixed(0);
  return lo === hi ? `${lo} ms` : `${lo}–${hi} ms`;
}

/** A range of seconds (`digits` decimals), `never` counted apart. */
function seconds(xs: readonly number[], never: (x: number) => boolean, digits = 0): string {
  const ok = xs.filter((x) => !never(x));
  const nevers = xs.length - ok.length;
  if (ok.length === 0) return `never (${nevers} of ${xs.length})`;
  const lo = Math.min(...ok).toFixed(digits);
  const hi = Math.max(...ok).toFixed(digits);
  const range = lo === hi ? `${lo} s` : `${lo}–${hi} s`;
  return nevers === 0 ? range : `${range}; never in ${nevers} of ${xs.length}`;
}

function table(columns: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${columns.join(" | ")} |`,
    `| ${columns.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}

const spikeKnobs = ["user", "spike", "service", "deadline"] as const;
const spikes = runAll(prefetchSpike, spikeKnobs);
const spikeIds: [string, string][] = [
  ["gradient2+priority", "Gradient2 with priority"],
  ["vegas+priority", "Vegas with priority"],
  ["aimd+priority", "AIMD with priority"],
  ["fixed+priority", "fixed limit (the workers) with priority"],
  ["shedder+priority", "shedder with priority"],
  ["gradient2", "Gradient2"],
  ["vegas", "Vegas"],
  ["aimd", "AIMD"],
  ["fixed", "static gate (the workers)"],
  ["none", "no policy"],
];
const of = (rs: readonly ScenarioResult[], id: string, name: string) => rs.map((r) => r.figures[`${id}.${name}`]);
const spikeTable = table(
  ["", "user calls in time, in the spike", "prefetch in time, in the spike", "backend load in the spike, of capacity"],
  spikeIds.map(([id, label]) => [
    label,
    shares(of(spikes, id, "userInSpike")),
    shares(of(spikes, id, "prefetchInSpike")),
    shares(spikes.map((r) => r.figures[`${id}.loadInSpike`] / r.figures.capacity)),
  ]),
);

const shiftKnobs = ["rate", "service", "deadline"] as const;
/** Each capacity-shift row: a contender, and the settings laid over its own (none: the scenario's). */
interface ShiftRow {
  readonly id: string;
  readonly label: string;
  readonly contender: string;
  readonly variant?: ShiftVariant;
}
// The scenario's own limits fold each second's calls into one sample (Netflix's WindowedLimit);
// the rows "a sample a call" feed every call's round trip to the algorithm.
const EACH = { window: null };
/** Vegas's opt-in steps that scale with the gap (`drain`, `grow`), windowed as the scenario's. */
const SETTLE = { policy: { drain: 1, grow: 1 } };
const shiftRows: ShiftRow[] = [
  { id: "gradient2", label: "Gradient2", contender: "gradient2" },
  { id: "vegas", label: "Vegas", contender: "vegas" },
  { id: "aimd", label: "AIMD (timeout: the deadline)", contender: "aimd" },
  { id: "vegas/settle", label: "Vegas, drain 1 and grow 1", contender: "vegas", variant: SETTLE },
  { id: "gradient2/call", label: "Gradient2, a sample a call", contender: "gradient2", variant: EACH },
  { id: "vegas/call", label: "Vegas, a sample a call", contender: "vegas", variant: EACH },
  { id: "aimd/call", label: "AIMD, a sample a call", contender: "aimd", variant: EACH },
  { id: "shedder", label: "shedder", contender: "shedder" },
  { id: "fixed", label: "static gate (the whole backend's workers)", contender: "fixed" },
  { id: "none", label: "no policy", contender: "none" },
];
const contender = (id: string) => {
  const c = SHIFT_CONTENDERS.find((x) => x.id === id);
  if (c === undefined) throw new Error(`no contender ${id} in capacity-shift`);
  return c;
};
const shiftSettings = settings(capacityShift, shiftKnobs);
/** Per row, its runs over every setting and seed: figures, refusals while probing, and the limit's trace. */
const shiftRuns = new Map<string, ShiftRun[]>(shiftRows.map((r) => [r.id, []]));
/** The parameters of each run, in the order of every row's runs. */
const shiftParams: CapacityShiftParams[] = [];
for (const o of shiftSettings)
  for (const seed of SEEDS) {
    const p = { ...capacityShift.defaults, ...o, seed } as CapacityShiftParams;
    process.stderr.write(`${capacityShift.name} ${JSON.stringify({ ...o, seed })}\n`);
    shiftParams.push(p);
    for (const row of shiftRows)
      shiftRuns.get(row.id)?.push(runShift(p, 0, contender(row.contender), { ...row.variant, id: row.id }));
  }
const shiftOf = (id: string, name: string) => (shiftRuns.get(id) ?? []).map((r) => r.figures[`${id}.${name}`]);
const shiftTable = table(
  [
    "",
    "goodput within the deadline, in the shift",
    "goodput within the deadline, whole run",
    "back to 90 % goodput after the shift",
    "worst second's p99, in the shift",
    "refused at steady load, before the shift",
    "of which while probing min-RTT",
    "mean limit in the shift (8 workers at the defaults)",
    "mean limit after it (16)",
    "limit within ±20 % of the workers left",
    "limit within ±20 % of the workers, after",
  ],
  shiftRows.map(({ id, label }) => {
    const runs = shiftRuns.get(id) ?? [];
    const limit = runs[0]?.trace !== undefined;
    return [
      label,
      shares(shiftOf(id, "goodputInShift")),
      shares(shiftOf(id, "goodputRate")),
      seconds(
        runs.map((r) => (r.figures[`${id}.recovered`] === 1 ? r.figures[`${id}.recoverySeconds`] : -1)),
        (x) => x < 0,
      ),
      millis(shiftOf(id, "p99InShift")),
      shares(shiftOf(id, "refusedBefore")),
      limit ? shares(runs.map((r) => r.refusedProbing)) : "–",
      limit ? places(shiftOf(id, "limitInShift")) : "–",
      limit ? places(shiftOf(id, "limitAfter")) : "–",
      limit ? seconds(shiftOf(id, "settleDown"), (x) => x < 0) : "–",
      limit ? seconds(shiftOf(id, "settleUp"), (x) => x < 0) : "–",
    ];
  }),
);

/** The limit against the workers over one run, one value every `every` ms, as a text block. */
function traceBlock(
  p: CapacityShiftParams,
  every: number,
  rows: readonly { label: string; trace: readonly number[] }[],
) {
  const ticks = Array.from({ length: Math.floor((p.duration * 1_000) / every) }, (_, i) => i * every);
  const workersAt = (t: number) =>
    t >= p.shiftFrom * 1_000 && t < (p.shiftFrom + p.shiftLength) * 1_000
      ? Math.max(1, Math.round(p.workers * p.left))
      : p.workers;
  const width = Math.max(...rows.map((r) => r.label.length), "workers".length);
  const cell = (x: number) => String(Math.round(x)).padStart(4);
  return [
    "```text",
    `${"seconds".padEnd(width)} ${ticks.map((t) => cell(t / 1_000)).join("")}`,
    `${"workers".padEnd(width)} ${ticks.map((t) => cell(workersAt(t))).join("")}`,
    ...rows.map(
      (r) => `${r.label.padEnd(width)} ${ticks.map((t) => cell(r.trace[Math.floor(t / SHIFT_TRACE_STEP)])).join("")}`,
    ),
    "```",
  ].join("\n");
}
const EVERY = 5_000;
const first = shiftParams[0];
const firstTraces = shiftRows.flatMap((r) => {
  const trace = shiftRuns.get(r.id)?.[0]?.trace;
  return trace === undefined ? [] : [{ label: r.label, trace }];
});

// The capacity shift at a backend of 64 workers (32 left in the shift: ±20 % is ±6.4 places,
// room for the few queued calls a limit is designed to keep), offered more than the whole backend serves so the
// limit is at work in every phase, and given a minute before the shift to find the 64 from its
// initial limit. Seeds 1–10 at each load.
const BIG = { workers: 64, shiftFrom: 60, shiftLength: 60, duration: 180 } as const;
const BIG_RATES = [1_760, 1_120] as const;
/** At each load: the defaults, then service and deadline 20 % under and over (the rate is the load). */
const bigKnobs = ["service", "deadline"] as const;
const bigSettings = settings(capacityShift, bigKnobs);
const bigRows: ShiftRow[] = shiftRows.filter((r) => ["gradient2", "vegas", "aimd"].includes(r.contender));
interface BigRun {
  readonly p: CapacityShiftParams;
  readonly down: number;
  readonly up: number;
  readonly inShift: number;
  readonly after: number;
  readonly goodput: number;
  readonly p99: number;
  readonly refused: number;
  readonly probing: number;
  readonly trace: readonly number[];
}
const bigRuns = new Map<string, BigRun[]>();
let bigFirst: CapacityShiftParams | undefined;
for (const rate of BIG_RATES)
  for (const o of bigSettings)
    for (const seed of SEEDS) {
      const p = { ...capacityShift.defaults, ...BIG, ...o, rate, seed } as CapacityShiftParams;
      bigFirst ??= p;
      process.stderr.write(`${capacityShift.name} ${JSON.stringify({ ...BIG, ...o, rate, seed })}\n`);
      for (const row of bigRows) {
        const run = runShift(p, 0, contender(row.contender), { ...row.variant, id: "x" });
        const f = run.figures;
        const key = `${rate} ${row.id}`;
        if (!bigRuns.has(key)) bigRuns.set(key, []);
        bigRuns.get(key)?.push({
          p,
          down: f["x.settleDown"],
          up: f["x.settleUp"],
          inShift: f["x.limitInShift"],
          after: f["x.limitAfter"],
          goodput: f["x.goodputInShift"],
          p99: f["x.p99InShift"],
          refused: f["x.refusedBefore"],
          probing: run.refusedProbing,
          trace: run.trace ?? [],
        });
      }
    }
const within10 = (down: readonly number[], up: readonly number[]) =>
  down.filter((d, i) => d >= 0 && d <= 10 && up[i] >= 0 && up[i] <= 10).length;
const bigTable = table(
  [
    "",
    "offered",
    "limit within ±20 % of the 32 left, after the drop",
    "of the 64, after the return",
    "runs within 10 s of both changes",
    "mean limit in the shift",
    "mean limit after it",
    "goodput within the deadline, in the shift",
    "worst second's p99, in the shift",
    "refused before the shift",
    "of which while probing min-RTT",
  ],
  BIG_RATES.flatMap((rate) =>
    bigRows.map((row) => {
      const rs = bigRuns.get(`${rate} ${row.id}`) ?? [];
      const never = (x: number) => x < 0;
      const down = rs.map((r) => r.down);
      const up = rs.map((r) => r.up);
      return [
        row.label,
        `${rate}/s`,
        seconds(down, never, 1),
        seconds(up, never, 1),
        `${within10(down, up)} of ${rs.length}`,
        places(rs.map((r) => r.inShift)),
        places(rs.map((r) => r.after)),
        shares(rs.map((r) => r.goodput)),
        millis(rs.map((r) => r.p99)),
        shares(rs.map((r) => r.refused)),
        shares(rs.map((r) => r.probing)),
      ];
    }),
  ),
);
const big = bigFirst as CapacityShiftParams;
const bigTraces = bigRows.map((row) => ({
  label: row.label,
  trace: bigRuns.get(`${BIG_RATES[0]} ${row.id}`)?.[0]?.trace ?? [],
}));

// The restated measure: how long each limit takes to come within ±20 % of its OWN steady level
// after each change (the mean of its last STEADY ms in the stretch, its steady queue included),
// and that queue, the steady level less the workers there: what each design keeps on purpose.
const STEADY = 20_000;
const BAND = 0.2;
const HOLD = 5_000;
interface Settling {
  /** Seconds to within ±20 % of the workers, and of its own steady level, after each change (−1: never). */
  readonly down: number;
  readonly up: number;
  readonly ownDown: number;
  readonly ownUp: number;
  /** Its steady level less the workers, in the shift and after it (places). */
  readonly queueIn: number;
  readonly queueAfter: number;
}
function settling(p: CapacityShiftParams, trace: readonly number[], down: number, up: number): Settling {
  const from = p.shiftFrom * 1_000;
  const to = Math.min(from + p.shiftLength * 1_000, p.duration * 1_000);
  const end = p.duration * 1_000;
  const left = Math.max(1, Math.round(p.workers * p.left));
  const mean = (a: number, b: number) => {
    const i = Math.floor(a / SHIFT_TRACE_STEP);
    const j = Math.min(trace.length, Math.ceil(b / SHIFT_TRACE_STEP));
    let sum = 0;
    for (let k = i; k < j; k++) sum += trace[k];
    return sum / (j - i);
  };
  const levelIn = mean(to - STEADY, to);
  const levelAfter = mean(end - STEADY, end);
  const own = (a: number, b: number, level: number) =>
    settleTime(trace, SHIFT_TRACE_STEP, a, b, level, BAND, HOLD) ?? -1;
  return {
    down,
    up,
    ownDown: own(from, to, levelIn),
    ownUp: own(to, end, levelAfter),
    queueIn: levelIn - left,
    queueAfter: levelAfter - p.workers,
  };
}
const settleRows = (label: string, load: string, ss: readonly Settling[]) => {
  const never = (x: number) => x < 0;
  const col = (k: keyof Settling) => ss.map((x) => x[k]);
  return [
    label,
    load,
    seconds(col("down"), never),
    seconds(col("up"), never),
    `${within10(col("down"), col("up"))} of ${ss.length}`,
    seconds(col("ownDown"), never),
    seconds(col("ownUp"), never),
    `${within10(col("ownDown"), col("ownUp"))} of ${ss.length}`,
    places(col("queueIn")),
    places(col("queueAfter")),
  ];
};
// The windowed limits only: a sample a call, none comes near the workers (the tables above).
const limitRows = shiftRows.filter((r) => ["gradient2", "vegas", "aimd"].includes(r.contender) && r.variant !== EACH);
const settleTable = table(
  [
    "",
    "workers, load",
    "within ±20 % of the workers, after the drop",
    "after the return",
    "runs within 10 s of both",
    "within ±20 % of its own steady level, after the drop",
    "after the return",
    "runs within 10 s of both",
    "steady queue in the shift (limit − workers left)",
    "steady queue after it (limit − workers)",
  ],
  [
    ...limitRows.map((row) =>
      settleRows(
        row.label,
        "16 → 8, 70 %",
        (shiftRuns.get(row.id) ?? []).map((r, i) =>
          settling(shiftParams[i], r.trace ?? [], r.figures[`${row.id}.settleDown`], r.figures[`${row.id}.settleUp`]),
        ),
      ),
    ),
    ...BIG_RATES.flatMap((rate) =>
      limitRows.map((row) =>
        settleRows(
          row.label,
          `64 → 32, ${rate}/s`,
          (bigRuns.get(`${rate} ${row.id}`) ?? []).map((r) => settling(r.p, r.trace, r.down, r.up)),
        ),
      ),
    ),
  ],
);

/** A run's capacity, calls a second. */
const num = (p: { readonly workers: number; readonly service: number }) =>
  String(Math.round((p.workers * 1_000) / p.service));
const knobText = (s: Scenario, knobs: readonly string[]) =>
  knobs.map((k) => `${k} ${String(s.defaults[k])}`).join(", ");
const block = [
  `Prefetch spike (\`prefetch-spike\`): ${spikes.length} runs of each contender, seeds ${SEEDS[0]}–${SEEDS[SEEDS.length - 1]} at the defaults and with each of ${knobText(prefetchSpike, spikeKnobs)} 20 % under and over.`,
  "",
  spikeTable,
  "",
  `Capacity shift (\`capacity-shift\`): ${shiftParams.length} runs of each contender, seeds ${SEEDS[0]}–${SEEDS[SEEDS.length - 1]} at the defaults and with each of ${knobText(capacityShift, shiftKnobs)} 20 % under and over. The first three rows are the scenario's own: the calls that finish within a second folded into one sample, as Netflix's \`WindowedLimit\` does (the limiter's \`window\` option); the rows "a sample a call" feed the algorithm every call. "While probing": refused while the limit's baseline was a probe's own round trip (\`probing\`). Settled: within ±20 % of the workers there, and staying so to the end of the stretch, 5 s at least.`,
  "",
  shiftTable,
  "",
  `The limit over the run at the defaults, seed ${SEEDS[0]}, one reading every ${EVERY / 1_000} s (the workers left from ${first.shiftFrom} s to ${first.shiftFrom + first.shiftLength} s):`,
  "",
  traceBlock(first, EVERY, firstTraces),
  "",
  `Capacity shift at ${BIG.workers} workers (\`workers\` ${BIG.workers}, \`shiftFrom\` ${BIG.shiftFrom}, \`shiftLength\` ${BIG.shiftLength}, \`duration\` ${BIG.duration}; capacity ${num(big)}/s, ${num({ ...big, workers: big.workers * big.left })}/s in the shift, at the default service time): ${bigSettings.length * SEEDS.length} runs of each limit at each load, seeds ${SEEDS[0]}–${SEEDS[SEEDS.length - 1]} at the defaults and with each of ${knobText(capacityShift, bigKnobs)} 20 % under and over. At the default service time ${BIG_RATES[0]}/s is past the whole backend's capacity, so a limit is at work before, in and after the shift (with the service time 20 % shorter it is 88 % of it); ${BIG_RATES[1]}/s is the scenario's own 70 %, past the capacity left only in the shift. Each limit starts at its initial limit (20) and has a minute to find the ${BIG.workers}.`,
  "",
  bigTable,
  "",
  `The limit over the run at ${BIG_RATES[0]}/s, seed ${SEEDS[0]}, one reading every ${(2 * EVERY) / 1_000} s:`,
  "",
  traceBlock(big, 2 * EVERY, bigTraces),
  "",
  `Settling, counted two ways, over the same runs: within ±20 % of the workers there (the target as written), and within ±20 % of the limit's own steady level, its mean over the last ${STEADY / 1_000} s of the stretch (the queue it keeps included); both entering the band and staying in it to the end of the stretch, ${HOLD / 1_000} s at least. The steady queue is that level less the workers there: what each design keeps on purpose.`,
  "",
  settleTable,
].join("\n");

const readme = readFileSync(README, "utf8");
const re = /<!-- head-to-head -->\n[\s\S]*?<!-- \/head-to-head -->/;
if (!re.test(readme)) throw new Error("the README has no <!-- head-to-head --> block");
const next = readme.replace(re, `<!-- head-to-head -->\n${block}\n<!-- /head-to-head -->`);
if (process.argv.includes("--check")) {
  process.stdout.write(next === readme ? "up to date\n" : "out of date\n");
  process.exitCode = next === readme ? 0 : 1;
} else {
  writeFileSync(README, next);
  process.stdout.write(`${block}\n`);
}
