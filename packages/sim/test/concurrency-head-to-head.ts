// The head-to-head table of @tideward/concurrency's README: the prefetch-spike and capacity-shift
// scenarios over several seeds and each main knob 20 % either side of its default, every
// contender's figures given as the range they took. Rewrites the block between
// `<!-- head-to-head -->` and `<!-- /head-to-head -->` in packages/concurrency/README.md.
//
//   node --conditions=@tideward/source --import tsx packages/sim/test/concurrency-head-to-head.ts [--check]
//
// With --check it only says whether the README is up to date (exit 1 if not).
import { readFileSync, writeFileSync } from "node:fs";
import { capacityShift, prefetchSpike } from "@tideward/sim";
import type { CapacityShiftParams, Scenario, ScenarioResult } from "@tideward/sim";
import { SHIFT_CONTENDERS, SHIFT_TRACE_STEP, runShift } from "../src/scenarios/capacity-shift";
import type { ShiftRun, ShiftVariant } from "../src/scenarios/capacity-shift";

const README = new URL("../../concurrency/README.md", import.meta.url);
const SEEDS = [1, 2, 3, 4, 5];

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

/** A range of seconds, `never` counted apart. */
function seconds(xs: readonly number[], never: (x: number) => boolean): string {
  const ok = xs.filter((x) => !never(x));
  const nevers = xs.length - ok.length;
  if (ok.length === 0) return `never (${nevers} of ${xs.length})`;
  const lo = Math.min(...ok).toFixed(0);
  const hi = Math.max(...ok).toFixed(0);
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
// Netflix's WindowedLimit: the calls that finish within a second folded into one sample.
const SECOND = { min: 1_000, max: 1_000, size: 10 };
const shiftRows: ShiftRow[] = [
  { id: "gradient2", label: "Gradient2", contender: "gradient2" },
  { id: "vegas", label: "Vegas", contender: "vegas" },
  { id: "aimd", label: "AIMD (timeout: the deadline)", contender: "aimd" },
  {
    id: "gradient2/window",
    label: "Gradient2, 1 s sample windows",
    contender: "gradient2",
    variant: { window: SECOND },
  },
  { id: "vegas/window", label: "Vegas, 1 s sample windows", contender: "vegas", variant: { window: SECOND } },
  { id: "aimd/window", label: "AIMD, 1 s sample windows", contender: "aimd", variant: { window: SECOND } },
  { id: "shedder", label: "shedder", contender: "shedder" },
  { id: "fixed", label: "static gate (the whole backend's workers)", contender: "fixed" },
  { id: "none", label: "no policy", contender: "none" },
];
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
    for (const row of shiftRows) {
      const c = SHIFT_CONTENDERS.find((x) => x.id === row.contender);
      if (c === undefined) throw new Error(`no contender ${row.contender} in capacity-shift`);
      shiftRuns.get(row.id)?.push(runShift(p, 0, c, { ...row.variant, id: row.id }));
    }
  }
const shiftOf = (id: string, name: string) => (shiftRuns.get(id) ?? []).map((r) => r.figures[`${id}.${name}`]);
const shiftTable = table(
  [
    "",
    "goodput within the deadline, in the shift",
    "goodput within the deadline, whole run",
    "back to 90 % goodput after the shift",
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
      shares(shiftOf(id, "refusedBefore")),
      limit ? shares(runs.map((r) => r.refusedProbing)) : "–",
      limit ? places(shiftOf(id, "limitInShift")) : "–",
      limit ? places(shiftOf(id, "limitAfter")) : "–",
      limit ? seconds(shiftOf(id, "settleDown"), (x) => x < 0) : "–",
      limit ? seconds(shiftOf(id, "settleUp"), (x) => x < 0) : "–",
    ];
  }),
);

/** The limit against the workers over the first seed's run at the defaults, one value every 5 s. */
const EVERY = 5_000;
const first = shiftParams[0];
const ticks = Array.from({ length: Math.floor((first.duration * 1_000) / EVERY) }, (_, i) => i * EVERY);
const workersAt = (t: number) =>
  t >= first.shiftFrom * 1_000 && t < (first.shiftFrom + first.shiftLength) * 1_000
    ? Math.max(1, Math.round(first.workers * first.left))
    : first.workers;
const traceRows = shiftRows.filter((r) => shiftRuns.get(r.id)?.[0]?.trace !== undefined);
const width = Math.max(...traceRows.map((r) => r.label.length), "workers".length);
const cell = (x: number) => String(Math.round(x)).padStart(4);
const traceBlock = [
  "```text",
  `${"seconds".padEnd(width)} ${ticks.map((t) => cell(t / 1_000)).join("")}`,
  `${"workers".padEnd(width)} ${ticks.map((t) => cell(workersAt(t))).join("")}`,
  ...traceRows.map((r) => {
    const v = shiftRuns.get(r.id)?.[0]?.trace ?? [];
    return `${r.label.padEnd(width)} ${ticks.map((t) => cell(v[Math.floor(t / SHIFT_TRACE_STEP)])).join("")}`;
  }),
  "```",
].join("\n");

const knobText = (s: Scenario, knobs: readonly string[]) =>
  knobs.map((k) => `${k} ${String(s.defaults[k])}`).join(", ");
const block = [
  `Prefetch spike (\`prefetch-spike\`): ${spikes.length} runs of each contender, seeds ${SEEDS.join(", ")} at the defaults and with each of ${knobText(prefetchSpike, spikeKnobs)} 20 % under and over.`,
  "",
  spikeTable,
  "",
  `Capacity shift (\`capacity-shift\`): ${shiftParams.length} runs of each contender, seeds ${SEEDS.join(", ")} at the defaults and with each of ${knobText(capacityShift, shiftKnobs)} 20 % under and over. The first three rows are the scenario's own (a sample a call); the windowed rows fold the calls that finish within a second into one sample, as Netflix's \`WindowedLimit\` does (the limiter's \`window\` option). "While probing": refused while the limit's baseline was a probe's own round trip (\`probing\`).`,
  "",
  shiftTable,
  "",
  `The limit over the run at the defaults, seed ${SEEDS[0]}, one reading every ${EVERY / 1_000} s (the workers left from ${first.shiftFrom} s to ${first.shiftFrom + first.shiftLength} s):`,
  "",
  traceBlock,
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
