// `pnpm claims` (or `pnpm bench claims`): every figure the scoreboard and the READMEs state about a
// scenario, measured as a range: each situation of src/claims/situations.ts on seeds 1–10, at
// the scenario's defaults and with each main knob (load, an outage's or a trigger's length, the
// deadline) 20 % below and above its default. Writes src/claims/claims.json, which the page's
// first screen draws its scoreboard from, and the READMEs' blocks between their markers. Not a
// test: it takes minutes of one core. Run it alone on a shared machine:
//   flock /tmp/tideward-bench.lock nice pnpm claims
// Options: --seeds N (10), --only id,id (those situations, the rest kept from the file as it is),
// --render (no runs: the file's figures under the situations' words as they are now, and the
// READMEs written again from them).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { format, resolveConfig } from "prettier";
import type { ClaimsData, SituationData } from "../src/claims/data.ts";
import { between, claimsBlock, scoreboardBlock, sideBySide } from "../src/claims/markdown.ts";
import { figuresOf, groups, runAt } from "../src/claims/measure.ts";
import { FACTORS, TOKEN_BUDGET_SITUATIONS, situations } from "../src/claims/situations.ts";

const root = join(import.meta.dirname, "..", "..", "..");
const file = join(import.meta.dirname, "..", "src", "claims", "claims.json");
/** The READMEs that print the script's output, and the block each prints. */
const readmes: readonly { path: string; marker: string; block: (d: ClaimsData) => string }[] = [
  { path: join(root, "README.md"), marker: "scoreboard", block: scoreboardBlock },
  { path: join(root, "packages", "sim", "README.md"), marker: "claims", block: claimsBlock },
  {
    path: join(root, "packages", "quota-engine", "README.md"),
    marker: "token-budget",
    block: (d) => sideBySide(d, TOKEN_BUDGET_SITUATIONS),
  },
];

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

const seedCount = Number(option("seeds") ?? 10);
if (!Number.isInteger(seedCount) || seedCount < 1)
  throw new RangeError(`--seeds must be a whole number from 1, got ${option("seeds")}`);
const only = option("only")?.split(",");
for (const id of only ?? [])
  if (!situations.some((x) => x.id === id))
    throw new RangeError(
      `--only: no situation ${JSON.stringify(id)}; there are ${situations.map((x) => x.id).join(", ")}`,
    );
const seeds = Array.from({ length: seedCount }, (_, i) => i + 1);
const chosen = situations.filter((x) => only === undefined || only.includes(x.id));

const render = process.argv.includes("--render");
const before: ClaimsData | undefined =
  only === undefined && !render ? undefined : (JSON.parse(readFileSync(file, "utf8")) as ClaimsData);

/** A situation's data: its words from its definition, its figures as measured. */
function dataOf(
  x: (typeof situations)[number],
  settings: SituationData["settings"],
  values: (id: string) => (number | null)[][],
): SituationData {
  return {
    id: x.id,
    scenario: x.scenario,
    title: x.title,
    reason: x.reason,
    scoreboard: x.scoreboard,
    ranked: x.ranked ?? true,
    figure: {
      label: x.figure.label,
      unit: x.figure.unit,
      better: x.figure.better,
      digits: x.figure.digits,
      ...(x.figure.none === undefined ? {} : { none: x.figure.none }),
    },
    moved: x.nearby.map((n) => n.what),
    settings,
    // Kept to two places past those printed: enough to rank and compare, no float noise in the file.
    contenders: x.contenders.map((c) => ({
      ...c,
      values: values(c.id).map((row) => row.map((v) => (v === null ? null : Number(v.toFixed(x.figure.digits + 2))))),
    })),
  };
}

const measured = new Map<string, SituationData>();
const started = performance.now();
if (render)
  for (const x of situations) {
    const old = before?.situations.find((y) => y.id === x.id);
    if (old === undefined) throw new Error(`--render: claims.json has no ${x.id}; run it`);
    measured.set(
      x.id,
      dataOf(x, old.settings, (id) => {
        const c = old.contenders.find((y) => y.id === id);
        if (c === undefined) throw new Error(`--render: claims.json has no ${x.id} / ${id}; run it`);
        return c.values.map((row) => [...row]);
      }),
    );
  }
for (const g of render ? [] : groups(chosen)) {
  // values[situation][contender][setting][seed]
  const values = new Map<string, Map<string, (number | null)[][]>>();
  for (const x of g.situations) values.set(x.id, new Map(x.contenders.map((c) => [c.id, g.settings.map(() => [])])));
  g.settings.forEach((setting, i) => {
    for (const seed of seeds) {
      const figures = figuresOf(g, runAt(g, i, seed));
      for (const [situation, byContender] of Object.entries(figures))
        for (const [contender, v] of Object.entries(byContender)) values.get(situation)?.get(contender)?.[i]?.push(v);
    }
    process.stderr.write(
      `${g.scenario.name}: ${setting.label} on ${seeds.length} seeds (${((performance.now() - started) / 1_000).toFixed(0)} s)\n`,
    );
  });
  for (const x of g.situations)
    measured.set(
      x.id,
      dataOf(x, g.settings, (id) => values.get(x.id)?.get(id) ?? []),
    );
}

if (only !== undefined && before !== undefined && before.seeds.length !== seeds.length)
  throw new RangeError(
    `--only with --seeds ${seeds.length}, but the file has ${before.seeds.length} seeds: run them all`,
  );
const data: ClaimsData = {
  computed: render && before !== undefined ? before.computed : new Date().toISOString().slice(0, 10),
  seeds: render && before !== undefined ? before.seeds : seeds,
  factors: [...FACTORS],
  situations: situations.flatMap((x) => {
    const s = measured.get(x.id) ?? before?.situations.find((y) => y.id === x.id);
    return s === undefined ? [] : [s];
  }),
};
// Written as the repository's formatter writes it, so a new run's diff is the figures that moved.
writeFileSync(file, await format(JSON.stringify(data), { ...(await resolveConfig(file)), parser: "json" }));
for (const r of readmes) writeFileSync(r.path, between(readFileSync(r.path, "utf8"), r.marker, r.block(data)));
console.log(claimsBlock(data));
process.stderr.write(
  `wrote ${file} and ${readmes.map((r) => r.path).join(", ")} in ${((performance.now() - started) / 1_000).toFixed(0)} s\n`,
);
