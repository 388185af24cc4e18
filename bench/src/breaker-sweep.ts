// The sweep that chose the guard's default breaker (`client` in @tideward/breaker), through
// @tideward/sim's public API. Not a benchmark and not a test: `pnpm bench breaker-sweep` runs it
// (about half an hour on a shared two-core machine; `pnpm bench breaker-sweep --quick`, with
// fewer seeds and a smaller grid, takes a few minutes; `--preset` skips the search, stages 2 and
// 3, and checks `client` alone in about a minute).
//
// The scenario is the page's "Breaker under an outage" at its defaults: Poisson calls at 100 a
// second, an exponential 20 ms latency, every call failing from 40 s, 180 s in all. Its three
// figures are computed as the page computes them. The outage ends at 80 s on the page, which is
// eight of the classic breaker's 5 s open periods, a coincidence that flatters it; so every figure
// is taken over seeds AND over outage ends from 80 to 84 s.
//
// Stages, in order:
// 1. baselines: the classic breaker (5 failures, 5 s open, 1 probe), the `sre` preset and no
//    breaker at each end time; the classic's mean refusals at each end time set the refusal limit.
// 2. formula: 720 sets of the plain formula (window, size, k, probe, protection) at the page's
//    end time: which meet the targets on the mean and on every seed, the least outage share each
//    window allows; then the sets that met them on the mean, at every end time.
// 3a. screen: a grid around the 1 s window (protection 0 included), each set with `halfOpen` off
//    and on, over a few seeds and every end time: how many meet the targets on every run; the best
//    never half-open again over every seed.
// 3b. choice: a fine grid of half-open sets over every seed and end time, with what each refuses
//    of light traffic to a flaky backend and what it leaves of a brownout's goodput; the rule that
//    picks one (see there), and whether `client` is that set.
// 4. preset: `client` against the baselines on the outage, each of its fields moved on its own,
//    seeds it was not chosen on, light traffic, a brownout and a metastable overload.
import { client, sre } from "@tideward/breaker";
import type { Sre } from "@tideward/breaker";
import { policy } from "@tideward/sim";
import type { PolicySpec } from "@tideward/sim";
import { OVERLOAD, brownout, light, outage, overload } from "./sweep/scenarios";
import type { OutageFigures } from "./sweep/scenarios";
import { show, spread, table } from "./sweep/stats";

const quick = process.argv.includes("--quick");
/** `--preset`: only the baselines and the `client` preset (stages 1 and 4), with no search. */
const presetOnly = process.argv.includes("--preset");
/** Seeds every final figure is taken over. */
const SEEDS = range(quick ? 5 : 20);
/** Seeds of the wide grid of stage 3, before its best sets are run over every seed. */
const GRID_SEEDS = range(quick ? 2 : 3);
const ENDS = [80_000, 81_000, 82_000, 83_000, 84_000];
/** The targets: outage calls that reach the backend (a share), seconds back to 90 % success, and refusals while up as a multiple of the classic's. */
const TARGET = { reached: 0.05, recovery: 2, refusals: 2 } as const;

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

const classic = (): PolicySpec => policy.classicBreaker({ threshold: 5, openFor: 5_000, probes: 1 });
const adaptive = (p: Partial<Sre>): PolicySpec => policy.breaker(p);

/** Runs `make`'s policy on every seed at each end time: the figures by end time. */
function runs(
  make: (() => PolicySpec) | undefined,
  seeds: readonly number[],
  ends: readonly number[],
): OutageFigures[][] {
  return ends.map((to) => seeds.map((seed) => outage(make?.(), seed, to)));
}

// Each figure over runs as "mean (least–most)", with its unit.
const share = (rows: readonly OutageFigures[]): string => `${show(spread(rows.map((x) => x.reached)), 2, 100)} %`;
const back = (rows: readonly OutageFigures[]): string => `${show(spread(rows.map((x) => x.recovery)))} s`;
const refused = (rows: readonly OutageFigures[]): string => show(spread(rows.map((x) => x.refusedUp)), 0);
const mean = (rows: readonly OutageFigures[], f: (x: OutageFigures) => number): number => spread(rows.map(f)).mean;

function describe(p: Partial<Sre>): string {
  const parts = [`window ${p.window} ms`, `size ${p.size}`, `k ${p.k}`];
  if (p.floor !== undefined) parts.push(`floor ${p.floor}`);
  parts.push(`protection ${p.protection}`, `probe ${p.probe} ms`);
  if (p.halfOpen === true) parts.push("half-open");
  return parts.join(", ");
}

/** The least slack of each target over every run, as "share / back / refused" (see {@link margin}). */
function margins(byEnd: readonly (readonly OutageFigures[])[]): string {
  const m = [Infinity, Infinity, Infinity];
  byEnd.forEach((rows, e) => {
    for (const x of rows) {
      m[0] = Math.min(m[0], (TARGET.reached - x.reached) / TARGET.reached);
      m[1] = Math.min(m[1], (TARGET.recovery - x.recovery) / TARGET.recovery);
      m[2] = Math.min(m[2], 1 - x.refusedUp / LIMIT[e]);
    }
  });
  return m.map((x) => x.toFixed(2)).join(" / ");
}

function product<T extends Record<string, readonly unknown[]>>(axes: T): { [K in keyof T]: T[K][number] }[] {
  let sets: Record<string, unknown>[] = [{}];
  for (const [name, values] of Object.entries(axes))
    sets = sets.flatMap((s) => values.map((v) => ({ ...s, [name]: v })));
  return sets as { [K in keyof T]: T[K][number] }[];
}

// --- 1. baselines -----------------------------------------------------------------------------

const ends = ENDS.map((e) => e / 1_000).join(", ");
console.log(`# The breaker sweep${quick ? " (quick)" : ""}: ${SEEDS.length} seeds, outage ends ${ends} s\n`);
console.log("## 1. Baselines by outage end: mean (least–most) over seeds\n");
const classicRuns = runs(classic, SEEDS, ENDS);
/** The refusal limit at each end time: twice the classic breaker's mean refusals while up. */
const LIMIT = classicRuns.map((rows) => TARGET.refusals * mean(rows, (x) => x.refusedUp));
const baselines: [string, OutageFigures[][]][] = [
  ["classic breaker", classicRuns],
  ["`sre` preset", runs(() => adaptive(sre), SEEDS, ENDS)],
  ["no breaker", runs(undefined, SEEDS, ENDS)],
];
const byEndRows = (name: string, byEnd: readonly OutageFigures[][]): string[][] =>
  byEnd.map((rows, e) => [name, `${ENDS[e] / 1_000} s`, share(rows), back(rows), refused(rows)]);
table(
  ["policy", "outage ends", "outage calls reaching the backend", "back to 90 % success", "refused while up"],
  baselines.flatMap(([name, byEnd]) => byEndRows(name, byEnd)),
);
console.log(`\nRefusal limit (2 × the classic's mean) by end time: ${LIMIT.map((l) => l.toFixed(0)).join(", ")}\n`);

// --- the targets and a set's rows ------------------------------------------------------------

/** Whether figures meet the three targets at end time `e`. */
function meets(reached: number, recovery: number, refusals: number, e: number): boolean {
  return reached <= TARGET.reached && recovery <= TARGET.recovery && refusals <= LIMIT[e];
}

/**
 * How far a set's worst run stays inside the targets, as the least of three shares: (5 % − worst
 * outage share) / 5 %, (2 s − worst recovery) / 2 s, and 1 − worst refusals over that end's limit.
 * Negative when some run misses a target.
 */
function margin(byEnd: readonly (readonly OutageFigures[])[]): number {
  let m = Infinity;
  byEnd.forEach((rows, e) => {
    for (const x of rows) {
      const slack = Math.min(
        (TARGET.reached - x.reached) / TARGET.reached,
        (TARGET.recovery - x.recovery) / TARGET.recovery,
        1 - x.refusedUp / LIMIT[e],
      );
      if (slack < m) m = slack;
    }
  });
  return m;
}

const QUIET = "refused at 20 calls/s, 40 % failing";
const FINAL = [
  "set",
  "outage share",
  "back to 90 %",
  "refused while up, by end",
  "margin (share, back, refused)",
  QUIET,
];
/** A set's row over `seeds` and every end time, with what it refuses of a quiet, flaky backend. */
const finalRow = (p: Partial<Sre>, seeds: readonly number[] = SEEDS, label = describe(p)): string[] => {
  const byEnd = runs(() => adaptive(p), seeds, ENDS);
  const all = byEnd.flat();
  const quiet = `${(light(() => adaptive(p), 20, 0.4) * 100).toFixed(2)} %`;
  return [label, share(all), back(all), byEnd.map(refused).join(" / "), margins(byEnd), quiet];
};

// --- 2. the plain formula, and 3. halfOpen: skipped with --preset ---------------------------

/** Stages 2 and 3: the search that chose `client`. */
function search(): void {
  console.log("## 2. The plain formula: 720 sets at the page's end time (80 s)\n");
  const formulaGrid: Partial<Sre>[] = product({
    window: [1_000, 2_000, 3_000, 5_000, 10_000],
    size: [10, 20, 40],
    k: [1.1, 1.25, 1.5, 2],
    probe: [100, 250, 500, 1_000],
    protection: [1, 3, 5],
  });
  const least = new Map<number, number>();
  const metOnMean: { p: Partial<Sre>; rows: OutageFigures[] }[] = [];
  let metEverySeed = 0;
  for (const [i, p] of formulaGrid.entries()) {
    const rows = runs(() => adaptive(p), SEEDS, [80_000])[0];
    const reached = mean(rows, (x) => x.reached);
    const w = p.window ?? 0;
    least.set(w, Math.min(least.get(w) ?? Infinity, reached));
    if (
      meets(
        reached,
        mean(rows, (x) => x.recovery),
        mean(rows, (x) => x.refusedUp),
        0,
      )
    )
      metOnMean.push({ p, rows });
    if (rows.every((x) => meets(x.reached, x.recovery, x.refusedUp, 0))) metEverySeed++;
    if (i % 60 === 59) process.stderr.write(`  formula: ${i + 1} of ${formulaGrid.length}\n`);
  }
  console.log(
    `Sets meeting all three targets on the mean over ${SEEDS.length} seeds: ${metOnMean.length} of ${formulaGrid.length}; on every seed: ${metEverySeed}.\n`,
  );
  const leastByWindow = [...least].map(([w, r]) => `${w / 1_000} s ${(r * 100).toFixed(2)} %`);
  console.log(`Least mean outage share by window: ${leastByWindow.join(", ")}\n`);
  if (metOnMean.length > 0) {
    console.log("Those sets over every end time:\n");
    table(
      ["set", "outage share at 80 s", "outage share, all ends", "back to 90 %", "refused while up, by end", "margin"],
      metOnMean.map(({ p, rows }) => {
        const byEnd = [rows, ...runs(() => adaptive(p), SEEDS, ENDS.slice(1))];
        const all = byEnd.flat();
        const refusals = byEnd.map(refused).join(" / ");
        return [describe(p), share(rows), share(all), back(all), refusals, margin(byEnd).toFixed(2)];
      }),
    );
    console.log("\n(refused while up by end: 80 / 81 / 82 / 83 / 84 s; margin: of the worst run, see margin())\n");
  }

  // --- 3. halfOpen ------------------------------------------------------------------------------

  console.log(
    `## 3a. halfOpen off and on: a grid around the 1 s window, ${GRID_SEEDS.length} seeds × ${ENDS.length} end times a set\n`,
  );
  const screenGrid: Partial<Sre>[] = product({
    window: quick ? [1_000] : [500, 1_000, 1_500],
    size: quick ? [10] : [10, 20],
    k: [1.25, 1.5, 2],
    protection: [0, 1, 2, 5],
    probe: [300, 400, 500, 600, 750],
    halfOpen: [false, true],
  });
  const scored: { p: Partial<Sre>; margin: number }[] = [];
  for (const [i, p] of screenGrid.entries()) {
    scored.push({ p, margin: margin(runs(() => adaptive(p), GRID_SEEDS, ENDS)) });
    if (i % 120 === 119) process.stderr.write(`  screen: ${i + 1} of ${screenGrid.length}\n`);
  }
  const byMargin = (a: { margin: number }, b: { margin: number }): number => b.margin - a.margin;
  for (const on of [false, true]) {
    const mine = scored.filter((s) => (s.p.halfOpen === true) === on).sort(byMargin);
    const passing = mine.filter((s) => s.margin > 0).length;
    console.log(
      `halfOpen ${on ? "on" : "off"}: ${passing} of ${mine.length} sets meet all three targets on every run; best margin ${mine[0].margin.toFixed(2)}`,
    );
  }
  const offs = scored
    .filter((s) => s.p.halfOpen !== true)
    .sort(byMargin)
    .slice(0, 3);
  console.log(`\nThe best never half-open, again over ${SEEDS.length} seeds × ${ENDS.length} end times:\n`);
  table(
    FINAL,
    offs.map(({ p }) => finalRow(p)),
  );

  // The choice: among half-open sets with go-zero's floor on a fine grid, every run over every seed
  // and end time, those that leave a quiet client of a flaky backend alone (under 1 % of calls
  // refused at 20 calls a second, 40 % failing) and a brownout's goodput as it is (within 1 % of no
  // breaker's); of those, the one whose worst run keeps the most margin on its tightest target,
  // the longer window first where two are within 0.01 of each other.
  console.log(
    `\n## 3b. The choice: half-open, floor 1.1, size 10, each set over ${SEEDS.length} seeds × ${ENDS.length} end times\n`,
  );
  const fineGrid: Partial<Sre>[] = product({
    window: quick ? [750, 1_000] : [500, 750, 1_000, 1_500],
    probe: quick ? [400, 500] : [300, 400, 500, 600],
    k: [1.5, 2],
    protection: [0, 2, 5],
    floor: [1.1],
    size: [10],
    halfOpen: [true],
  });
  const noneGoodput = spread(GRID_SEEDS.map((seed) => brownout(undefined, seed, false).goodput)).mean;
  const fine = fineGrid.map((p, i) => {
    const byEnd = runs(() => adaptive(p), SEEDS, ENDS);
    const quiet = light(() => adaptive(p), 20, 0.4);
    const goodput = spread(GRID_SEEDS.map((seed) => brownout(adaptive(p), seed, false).goodput)).mean;
    if (i % 12 === 11) process.stderr.write(`  fine: ${i + 1} of ${fineGrid.length}\n`);
    return { p, byEnd, margin: margin(byEnd), quiet, brown: goodput / noneGoodput };
  });
  table(
    ["set", "outage share", "back to 90 %", "margin (share, back, refused)", QUIET, "brownout goodput / no breaker's"],
    fine.map((f) => [
      describe(f.p),
      share(f.byEnd.flat()),
      back(f.byEnd.flat()),
      margins(f.byEnd),
      `${(f.quiet * 100).toFixed(2)} %`,
      f.brown.toFixed(3),
    ]),
  );
  const eligible = fine.filter((f) => f.quiet < 0.01 && f.brown >= 0.99).sort(byMargin);
  const top = eligible[0]?.margin ?? -Infinity;
  const chosen = eligible
    .filter((f) => f.margin >= top - 0.01)
    .sort((a, b) => (b.p.window ?? 0) - (a.p.window ?? 0))[0];
  const same =
    chosen !== undefined && (Object.keys(client) as (keyof Sre)[]).every((key) => chosen.p[key] === client[key]);
  console.log(
    `\nchosen: ${chosen === undefined ? "none" : describe(chosen.p)} (margin ${top.toFixed(2)}); \`client\` is ${same ? "this set" : `NOT this set (${describe(client)})`}\n`,
  );
}

if (!presetOnly) search();

// --- 4. the preset ----------------------------------------------------------------------------

console.log(`## 4. The \`client\` preset: ${describe(client)}\n`);
const clientRuns = runs(() => adaptive(client), SEEDS, ENDS);
table(
  ["policy", "outage ends", "outage calls reaching the backend", "back to 90 % success", "refused while up"],
  [["`client` preset", clientRuns] as const, ...baselines.slice(0, 2)].flatMap(([name, byEnd]) =>
    byEndRows(name, byEnd),
  ),
);
console.log(`\nmargin of \`client\` (worst run; outage share, back, refused): ${margins(clientRuns)}\n`);

// The refusal target run by run: against the classic breaker on the same seed and end time, not
// only against its mean. On a seed where the classic refuses few calls this is the stricter test.
console.log("### Refused while up, against the classic breaker on the same seed and end time\n");
table(
  ["outage ends", "`client` / classic, by seed", "runs over 2 ×", "most refused, `client` / classic"],
  clientRuns.map((rows, e) => {
    const ratios = rows.map((x, s) => x.refusedUp / Math.max(classicRuns[e][s].refusedUp, 1));
    const over = ratios.filter((r) => r > TARGET.refusals).length;
    const most = Math.max(...rows.map((x) => x.refusedUp));
    const classicMost = Math.max(...classicRuns[e].map((x) => x.refusedUp));
    return [`${ENDS[e] / 1_000} s`, show(spread(ratios), 2), `${over} of ${rows.length}`, `${most} / ${classicMost}`];
  }),
);
console.log();

console.log("### Each field of `client` moved on its own, and other seeds\n");
const moves: [string, Partial<Sre>][] = [
  ["`client`", client],
  ["seeds 21–40", client],
  ["window 500 ms", { ...client, window: 500 }],
  ["window 1 s", { ...client, window: 1_000 }],
  ["window 2 s", { ...client, window: 2_000 }],
  ["size 20", { ...client, size: 20 }],
  ["k 1.5", { ...client, k: 1.5 }],
  ["floor 0.1", { ...client, floor: 0.1 }],
  ["protection 0", { ...client, protection: 0 }],
  ["probe 300 ms", { ...client, probe: 300 }],
  ["probe 500 ms", { ...client, probe: 500 }],
  ["never half-open", { ...client, halfOpen: false }],
];
table(
  FINAL,
  moves.map(([label, p]) => finalRow(p, label.startsWith("seeds") ? range(40).slice(20) : SEEDS, label)),
);
console.log();

const contenders: [string, (() => PolicySpec) | undefined][] = [
  ["no breaker", undefined],
  ["classic breaker", classic],
  ["sampling breaker (20 % of 10 s, 5 s open)", () => policy.samplingBreaker({ openFor: 5_000 })],
  ["`sre` preset", () => adaptive(sre)],
  ["`client` preset", () => adaptive(client)],
];

console.log("### Light traffic to a flaky backend: calls refused over ten minutes, three seeds\n");
const LIGHT = [
  [2, 0.05],
  [2, 0.2],
  [5, 0.05],
  [5, 0.2],
  [20, 0.2],
] as const;
table(
  ["policy", ...LIGHT.map(([rate, failing]) => `${rate} calls/s, ${failing * 100} % failing`)],
  contenders.map(([name, make]) => [
    name,
    ...LIGHT.map(([rate, failing]) => `${(light(make, rate, failing) * 100).toFixed(2)} %`),
  ]),
);

console.log("\n### Brownout: 40 % of calls fail from 40 s to 100 s; mean (least–most) over seeds\n");
table(
  ["policy", "goodput, no retries", "backend calls", "goodput, 3 attempts with full jitter", "backend calls"],
  contenders.map(([name, make]) => {
    const plain = SEEDS.map((s) => brownout(make?.(), s, false));
    const retried = SEEDS.map((s) => brownout(make?.(), s, true));
    const count = (rows: { goodput: number; backendCalls: number }[], f: "goodput" | "backendCalls"): string =>
      show(spread(rows.map((x) => x[f])), 0);
    return [
      name,
      count(plain, "goodput"),
      count(plain, "backendCalls"),
      count(retried, "goodput"),
      count(retried, "backendCalls"),
    ];
  }),
);

const o = OVERLOAD;
console.log(
  `\n### Metastable overload: ${o.rate} calls/s to ${o.workers} workers (200/s), ${o.spike}/s from ${o.from / 1_000} to ${o.to / 1_000} s, a ${o.timeout} ms timeout, 3 attempts\n`,
);
table(
  ["policy", "recovered on", "back to 90 % success after the spike", "calls that succeeded, 30 s after"],
  contenders.map(([name, make]) => {
    const rows = SEEDS.map((s) => overload(make?.(), s));
    const ok = rows.filter((x) => x.recovered);
    return [
      name,
      `${ok.length} of ${rows.length} seeds`,
      ok.length === 0 ? "never" : `${show(spread(ok.map((x) => x.recovery)))} s`,
      `${show(spread(rows.map((x) => x.goodputAfter)), 1, 100)} %`,
    ];
  }),
);
