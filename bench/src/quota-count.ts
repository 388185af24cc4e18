// What the in-process quota engine runs a call, counted: instructions by valgrind's callgrind for
// a charge set of three (checkAtomic), the floor under a reserve (that, then the least a record
// costs: RecordFloor in quota-floor.ts), a reserve (given its time to live, and given no options,
// the policy's), and a reserve then a settle at once. The count does not depend on the machine's
// load, where the reserve race's wall-clock ratio (quota.bench.ts) does.
//
// The method: quota-count-run.ts, bundled with esbuild from the packages' source with the syntax
// minified as the packages ship, runs under
// `node --predictable` (one thread: no concurrent compiler or collector) with fixed hash and
// random seeds, inside callgrind, twice a case: with 40 000 counted calls and with none, after the
// same 40 000 warm-up calls; a call's count is the difference over 40 000. 10 000 keys, every
// reservation expiring 1 ms later (about 1 000 held, so every reserve pays one expiry).
//
// Run: pnpm bench quota-count (valgrind must be installed; it takes a few minutes).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";

const CALLS = 40_000;
const WARM = 40_000;
const CASES = ["atomic", "floor", "reserve", "bare", "settle"] as const;
type Case = (typeof CASES)[number];

if (spawnSync("valgrind", ["--version"]).status !== 0) throw new Error("valgrind is not installed");
const dir = mkdtempSync(join(tmpdir(), "tideward-quota-count-"));
process.once("exit", () => rmSync(dir, { recursive: true, force: true }));

const program = join(dir, "run.mjs");
await build({
  entryPoints: [join(import.meta.dirname, "quota-count-run.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  conditions: ["@tideward/source"],
  outfile: program,
  logLevel: "warning",
  // As the packages ship (tsup.config.ts): constants imported from another module are folded
  // into the code that reads them, where unminified each read loads a module variable.
  minifySyntax: true,
});

/** The instructions callgrind counts in one run of the program. */
function total(mode: Case, calls: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const out = join(dir, `cg.${mode}.${calls}`);
    const run = spawn(
      "valgrind",
      [
        "--tool=callgrind",
        "--smc-check=all-non-file", // V8 writes the code it runs
        `--callgrind-out-file=${out}`,
        process.execPath,
        "--predictable",
        "--hash-seed=1",
        "--random-seed=1",
        program,
      ],
      { env: { ...process.env, MODE: mode, K: String(calls), W: String(WARM) }, stdio: ["ignore", "inherit", "pipe"] },
    );
    let err = "";
    run.stderr.setEncoding("utf8").on("data", (s: string) => (err += s));
    run.on("error", reject);
    run.on("close", (code) => {
      const n = /Collected : (\d+)/.exec(err)?.[1];
      if (code !== 0 || n === undefined) reject(new Error(`${mode} × ${calls}: exit ${code}\n${err.slice(-2_000)}`));
      else resolve(Number(n));
    });
  });
}

const perCall = new Map<Case, number>();
for (const mode of CASES) {
  // The two runs of a case side by side: two processes, one thread each.
  const [none, some] = await Promise.all([total(mode, 0), total(mode, CALLS)]);
  perCall.set(mode, (some - none) / CALLS);
}

const at = (c: Case): number => perCall.get(c) ?? NaN;
const n = (x: number): string => Math.round(x).toLocaleString("en");
const rows: [string, number, string][] = [
  ["a charge set of three (checkAtomic)", at("atomic"), "—"],
  ["the floor: checkAtomic, then the least a record costs", at("floor"), `${(at("floor") / at("atomic")).toFixed(2)}×`],
  ["reserve (expires 1 ms later, ~1 000 held)", at("reserve"), `${(at("reserve") / at("atomic")).toFixed(2)}×`],
  ["reserve given no options (the policy's time to live)", at("bare"), `${(at("bare") / at("atomic")).toFixed(2)}×`],
  [
    "reserve, then settle at once (tokens back)",
    at("settle"),
    `${(at("settle") / at("atomic")).toFixed(2)}× (${(at("settle") / at("reserve")).toFixed(2)}× a reserve)`,
  ],
  ["settle alone (that, less a reserve)", at("settle") - at("reserve"), "—"],
];
console.log(
  `\nInstructions a call (callgrind, node ${process.version} --predictable, ${CALLS.toLocaleString("en")} calls less none, after ${WARM.toLocaleString("en")} warm-up):`,
);
console.log(`  ${"case".padEnd(56)} ${"instructions".padStart(12)}   ÷ checkAtomic`);
for (const [name, x, ratio] of rows) console.log(`  ${name.padEnd(56)} ${n(x).padStart(12)}   ${ratio}`);
console.log(
  `  → reserve ${(at("reserve") / at("floor")).toFixed(2)}× the floor; beyond the charge set a reserve runs ${n(at("reserve") - at("atomic"))} more, the floor ${n(at("floor") - at("atomic"))}`,
);
