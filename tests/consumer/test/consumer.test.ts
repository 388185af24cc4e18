// The packages as a user gets them. The test runs `pnpm registry` as a user types it (a local
// Verdaccio with every package published by the project's own release command), runs the
// `npm install` line it prints in a fresh project, and in fresh projects that hold nothing but
// what npm installs from it: `npm install @tideward/breaker @tideward/limiters`, ESM, CommonJS and
// TypeScript clients, the declarations of every entry point with and without Node's types, each
// package installed alone, a browser bundle of every browser-safe entry point, and @tideward/otel
// with OpenTelemetry by its README's lines on Node.js 20 and 22 (see otel.ts); then Ctrl-C.
// Then the tarball route (`pnpm pack:local @tideward/guard`), offline. It ends with each
// package's sizes.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { pnpm } from "../../../scripts/packages.ts";
import { cjs, esm, guardClient, guardPromised, promised, tsconfigs, typescript } from "./clients";
import { npmReachable, otelInstallTests } from "./otel";
import { type } from "./command";
import type { Typed } from "./command";
import { closure, du, entryPoints, packedRange, publicPackages, root, run, self, tarballName } from "./workspace";

// Entry points that are Node.js-only by design; every other one must bundle for a browser.
// A new Node-only entry point is added here, in review. (@tideward/redis/testing starts a
// redis-server and @tideward/sim/cli reads files: both arrive with their packages.)
const nodeOnly = new Set([
  "@tideward/guard/node",
  "@tideward/shedder/node",
  "@tideward/shedder/internal",
  "@tideward/redis/testing",
  "@tideward/sim/cli",
]);

// Entry points whose declarations name Node's types (`node:http`, `Buffer`): a project that
// type-checks them needs @types/node, which their packages declare as an optional peer. Every
// other entry point type-checks without it.
const nodeTypes = new Set([...nodeOnly, "@tideward/redis"]);

const ci = process.env.CI === "true" || process.env.CI === "1";
const scratch = mkdtempSync(join(tmpdir(), "tideward-consumer-"));
const packages = publicPackages();
const names = [...packages.keys()];
const entries = [...packages.values()].flatMap(({ manifest }) => entryPoints(manifest));
const require = createRequire(import.meta.url);
const tsc = require.resolve("typescript/bin/tsc");
const typeRoots = join(dirname(require.resolve("@types/node/package.json")), "..");

/** The environment of a user's terminal: nothing from the npm or pnpm that started this test. */
function terminal(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!/^(npm|pnpm)_|^(INIT_CWD|PNPM_SCRIPT_SRC_DIR|TURBO_\w+)$/i.test(key)) env[key] = value;
  return {
    ...env,
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    ...extra,
  };
}

// `pnpm registry`, typed as a user types it; the tests below read what it printed.
const installLine = /^npm install --registry (http:\/\/127\.0\.0\.1:\d+) @tideward\/guard$/m;
let served: Typed | undefined;
let url = "";
let storage = "";
try {
  const { command, args } = pnpm();
  served = type(command, [...args, "registry"], { cwd: root, env: terminal() });
  // It builds (turbo's cache makes that quick after the first time) and publishes ten packages.
  url = (await served.waitFor(installLine, 600_000))[1] ?? "";
  storage = /\(storage (\S+)\):/.exec(served.output())?.[1] ?? "";
} catch (error) {
  served?.kill();
  served = undefined;
  // Under CI a registry that cannot start is a failure; on a laptop without network, a skip.
  if (ci) throw error;
  console.warn(
    `consumer test skipped: pnpm registry did not start (${String(error).split("\n")[0]}); set CI=true to make this a failure`,
  );
}

// OpenTelemetry and a Node.js 22 for the otel lines come from npm's registry.
const npmUp = served !== undefined && (await npmReachable());

afterAll(() => {
  served?.kill();
  rmSync(scratch, { recursive: true, force: true });
});

/** An environment that talks to the test registry only, with a cache of its own. */
const registryEnv = () =>
  terminal({
    npm_config_registry: `${url}/`,
    "npm_config_@tideward:registry": `${url}/`,
    npm_config_cache: join(scratch, "npm-cache"),
  });

/** A fresh folder with only a package.json. */
function fresh(name: string): string {
  const dir = join(scratch, "projects", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: `consumer-${name}`, version: "1.0.0", private: true }),
  );
  return dir;
}

/** A fresh project with `npm install <names>` run in it. */
async function project(name: string, wanted: readonly string[]): Promise<string> {
  const dir = fresh(name);
  await run("npm", ["install", "--loglevel=error", ...wanted], { cwd: dir, env: registryEnv(), timeout: 120_000 });
  return dir;
}

/** Every package a project's lockfile says it installed, with its version. */
function installed(dir: string): Record<string, string> {
  const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string; name?: string }>;
  };
  const out: Record<string, string> = {};
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === "") continue;
    out[path.replace(/^.*node_modules\//, "")] = entry.version ?? "";
  }
  // What is on disk must be what the lockfile says: no stray install.
  const onDisk = readdirSync(join(dir, "node_modules"))
    .filter((n) => !n.startsWith("."))
    .flatMap((n) => (n.startsWith("@") ? readdirSync(join(dir, "node_modules", n)).map((m) => `${n}/${m}`) : [n]));
  expect(onDisk.sort()).toEqual(Object.keys(out).sort());
  return out;
}

const versions = (wanted: readonly string[]) =>
  Object.fromEntries(wanted.map((n) => [n, packages.get(n)?.manifest.version ?? "?"]));

/** Runs the guard's README example in `dir` and checks what it prints. */
async function runsTheGuard(dir: string) {
  writeFileSync(join(dir, "guard.mjs"), guardClient);
  const out = JSON.parse((await run(process.execPath, ["guard.mjs"], { cwd: dir })).stdout) as { resolved: string };
  expect(out).toEqual({ ...guardPromised, resolved: out.resolved });
  expect(out.resolved).toMatch(/\/node_modules\/@tideward\/guard\/dist\/index\.js$/);
  expect(out.resolved.startsWith(`file://${dir}/`)).toBe(true);
}

/** tsc over `files` in `dir` with `compilerOptions`; its diagnostics, one a line. */
async function typecheck(dir: string, name: string, compilerOptions: object, files: readonly string[]) {
  writeFileSync(join(dir, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions, files }, null, 2));
  const out = await run(process.execPath, [tsc, "-p", `tsconfig.${name}.json`, "--pretty", "false"], {
    cwd: dir,
    allowFailure: true,
  });
  const lines = (out.stdout + out.stderr).split("\n").filter((l) => l.trim() !== "");
  return { code: out.code, lines, errors: lines.filter((l) => / error TS\d+:/.test(l)) };
}

interface Sizes {
  packed: number;
  installed: number;
  files: number;
  withDependencies: number;
  browser: Record<string, { minified: number; gzipped: number } | "node-only">;
}
const sizes = new Map<string, Sizes>();

describe.skipIf(served === undefined)("installed from the registry pnpm registry serves", () => {
  it("lists every package as a dependency of this test, so the release is built first", () => {
    const deps = Object.keys(self().devDependencies ?? {}).filter((n) => n.startsWith("@tideward/"));
    expect(deps.sort()).toEqual([...names].sort());
  });

  it("holds every package, published with the release command, sibling dependencies as semver ranges", async () => {
    for (const [name, { manifest }] of packages) {
      const res = await fetch(`${url}/${name.replace("/", "%2f")}`);
      expect(res.status, `${name} is on the registry`).toBe(200);
      const doc = (await res.json()) as {
        "dist-tags": Record<string, string>;
        versions: Record<string, { dependencies?: Record<string, string>; dist: { tarball: string } }>;
      };
      expect(doc["dist-tags"].latest).toBe(manifest.version);
      const published = doc.versions[manifest.version];
      const expected = Object.fromEntries(
        Object.entries(manifest.dependencies ?? {}).map(([dep, range]) => [
          dep,
          packedRange(range, packages.get(dep)?.manifest.version ?? "?"),
        ]),
      );
      expect(published?.dependencies ?? {}, `${name}'s packed dependencies`).toEqual(expected);
      for (const range of Object.values(published?.dependencies ?? {})) expect(range).toMatch(/^[\^~]?\d+\.\d+\.\d+/);
      const tarball = await fetch(published?.dist.tarball ?? "");
      expect(tarball.status).toBe(200);
      sizes.set(name, {
        packed: (await tarball.arrayBuffer()).byteLength,
        installed: 0,
        files: 0,
        withDependencies: 0,
        browser: {},
      });
    }
  });

  it(
    "installs @tideward/guard and exactly its @tideward dependencies with the line it prints, and the guard runs",
    { timeout: 120_000 },
    async () => {
      const line = installLine.exec(served?.output() ?? "")?.[0] ?? "";
      const [npm, ...args] = line.split(" ");
      expect(npm).toBe("npm");
      const dir = fresh("printed-line");
      // The printed line alone: no registry or scope setting from anywhere else.
      await run("npm", [...args, "--loglevel=error"], {
        cwd: dir,
        env: terminal({ npm_config_cache: join(scratch, "npm-cache-printed") }),
        timeout: 120_000,
      });
      expect(installed(dir)).toEqual(versions(closure(["@tideward/guard"], packages)));
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        dependencies: Record<string, string>;
      };
      expect(manifest.dependencies).toEqual({
        "@tideward/guard": `^${packages.get("@tideward/guard")?.manifest.version}`,
      });
      await runsTheGuard(dir);
    },
  );

  it(
    "installs @tideward/guard with the scoped line it prints, asking the local registry for @tideward only",
    { timeout: 120_000 },
    async () => {
      const line =
        new RegExp(`^npm install --@tideward:registry=${url} @tideward/guard$`, "m").exec(
          served?.output() ?? "",
        )?.[0] ?? "";
      const [npm, ...args] = line.split(" ");
      expect(npm).toBe("npm");
      const dir = fresh("scoped-line");
      // Every other package would come from the default registry: a port nothing listens on here,
      // so what installs came from the local one, and only @tideward asked it.
      await run("npm", [...args, "--loglevel=error"], {
        cwd: dir,
        env: terminal({
          npm_config_registry: "http://127.0.0.1:9/",
          npm_config_fetch_retries: "0",
          npm_config_cache: join(scratch, "npm-cache-scoped"),
        }),
        timeout: 120_000,
      });
      expect(installed(dir)).toEqual(versions(closure(["@tideward/guard"], packages)));
      const lock = readFileSync(join(dir, "package-lock.json"), "utf8");
      for (const m of lock.matchAll(/"resolved": "([^"]+)"/g)) expect(m[1]?.startsWith(`${url}/@tideward/`)).toBe(true);
      await runsTheGuard(dir);
    },
  );

  describe("npm install @tideward/breaker @tideward/limiters", () => {
    let app = "";
    const wanted = ["@tideward/breaker", "@tideward/limiters"];

    it("installs them and their @tideward dependencies, nothing else", { timeout: 120_000 }, async () => {
      app = await project("app", wanted);
      expect(installed(app)).toEqual(versions(closure(wanted, packages)));
      const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as {
        dependencies: Record<string, string>;
      };
      expect(Object.keys(manifest.dependencies).sort()).toEqual(wanted);
    });

    it("runs an ESM client", { timeout: 30_000 }, async () => {
      writeFileSync(join(app, "client.mjs"), esm);
      const out = JSON.parse((await run(process.execPath, ["client.mjs"], { cwd: app })).stdout) as {
        resolved: string[];
      };
      expect(out).toEqual({ ...promised, resolved: out.resolved });
      for (const file of out.resolved)
        expect(file).toMatch(/\/node_modules\/@tideward\/(breaker|limiters)\/dist\/index\.js$/);
    });

    // The packages are ES modules only: Node.js 20.19 and later `require()` them.
    it("runs a CommonJS client, which require()s the ES modules", { timeout: 30_000 }, async () => {
      writeFileSync(join(app, "client.cjs"), cjs);
      const ran = await run(process.execPath, ["client.cjs"], { cwd: app });
      const out = JSON.parse(ran.stdout) as { resolved: string[] };
      expect(out).toEqual({ ...promised, resolved: out.resolved });
      for (const file of out.resolved)
        expect(file).toMatch(/\/node_modules\/@tideward\/(breaker|limiters)\/dist\/index\.js$/);
      // Without a warning on stderr (require(esm) is stable on Node.js 20.19).
      expect(ran.stderr).toBe("");
    });
  });

  // Three runs of tsc over one project holding every package, strict and with skipLibCheck off, so
  // a declaration leaning on anything a user might not have fails here. Each run also holds a
  // file with one deliberate type error, which must be reported and be the only error: the check
  // is real.
  describe("TypeScript clients, every package installed", () => {
    let all = "";
    const configs = tsconfigs(typeRoots);
    const importAll = (specifiers: readonly string[]) =>
      `${specifiers.map((s, i) => `import * as m${i} from ${JSON.stringify(s)};`).join("\n")}\nexport { ${specifiers.map((_, i) => `m${i}`).join(", ")} };\n`;
    const wrong = `import { Bucket } from "@tideward/limiters";\nimport type { PeriodAnswer } from "@tideward/limiters";\nexport const q: PeriodAnswer = new Bucket(1).take(0);\n`;
    const onlyTheWrongOne = (lines: readonly string[], file: string) => {
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^${file.replace(".", "\\.")}\\(3,14\\): error TS2322: Type 'boolean' is not assignable to type 'PeriodAnswer'`,
        ),
      );
    };

    it("installs every package", { timeout: 120_000 }, async () => {
      all = await project("all", names);
      expect(installed(all)).toEqual(versions(names));
    });

    it(
      "type-check under nodenext resolution with @types/node: ESM and CommonJS clients, and every entry point",
      { timeout: 180_000 },
      async () => {
        for (const file of configs.nodenext.files) writeFileSync(join(all, file), typescript);
        writeFileSync(join(all, "every.mts"), importAll(entries));
        writeFileSync(join(all, "wrong.mts"), wrong);
        const files = [...configs.nodenext.files, "every.mts", "wrong.mts"];
        onlyTheWrongOne((await typecheck(all, "nodenext", configs.nodenext.compilerOptions, files)).lines, "wrong.mts");
      },
    );

    it(
      "type-check under bundler resolution without @types/node: a client, and every entry point whose declarations do not name Node's types",
      { timeout: 180_000 },
      async () => {
        for (const file of configs.bundler.files) writeFileSync(join(all, file), typescript);
        writeFileSync(join(all, "browser.ts"), importAll(entries.filter((e) => !nodeTypes.has(e))));
        writeFileSync(join(all, "wrong.ts"), wrong);
        const files = [...configs.bundler.files, "browser.ts", "wrong.ts"];
        onlyTheWrongOne((await typecheck(all, "bundler", configs.bundler.compilerOptions, files)).lines, "wrong.ts");
      },
    );

    it(
      "need @types/node, where declarations name Node's types, exactly in the packages that declare it an optional peer",
      { timeout: 180_000 },
      async () => {
        writeFileSync(join(all, "node-types.ts"), importAll([...nodeTypes]));
        const out = await typecheck(all, "node-types", configs.bundler.compilerOptions, ["node-types.ts"]);
        // Each error is in a package's own declarations, and is Node's types missing.
        const needs = new Set<string>();
        for (const error of out.errors) {
          const m = /^node_modules\/(@tideward\/[^/]+)\/\S+\.d\.ts\(\d+,\d+\): error TS\d+: (.*)$/.exec(error);
          expect(m, error).not.toBeNull();
          expect(m?.[2], error).toMatch(/'node:[a-z_/]+'|name '(process|Buffer|NodeJS)'/);
          needs.add(m?.[1] ?? "");
        }
        const declared = names.filter((name) => {
          const { manifest } = packages.get(name) ?? { manifest: undefined };
          return (
            manifest?.peerDependencies?.["@types/node"] !== undefined &&
            manifest.peerDependenciesMeta?.["@types/node"]?.optional === true
          );
        });
        expect([...needs].sort()).toEqual(declared);
        // And each of those entry points is listed for a reason: some package's types need Node.
        expect(declared.length).toBeGreaterThan(0);
      },
    );
  });

  it("installs each package alone, with only its @tideward dependencies", { timeout: 180_000 }, async () => {
    await Promise.all(
      names.map(async (name) => {
        const dir = await project(name.replace("@tideward/", "solo-"), [name]);
        expect(installed(dir), name).toEqual(versions(closure([name], packages)));
        const own = du(join(dir, "node_modules", name));
        const s = sizes.get(name);
        if (s === undefined) throw new Error(`${name} was not published`);
        s.installed = own.bytes;
        s.files = own.files;
        s.withDependencies = closure([name], packages).reduce(
          (sum, dep) => sum + du(join(dir, "node_modules", dep)).bytes,
          0,
        );
      }),
    );
  });

  it(
    "bundles every browser-safe entry point for the browser without a Node built-in",
    { timeout: 120_000 },
    async () => {
      const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
      // A peer (a Redis client, @opentelemetry/api) is the user's to bundle, not ours.
      const peers = [
        ...new Set([...packages.values()].flatMap(({ manifest }) => Object.keys(manifest.peerDependencies ?? {}))),
      ];
      // Every entry point is tried, and every one that is wrong is named at once.
      const wrong: string[] = [];
      for (const [name, { manifest }] of packages) {
        const dir = join(scratch, "projects", name.replace("@tideward/", "solo-"));
        const s = sizes.get(name);
        if (s === undefined) throw new Error(`${name} was not published`);
        for (const entry of entryPoints(manifest)) {
          const result = await build({
            stdin: { contents: `export * from ${JSON.stringify(entry)};`, resolveDir: dir, loader: "js" },
            absWorkingDir: dir,
            bundle: true,
            platform: "browser",
            format: "esm",
            minify: true,
            external: peers,
            write: false,
            metafile: true,
            logLevel: "silent",
          }).catch((error: { errors?: { text: string }[] }) => ({ failed: (error.errors ?? []).map((e) => e.text) }));
          if (nodeOnly.has(entry)) {
            // A Node-only entry point must really need Node, or it belongs in a browser.
            const needsNode =
              "failed" in result && result.failed.some((e) => /Could not resolve "(node:)?[a-z_/]+"/.test(e));
            if (!needsNode)
              wrong.push(`${entry} is listed as Node-only but bundles for the browser: take it out of nodeOnly`);
            s.browser[entry] = "node-only";
            continue;
          }
          if ("failed" in result) {
            wrong.push(
              `${entry} does not bundle for the browser (${result.failed[0] ?? "?"}): make it browser-safe, or list it in nodeOnly`,
            );
            continue;
          }
          const foreign = Object.keys(result.metafile.inputs).filter(
            (i) => i !== "<stdin>" && !i.startsWith("node_modules/@tideward/"),
          );
          const node = Object.values(result.metafile.inputs)
            .flatMap((i) => i.imports.map((x) => x.path))
            .filter((p) => builtins.has(p));
          if (foreign.length > 0) wrong.push(`${entry} bundles code from outside @tideward: ${foreign.join(", ")}`);
          if (node.length > 0) wrong.push(`${entry} imports Node built-ins: ${node.join(", ")}`);
          const code = result.outputFiles[0]?.contents ?? new Uint8Array();
          s.browser[entry] = { minified: code.byteLength, gzipped: gzipSync(code).byteLength };
        }
      }
      expect(wrong).toEqual([]);
    },
  );

  // @tideward/otel with OpenTelemetry's SDK and exporter, which come from npm's own registry.
  if (npmUp || ci)
    otelInstallTests({
      url,
      scratch,
      terminal,
      fresh,
      installed,
      tideward: versions(closure(["@tideward/otel"], packages)),
    });
  else
    console.warn("the otel install lines skipped: npm's registry did not answer; set CI=true to make this a failure");

  // Last: Ctrl-C, as in the terminal (SIGINT to the command's whole process group).
  it("stops on Ctrl-C with exit 0, its storage deleted and its port closed", { timeout: 60_000 }, async () => {
    expect(storage).toMatch(/tideward-registry-/);
    expect(existsSync(storage)).toBe(true);
    const ended = await served?.interrupt(30_000);
    expect(ended).toEqual({ code: 0, signal: null });
    expect(served?.output()).toMatch(/registry stopped, its storage deleted/);
    expect(existsSync(storage)).toBe(false);
    const ping = await fetch(`${url}/-/ping`, { signal: AbortSignal.timeout(5_000) }).then(
      (r) => r.status,
      () => "refused",
    );
    expect(ping).toBe("refused");
  });
});

// The other way to install before anything is published: `pnpm pack:local @tideward/guard`
// prints one npm command of the guard's tarball and those of its @tideward dependencies.
describe("installed from the tarballs of a local build", () => {
  it(
    "pnpm pack:local @tideward/guard prints the npm install of exactly the tarballs it needs, which works offline",
    { timeout: 300_000 },
    async () => {
      const { command, args } = pnpm();
      const packed = await run(command, [...args, "--silent", "pack:local", "@tideward/guard"], {
        cwd: root,
        env: terminal(),
        timeout: 240_000,
      });
      const line = packed.stdout.split("\n").find((l) => l.startsWith("npm install ")) ?? "";
      const [npm, ...words] = line.split(" ");
      expect(npm).toBe("npm");
      const wanted = closure(["@tideward/guard"], packages);
      expect(words).toEqual([
        "install",
        "--offline",
        ...wanted.map((name) =>
          join(root, "packs", tarballName(packages.get(name)?.manifest ?? { name, version: "?" })),
        ),
      ]);
      const dir = fresh("tarballs");
      // Pointed at a port nothing listens on, with an empty cache: nothing may come from a registry.
      await run("npm", [...words, "--loglevel=error"], {
        cwd: dir,
        env: terminal({
          npm_config_registry: "http://127.0.0.1:9/",
          npm_config_cache: join(scratch, "npm-cache-offline"),
        }),
        timeout: 120_000,
      });
      expect(installed(dir)).toEqual(versions(wanted));
      await runsTheGuard(dir);
    },
  );

  it("pnpm pack:local names what it does not know", { timeout: 60_000 }, async () => {
    const { command, args } = pnpm();
    const out = await run(command, [...args, "--silent", "pack:local", "@tideward/nope"], {
      cwd: root,
      env: terminal(),
      allowFailure: true,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/no package "@tideward\/nope"; the packages are @tideward\/backoff, /);
  });
});

afterAll(() => {
  if (sizes.size === 0) return;
  const kb = (n: number) => `${(n / 1000).toFixed(1)} kB`;
  const lines = [
    "| package | packed | installed (files) | with dependencies | browser bundle, min / gzip |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const [name, s] of sizes) {
    const browser = Object.entries(s.browser)
      .map(
        ([entry, b]) =>
          `${entry.replace(name, ".")}: ${b === "node-only" ? "Node only" : `${kb(b.minified)} / ${kb(b.gzipped)}`}`,
      )
      .join("; ");
    lines.push(
      `| ${name} | ${kb(s.packed)} | ${kb(s.installed)} (${s.files}) | ${kb(s.withDependencies)} | ${browser} |`,
    );
  }
  const table = lines.join("\n");
  console.log(`\nPackage sizes (npm tarball, installed, installed with dependencies, browser bundle):\n${table}\n`);
  mkdirSync(join(import.meta.dirname, "..", ".reports"), { recursive: true });
  writeFileSync(join(import.meta.dirname, "..", ".reports", "sizes.md"), `${table}\n`);
});
