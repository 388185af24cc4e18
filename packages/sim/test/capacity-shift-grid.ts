// Which settings of the three adaptive limits settle within ±20 % of the workers left in the
// capacity shift: each algorithm over a grid of its constants and of sample windows, at the
// scenario's defaults on two seeds, with what each setting kept of goodput in the shift and
// refused at steady load. Prints the settings that settled (on every seed) and, per algorithm, the
// five with the most goodput in the shift. The README's head-to-head quotes it.
//
//   node --conditions=@tideward/source --import tsx packages/sim/test/capacity-shift-grid.ts
import { capacityShift } from "@tideward/sim";
import type { CapacityShiftParams } from "@tideward/sim";
import type { SampleWindow } from "@tideward/concurrency";
import { SHIFT_CONTENDERS, runShift } from "../src/scenarios/capacity-shift";

const SEEDS = [1, 2];
/** Each sample window tried; `null`: a sample a call. */
const WINDOWS: [string, Partial<SampleWindow> | null][] = [
  ["a call", null],
  ["100 ms", { min: 100, max: 100 }],
  ["250 ms", { min: 250, max: 250 }],
  ["1 s", { min: 1_000, max: 1_000 }],
];

type Setting = readonly [kind: "gradient2" | "vegas" | "aimd", policy: Readonly<Record<string, number>>];
const SETTINGS: Setting[] = [];
for (const long of [600, 6_000, 60_000])
  for (const tolerance of [1.1, 1.2, 1.5])
    for (const queue of [1, 4]) SETTINGS.push(["gradient2", { long, tolerance, queue }]);
for (const timeout of [45, 50, 60, 80, 1_000])
  for (const backoff of [0.9, 0.5]) SETTINGS.push(["aimd", { timeout, backoff }]);
for (const [alpha, beta, threshold] of [
  [3, 6, 1],
  [2, 4, 1],
  [1, 2, 0],
  [1, 1, 0],
])
  for (const smoothing of [1, 0.2]) {
    SETTINGS.push(["vegas", { alpha, beta, threshold, smoothing }]);
    // The opt-in steps that scale with the gap.
    if (smoothing === 1) SETTINGS.push(["vegas", { alpha, beta, threshold, drain: 1, grow: 1 }]);
  }

interface Row {
  readonly kind: string;
  readonly setting: string;
  /** Per seed: seconds to settle after the drop and after the return (-1: never), mean limit in the shift, goodput in the shift, refused before it. */
  readonly settle: number[];
  readonly up: number[];
  readonly limit: number[];
  readonly goodput: number[];
  readonly refused: number[];
}

const rows: Row[] = [];
for (const [window, w] of WINDOWS)
  for (const [kind, policy] of SETTINGS) {
    const c = SHIFT_CONTENDERS.find((x) => x.id === kind);
    if (c === undefined) throw new Error(`no ${kind} in capacity-shift`);
    const row: Row = {
      kind,
      setting: `${window}, ${JSON.stringify(policy)}`,
      settle: [],
      up: [],
      limit: [],
      goodput: [],
      refused: [],
    };
    for (const seed of SEEDS) {
      const p = { ...capacityShift.defaults, seed } as CapacityShiftParams;
      const f = runShift(p, 0, c, { id: "x", policy, window: w }).figures;
      row.settle.push(f["x.settleDown"]);
      row.up.push(f["x.settleUp"]);
      row.limit.push(f["x.limitInShift"]);
      row.goodput.push(f["x.goodputInShift"]);
      row.refused.push(f["x.refusedBefore"]);
    }
    rows.push(row);
  }

const range = (xs: readonly number[], digits: number, scale = 1) => {
  const lo = (Math.min(...xs) * scale).toFixed(digits);
  const hi = (Math.max(...xs) * scale).toFixed(digits);
  return lo === hi ? lo : `${lo}–${hi}`;
};
const line = (r: Row) =>
  `${r.kind.padEnd(9)} ${r.setting.padEnd(60)} settled ${r.settle.map((x) => (x < 0 ? "never" : `${x} s`)).join(", ")} (after the return ${r.up.map((x) => (x < 0 ? "never" : `${x} s`)).join(", ")}); limit ${range(r.limit, 1)}; goodput ${range(r.goodput, 1, 100)} %; refused before ${range(r.refused, 1, 100)} %`;

const settled = rows.filter((r) => r.settle.every((x) => x >= 0 && x <= 10));
console.log(
  `${rows.length} settings on seeds ${SEEDS.join(", ")}: ${settled.length} settled within ±20 % of the workers left within 10 s on every seed${settled.length > 0 ? ":" : "."}`,
);
for (const r of settled) console.log(`  ${line(r)}`);
for (const kind of ["gradient2", "vegas", "aimd"]) {
  console.log(`${kind}: the five with the most goodput in the shift`);
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const r of rows
    .filter((x) => x.kind === kind)
    .sort((a, b) => mean(b.goodput) - mean(a.goodput))
    .slice(0, 5))
    console.log(`  ${line(r)}`);
}
const near = rows.filter((r) => r.limit.every((x) => x >= 6.4 && x <= 9.6));
const above = rows.filter((r) => r.limit.every((x) => x >= 13 && x <= 24));
console.log(
  `settings whose mean limit in the shift was within ±20 % of 8 on every seed: ${near.length}, goodput in the shift ${
    near.length > 0
      ? range(
          near.flatMap((r) => r.goodput),
          1,
          100,
        )
      : "–"
  } %; from 13 to 24 places: ${above.length}, goodput ${
    above.length > 0
      ? range(
          above.flatMap((r) => r.goodput),
          1,
          100,
        )
      : "–"
  } %`,
);
