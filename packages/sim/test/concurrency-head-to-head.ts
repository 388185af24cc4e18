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
import type { Scenario, ScenarioResult } from "@tideward/sim";

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
const shifts = runAll(capacityShift, shiftKnobs);
const shiftIds: [string, string][] = [
  ["gradient2", "Gradient2"],
  ["vegas", "Vegas"],
  ["aimd", "AIMD"],
  ["shedder", "shedder"],
  ["fixed", "static gate (the whole backend's workers)"],
  ["none", "no policy"],
];
const shiftTable = table(
  [
    "",
    "goodput within the deadline, in the shift",
    "goodput within the deadline, whole run",
    "back to 90 % goodput after the shift",
    "refused at steady load, before the shift",
    "mean limit in the shift (8 workers at the defaults)",
    "mean limit after it (16)",
    "limit within ±20 % of the workers left",
    "limit within ±20 % of the workers, after",
  ],
  shiftIds.map(([id, label]) => {
    const limit = shifts[0].figures[`${id}.settleDown`] !== undefined;
    return [
      label,
      shares(of(shifts, id, "goodputInShift")),
      shares(of(shifts, id, "goodputRate")),
      seconds(
        shifts.map((r) => (r.figures[`${id}.recovered`] === 1 ? r.figures[`${id}.recoverySeconds`] : -1)),
        (x) => x < 0,
      ),
      shares(of(shifts, id, "refusedBefore")),
      limit ? places(of(shifts, id, "limitInShift")) : "–",
      limit ? places(of(shifts, id, "limitAfter")) : "–",
      limit ? seconds(of(shifts, id, "settleDown"), (x) => x < 0) : "–",
      limit ? seconds(of(shifts, id, "settleUp"), (x) => x < 0) : "–",
    ];
  }),
);

const knobText = (s: Scenario, knobs: readonly string[]) =>
  knobs.map((k) => `${k} ${String(s.defaults[k])}`).join(", ");
const block = [
  `Prefetch spike (\`prefetch-spike\`): ${spikes.length} runs of each contender, seeds ${SEEDS.join(", ")} at the defaults and with each of ${knobText(prefetchSpike, spikeKnobs)} 20 % under and over.`,
  "",
  spikeTable,
  "",
  `Capacity shift (\`capacity-shift\`): ${shifts.length} runs of each contender, seeds ${SEEDS.join(", ")} at the defaults and with each of ${knobText(capacityShift, shiftKnobs)} 20 % under and over.`,
  "",
  shiftTable,
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
