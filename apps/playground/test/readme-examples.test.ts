// Every ```ts block in a package README, and in the reference under its docs/, runs here, so the
// docs cannot drift from the code.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..", "..");
const scratch = join(import.meta.dirname, "..", ".readme-examples");
mkdirSync(scratch, { recursive: true });
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// A block that needs a server runs in its package's own tests, which start one.
const elsewhere = new Set(["redis/docs/reference.md"]);

const read = (path: string): string | undefined => {
  try {
    return readFileSync(join(root, "packages", path), "utf8");
  } catch {
    return undefined;
  }
};
const docs = (name: string): string[] => {
  try {
    return readdirSync(join(root, "packages", name, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `${name}/docs/${f}`)
      .filter((path) => !elsewhere.has(path));
  } catch {
    return [];
  }
};
const blocksOf = (name: string, path: string, label: string) =>
  [...(read(path) ?? "").matchAll(/```ts\n([\s\S]*?)```/g)].map((m, i) => ({
    name,
    label: `${label} #${i + 1}`,
    file: `${label.replaceAll("/", "-")}-${i}`,
    code: m[1] ?? "",
  }));

const packages = readdirSync(join(root, "packages"));
const blocks = packages.flatMap((name) => blocksOf(name, `${name}/README.md`, name));
const referenceBlocks = packages.flatMap((name) => docs(name).flatMap((path) => blocksOf(name, path, path)));

describe("README examples", () => {
  it("every package has a README with at least one example", () => {
    const documented = new Set(blocks.map((b) => b.name));
    expect(packages.filter((p) => !documented.has(p))).toEqual([]);
  });

  // The first block of a package pays for transforming its sources, which on a loaded machine
  // (verify runs every task at once) can pass vitest's 5 s default; a block cut short would
  // also leak its late console.log lines into the next block's capture.
  it.each([...blocks, ...referenceBlocks].map((b) => [b.label, b] as const))(
    "%s runs",
    { timeout: 60_000 },
    async (_, block) => {
      const file = join(scratch, `${block.file}.ts`);
      writeFileSync(file, block.code);
      const log: unknown[] = [];
      const original = console.log;
      console.log = (...args: unknown[]) => void log.push(args);
      try {
        await import(pathToFileURL(file).href);
      } finally {
        console.log = original;
      }
      // A block that logs prints what its comments promise: `console.log(x); // y` means x is y.
      const promised = [...block.code.matchAll(/console\.log\((.*)\);\s*\/\/ (.+)$/gm)].map((m) => m[2]?.trim());
      expect(
        log.map((args) =>
          (args as unknown[]).map((a) => (typeof a === "string" ? JSON.stringify(a) : String(a))).join(" "),
        ),
      ).toEqual(promised);
    },
  );
});
