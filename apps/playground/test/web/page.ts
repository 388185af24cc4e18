// What the page tests share: building the page once into the artefact folder, and finding the
// browser. The folder (.artefacts, ignored by git) keeps the build, the screenshots and the
// generated tests for a reviewer to look at after a run.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "vite";

export const app = join(import.meta.dirname, "..", "..");
export const artefacts = join(app, ".artefacts");
export const dist = join(artefacts, "dist");

/** Builds the page into `.artefacts/dist`, quietly, and returns that folder. */
export async function buildPage(): Promise<string> {
  await build({
    root: app,
    configFile: join(app, "vite.config.ts"),
    logLevel: "error",
    build: { outDir: dist, emptyOutDir: true },
  });
  return dist;
}

/** Debian's Chromium, the browser the page tests drive. */
export const chromiumPath = "/usr/bin/chromium";

/** The flags TOOLCHAIN.md lists for Chromium here: headless, no sandbox, nothing reaching out. */
export const chromiumArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/**
 * Whether the browser is here. Under CI=true a missing browser is a failure; elsewhere the
 * browser tests skip, saying how to install it.
 */
export function haveChromium(): boolean {
  if (existsSync(chromiumPath)) return true;
  if (process.env.CI === "true")
    throw new Error(
      `CI=true and there is no Chromium at ${chromiumPath}: apt-get install -y chromium (it is in .ci/apt-packages)`,
    );
  console.warn(`page tests in Chromium skipped: no ${chromiumPath} here (apt-get install -y chromium)`);
  return false;
}

/** The root of the repository, and the vitest entry a child process runs. */
export const repo = join(app, "..", "..");
export const vitestBin = join(repo, "node_modules", "vitest", "vitest.mjs");

/** What a child vitest made of a folder of generated tests. */
export interface SnippetRun {
  readonly status: number | null;
  readonly passed: number;
  readonly failed: number;
  /** The child's output, for a failure message. */
  readonly output: string;
}

/**
 * Writes each generated test into `.artefacts/<folder>/test/` and runs them in a vitest of
 * their own, as a user would run a pasted test: a child process, its own config, sibling
 * packages resolved to their sources.
 */
export function runSnippets(folder: string, files: readonly { name: string; code: string }[]): SnippetRun {
  const root = join(artefacts, folder);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(join(root, "test"), { recursive: true });
  writeFileSync(
    join(root, "vitest.config.ts"),
    `export { default } from ${JSON.stringify(join(repo, "vitest.shared.ts"))};\n`,
  );
  for (const f of files) writeFileSync(join(root, "test", f.name), f.code);
  const child = spawnSync(process.execPath, [vitestBin, "run", "--root", root], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, FORCE_COLOR: "0" },
  });
  const report = join(root, ".reports", "vitest.json");
  const r = existsSync(report)
    ? (JSON.parse(readFileSync(report, "utf8")) as { numPassedTests: number; numFailedTests: number })
    : { numPassedTests: 0, numFailedTests: 0 };
  return {
    status: child.status,
    passed: r.numPassedTests,
    failed: r.numFailedTests,
    output: `${child.stdout}\n${child.stderr}`,
  };
}
