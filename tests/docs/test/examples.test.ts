// Every TSDoc @example in the packages' sources runs here, type-checked first, so the docs a
// user reads in an editor's hover cannot drift from the code (README blocks are run by
// apps/playground/test/readme-examples.test.ts). The conventions are in ./examples.ts.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { assertions, examples, inFile, isTest, module } from "./examples";
import type { Example } from "./examples";

const root = join(import.meta.dirname, "..", "..", "..");
const scratch = join(import.meta.dirname, "..", ".examples");
rmSync(scratch, { recursive: true, force: true });
mkdirSync(scratch, { recursive: true });
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Manifest {
  name: string;
  private?: boolean;
  exports?: Record<string, unknown>;
  devDependencies?: Record<string, string>;
}
const read = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Manifest;
const folders = readdirSync(join(root, "packages"))
  .sort()
  .filter((f) => {
    try {
      return read(join(root, "packages", f, "package.json")).private !== true;
    } catch {
      return false;
    }
  });

// The names every entry point of a package exports (at run time), which an example may use
// without importing.
async function exportsOf(folder: string): Promise<Map<string, string[]>> {
  const manifest = read(join(root, "packages", folder, "package.json"));
  const out = new Map<string, string[]>();
  for (const key of Object.keys(manifest.exports ?? { ".": null })) {
    if (key === "./package.json" || key.includes("*")) continue;
    const specifier = key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`;
    out.set(specifier, Object.keys((await import(specifier)) as object));
  }
  return out;
}

const written: (Example & { path: string; test: boolean })[] = [];
for (const folder of folders) {
  const exported = await exportsOf(folder);
  for (const example of examples(root, folder)) {
    const path = join(
      scratch,
      folder,
      `${example.file.replace(/^packages\/[^/]+\/src\//, "").replace(/[/.]/g, "_")}-${example.line}.ts`,
    );
    mkdirSync(join(scratch, folder), { recursive: true });
    writeFileSync(path, module(example, exported));
    written.push({ ...example, path, test: isTest(example.code) });
  }
}

// One compiler run over every example; its errors, by file.
writeFileSync(
  join(scratch, "tsconfig.json"),
  JSON.stringify({
    extends: "../../../tsconfig.base.json",
    compilerOptions: { noUnusedLocals: false, noUnusedParameters: false },
    include: ["**/*.ts"],
  }),
);
const tsc = spawnSync(
  process.execPath,
  [
    createRequire(import.meta.url).resolve("typescript/bin/tsc"),
    "-p",
    join(scratch, "tsconfig.json"),
    "--pretty",
    "false",
  ],
  {
    encoding: "utf8",
  },
);
const typeErrors = new Map<string, string[]>();
for (const line of tsc.stdout.split("\n")) {
  const m = /^(.+?\.ts)\(\d+,\d+\): error/.exec(line);
  if (m?.[1] === undefined) continue;
  const file = join(scratch, m[1].replace(/^.*\.examples\//, ""));
  typeErrors.set(file, [...(typeErrors.get(file) ?? []), line.replace(/^.*\.examples\//, "")]);
}

describe("the example runner", () => {
  it("lists every published package as a dependency of this test, so examples can import it", () => {
    const deps = Object.keys(read(join(import.meta.dirname, "..", "package.json")).devDependencies ?? {}).filter((n) =>
      n.startsWith("@tideward/"),
    );
    expect(deps.sort()).toEqual(folders.map((f) => read(join(root, "packages", f, "package.json")).name).sort());
  });

  it("finds examples in TSDoc, fenced or not, and stops at the next tag", () => {
    const text = [
      "/**",
      " * Adds.",
      " * @example",
      " * add(1, 2); // 3",
      " * @param a - one",
      " */",
      "/** @example ```ts",
      " * add(2, 2); // 4",
      " * ```",
      " */",
    ].join("\n");
    expect(inFile(text)).toEqual([
      { line: 3, code: "add(1, 2); // 3" },
      { line: 7, code: "add(2, 2); // 4" },
    ]);
  });

  it("reads `expression; // literal` as an assertion, and other comments as prose", () => {
    const code = [
      "b.ceiling(3);   // 400",
      'parseSpan("1h") // 3_600_000',
      "win.next(5);  // 500 — the event at 0 falls out",
      "spend.tryRetry(0); // true: one retry per two",
      'f("x"); // "168ms"',
      "g(); // [50, 100]",
      "h(); // 2 a second",
      "const x = f(); // 3",
      "i(); // the sre preset",
    ].join("\n");
    expect(assertions(code)).toEqual([
      [0, "b.ceiling(3)", "400"],
      [1, 'parseSpan("1h")', "3_600_000"],
      [2, "win.next(5)", "500"],
      [3, "spend.tryRetry(0)", "true"],
      [4, 'f("x")', '"168ms"'],
      [5, "g()", "[50, 100]"],
    ]);
  });

  it("turns an assertion into a check that fails when the value differs", async () => {
    const example = { folder: "x", file: "x.ts", line: 1, code: "Math.max(1, 2); // 3" };
    const path = join(scratch, "self-check.ts");
    writeFileSync(path, module(example, new Map()));
    await expect(import(pathToFileURL(path).href)).rejects.toThrow(/x\.ts:2: Math\.max\(1, 2\)/);
  });

  it("found examples to run", () => {
    expect(written.length).toBeGreaterThan(0);
    expect(tsc.error).toBeUndefined();
  });
});

// Test code first: an example that is a vitest suite registers its tests as this file loads.
for (const example of written.filter((e) => e.test)) {
  describe(`${example.file}:${example.line} (a test suite)`, () => {
    it("type-checks", () => expect(typeErrors.get(example.path) ?? []).toEqual([]));
  });
  await import(pathToFileURL(example.path).href);
}

describe.each(folders)("@example blocks of %s", (folder) => {
  const mine = written.filter((e) => e.folder === folder && !e.test);
  it.each(mine.map((e) => [`${e.file}:${e.line}`, e] as const))(
    "%s type-checks and runs",
    { timeout: 30_000 },
    async (_, example) => {
      expect(typeErrors.get(example.path) ?? []).toEqual([]);
      await import(pathToFileURL(example.path).href);
    },
  );
});
