// What `npm pack` puts in each package's tarball, from the built packages: the size table (printed,
// and held to the targets), that it is one build, and that the built code and declarations import
// nothing the package does not declare, and declare nothing they do not import. (Which
// declarations need Node's types is checked by compiling them, in consumer.test.ts.)
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { closure, publicPackages } from "./workspace";

// The targets, in bytes unpacked as `npm pack` counts them. cockatiel 3.2.1 (the whole library,
// its nearest peer) unpacks to 465,428 bytes by `npm pack --dry-run --json` of its published
// tarball: @tideward/guard with everything it installs must not weigh more.
const GUARD_WITH_DEPENDENCIES = 465_428;
// Every package within 150 kB, but four that carry more than their own code: the simulator
// (its catalogue of eighteen scenarios, each with the prose of its report), the quota engine (the
// conformance suites every store adapter runs, a third of its code), the Redis store (its Lua
// scripts, embedded as strings) and the guard (a client guard and a server admission with three
// framework adapters: two packages' worth in one, still held whole to cockatiel's size above).
const TARGET: Record<string, number> = {
  "@tideward/sim": 450_000,
  "@tideward/quota-engine": 225_000,
  "@tideward/redis": 200_000,
  "@tideward/guard": 180_000,
};
const PACKAGE = 150_000;

const packages = publicPackages();
const builtins = new Set(builtinModules);

interface Packed {
  unpacked: number;
  files: { path: string; size: number }[];
}

function npmPack(dir: string): Promise<Packed> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["pack", "--dry-run", "--json", "--ignore-scripts", "--loglevel=error"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.once("error", reject);
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`npm pack in ${dir} exited ${code}: ${err}`));
      const [report] = JSON.parse(out) as { unpackedSize: number; files: { path: string; size: number }[] }[];
      if (report === undefined) return reject(new Error(`npm pack in ${dir} reported nothing`));
      resolve({ unpacked: report.unpackedSize, files: report.files });
    });
  });
}

const packs = new Map<string, Packed>();
beforeAll(async () => {
  await Promise.all([...packages].map(async ([name, { dir }]) => packs.set(name, await npmPack(dir))));
}, 120_000);

const pack = (name: string) => {
  const p = packs.get(name);
  if (p === undefined) throw new Error(`${name} was not packed`);
  return p;
};
const sum = (files: Packed["files"], keep: (path: string) => boolean) =>
  files.filter((f) => keep(f.path)).reduce((n, f) => n + f.size, 0);
const withDependencies = (name: string) => closure([name], packages).reduce((n, dep) => n + pack(dep).unpacked, 0);

/** What a shipped file imports, by TypeScript's own reading (comments and strings skipped). */
function imports(dir: string, path: string): string[] {
  const text = readFileSync(join(dir, path), "utf8");
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}
/** The package a specifier names (`@tideward/time/internal` → `@tideward/time`), or undefined for a relative one. */
const packageOf = (specifier: string) =>
  specifier.startsWith(".")
    ? undefined
    : specifier
        .split("/")
        .slice(0, specifier.startsWith("@") ? 2 : 1)
        .join("/");

describe("what npm packs", () => {
  it("is printed as a table, each package within its target", () => {
    const kb = (n: number) => `${(n / 1000).toFixed(1)} kB`;
    const rows = [...packages.keys()].map((name) => {
      const { unpacked, files } = pack(name);
      return {
        name,
        unpacked,
        maps: sum(files, (p) => p.endsWith(".map")),
        src: sum(files, (p) => p.startsWith("src/")),
        declarations: sum(files, (p) => p.endsWith(".d.ts")),
        code: sum(files, (p) => p.endsWith(".js")),
        all: withDependencies(name),
        target: TARGET[name] ?? PACKAGE,
      };
    });
    const table = [
      "| package | unpacked | of which maps | of which src | of which .d.ts | of which .js | with its dependencies | target |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
      ...rows.map(
        (r) =>
          `| ${r.name} | ${kb(r.unpacked)} | ${kb(r.maps)} | ${kb(r.src)} | ${kb(r.declarations)} | ${kb(r.code)} | ${kb(r.all)} | ≤ ${kb(r.target)} |`,
      ),
    ].join("\n");
    console.log(`\nnpm pack, unpacked bytes (kB = 1000 bytes):\n${table}\n`);
    mkdirSync(join(import.meta.dirname, "..", ".reports"), { recursive: true });
    writeFileSync(join(import.meta.dirname, "..", ".reports", "packs.md"), `${table}\n`);
    const over = rows.filter((r) => r.unpacked > r.target).map((r) => `${r.name}: ${r.unpacked} > ${r.target}`);
    expect(over).toEqual([]);
  });

  it("of @tideward/guard and everything it installs weighs no more than cockatiel 3.2.1", () => {
    expect(closure(["@tideward/guard"], packages).length).toBeGreaterThan(1);
    expect(withDependencies("@tideward/guard")).toBeLessThanOrEqual(GUARD_WITH_DEPENDENCIES);
  });

  it("is one build: ES modules and one declaration file per module, no maps, no sources", () => {
    const stray: string[] = [];
    for (const [name, { manifest }] of packages) {
      // A subpath's folder holds only its package.json (for Node 10 resolution), bin/ the CLI.
      const subpaths = Object.keys(manifest.exports ?? {}).map((k) => k.slice(2));
      for (const { path } of pack(name).files) {
        const ok =
          path === "package.json" ||
          /^README\.md$/i.test(path) ||
          /^dist\/.+\.(js|d\.ts)$/.test(path) ||
          subpaths.some((s) => path === `${s}/package.json`) ||
          path.startsWith("bin/");
        if (!ok) stray.push(`${name}: ${path}`);
      }
      // Each .js has its declarations beside it (a chunk of declarations may stand alone).
      const files = new Set(pack(name).files.map((f) => f.path));
      for (const path of files)
        if (
          /^dist\/.*\.js$/.test(path) &&
          !/\/chunk-[\w-]+\.js$/.test(path) &&
          !files.has(path.replace(/\.js$/, ".d.ts"))
        )
          stray.push(`${name}: ${path} has no .d.ts`);
    }
    expect(stray).toEqual([]);
  });

  it("imports at run time only its dependencies, its peers and Node's modules by their node: names", () => {
    const wrong: string[] = [];
    for (const [name, { dir, manifest }] of packages) {
      const deps = new Set([
        ...Object.keys(manifest.dependencies ?? {}),
        ...Object.keys(manifest.peerDependencies ?? {}),
      ]);
      for (const { path } of pack(name).files.filter((f) => f.path.endsWith(".js") && !f.path.startsWith("bin/"))) {
        for (const specifier of imports(dir, path)) {
          const of = packageOf(specifier);
          if (of === undefined || (specifier.startsWith("node:") && builtins.has(specifier.slice(5)))) continue;
          if (builtins.has(specifier)) wrong.push(`${name}/${path} imports ${specifier}: write node:${specifier}`);
          else if (!deps.has(of))
            wrong.push(`${name}/${path} imports ${specifier}, not among its dependencies or peers`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("depends on exactly the packages its code or its declarations import", () => {
    const found: Record<string, string[]> = {};
    const declared: typeof found = {};
    const typesOnly: string[] = [];
    for (const [name, { dir, manifest }] of packages) {
      const code = new Set<string>();
      const types = new Set<string>();
      for (const { path } of pack(name).files) {
        const into = path.endsWith(".d.ts")
          ? types
          : path.endsWith(".js") && !path.startsWith("bin/")
            ? code
            : undefined;
        if (into === undefined) continue;
        for (const specifier of imports(dir, path)) {
          const of = packageOf(specifier);
          if (of !== undefined && !specifier.startsWith("node:")) into.add(of);
        }
      }
      const peers = new Set(Object.keys(manifest.peerDependencies ?? {}));
      const dependencies = [...new Set([...code, ...types])].filter((d) => !peers.has(d)).sort();
      typesOnly.push(...dependencies.filter((d) => !code.has(d)).map((d) => `${name} → ${d}`));
      found[name] = dependencies;
      declared[name] = Object.keys(manifest.dependencies ?? {}).sort();
    }
    // A dependency only the declarations import is one users install for its types alone: say so.
    if (typesOnly.length > 0) console.log(`dependencies for their types only: ${typesOnly.join(", ")}`);
    expect(found).toEqual(declared);
  });
});
