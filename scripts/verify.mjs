// The whole check a change must pass: lint, the format check, the import-cycle check, typecheck,
// tests, the package checks (publint and arethetypeswrong on every built package) and the
// consumer test (every package published to a local registry and installed from it, and its API
// report compared), all through turbo; then the plain total of tests from vitest's own JSON
// reports, so a run that executed no test is visible.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(import.meta.dirname, "..");
const workspaces = ["packages", "apps", "bench", "tests"].flatMap((group) => {
  const dir = join(root, group);
  if (group === "bench") return [dir];
  return existsSync(dir) ? readdirSync(dir).map((name) => join(dir, name)) : [];
});
// Each vitest run of a workspace writes its own JSON report (vitest.json; the playground's page
// tests write web.json, and a package's tests of a real server in real time, run alone in the
// second phase, live.json).
const reports = workspaces.flatMap((dir) =>
  ["vitest.json", "web.json", "live.json"].map((name) => join(dir, ".reports", name)),
);
for (const report of reports) rmSync(report, { force: true });

// Colour only for a terminal: piped into a file or a CI log, escape codes are noise. (vitest, like
// most tools, colours whenever CI is set, terminal or not.) NO_COLOR or FORCE_COLOR set by the
// caller wins; turbo passes both on to every task.
const env = { ...process.env };
if (!process.stdout.isTTY && env.NO_COLOR === undefined && env.FORCE_COLOR === undefined) env.NO_COLOR = "1";

const run = (tasks) =>
  spawnSync("turbo", ["run", ...tasks, "--continue", ...process.argv.slice(2)], {
    cwd: root,
    env,
    stdio: "inherit",
    shell: process.platform === "win32",
  }).status;
// The format check reads every file in the tree: it runs alone, first, so that no other task's
// temporary files (a pack's, a build's) come and go while it lists them.
const format = run(["format:check"]);
// The playground's tests run the example programs, some of which time a real server under load,
// and the guard's default breaker is timed through an outage of a real server: they run second,
// alone, so that lint, typechecks and other suites do not starve them.
const first = run([
  "lint",
  "typecheck",
  "test",
  "check:package",
  "test:consumer",
  "lint:root",
  "typecheck:root",
  "lint:imports",
]);
const second = run(["test:examples"]);
// The page tests build the playground and drive Chromium: alone too, after the examples.
const third = run(["test:web"]);
const turbo = { status: format === 0 && first === 0 && second === 0 && third === 0 ? 0 : 1 };

let passed = 0;
let failed = 0;
// Each failure by file and name, printed last: in a long log the summary is what is read.
const failures = [];
for (const report of reports) {
  if (!existsSync(report)) continue;
  const r = JSON.parse(readFileSync(report, "utf8"));
  passed += r.numPassedTests;
  for (const file of r.testResults ?? []) {
    const where = relative(root, file.name);
    // A file that fails to load counts no test as failed; count it as one so it cannot hide.
    if (file.status === "failed" && file.assertionResults.length === 0) {
      failed++;
      failures.push(`${where}: ${String(file.message ?? "failed to run").split("\n")[0]}`);
    }
    for (const test of file.assertionResults) {
      if (test.status !== "failed") continue;
      failed++;
      failures.push(`${where} > ${test.fullName}: ${String(test.failureMessages?.[0] ?? "").split("\n")[0]}`);
    }
  }
}
const ok = turbo.status === 0 && failed === 0 && passed > 0;
if (turbo.status !== 0)
  console.log("\nturbo reported a failing task (lint, typecheck, test or package check); see above.");
if (failures.length > 0) console.log(`\nfailed:\n${failures.map((f) => `  ${f}`).join("\n")}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(ok ? 0 : 1);
