// The packages as a user gets them. The test publishes every package to a real registry
// (Verdaccio on loopback) with the project's own release command, then, in fresh projects that
// hold nothing but what npm installs from that registry: `npm install @tideward/breaker
// @tideward/limiters`, ESM, CommonJS and TypeScript clients, each package installed alone, and a
// browser bundle of every browser-safe entry point. It ends with each package's sizes.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { cjs, esm, promised, tsconfigs, typescript } from "./clients";
import { startRegistry } from "./registry";
import type { Registry } from "./registry";
import { closure, du, entryPoints, packedRange, publicPackages, root, run, self } from "./workspace";

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

const ci = process.env.CI === "true" || process.env.CI === "1";
const scratch = mkdtempSync(join(tmpdir(), "tideward-consumer-"));
const packages = publicPackages();

let registry: Registry | undefined;
let unavailable = "";
try {
  registry = await startRegistry(join(scratch, "registry"));
} catch (error) {
  // Under CI a registry that cannot start is a failure; on a laptop without network, a skip.
  if (ci) throw error;
  unavailable = `Verdaccio could not start (${String(error).split("\n")[0]}); run \`npm ci\` in tests/consumer/registry, or set CI=true to make this a failure`;
  console.warn(`consumer test skipped: ${unavailable}`);
}

afterAll(async () => {
  await registry?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** An environment that talks to the test registry only, with a cache of its own. */
function registryEnv(r: Registry): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Nothing inherited from the npm or pnpm that started us may point elsewhere.
  for (const [key, value] of Object.entries(process.env)) if (!/^(npm|pnpm)_config_/i.test(key)) env[key] = value;
  return {
    ...env,
    npm_config_registry: r.url,
    "npm_config_@tideward:registry": r.url,
    pnpm_config_registry: r.url,
    "pnpm_config_@tideward:registry": r.url,
    npm_config_userconfig: r.userconfig,
    npm_config_cache: join(scratch, "npm-cache"),
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
}

/** A fresh project with only a package.json, and `npm install <names>` run in it. */
async function project(name: string, names: readonly string[], r: Registry): Promise<string> {
  const dir = join(scratch, "projects", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: `consumer-${name}`, version: "1.0.0", private: true }, null, 2),
  );
  await run("npm", ["install", "--no-package-lock=false", "--loglevel=error", ...names], {
    cwd: dir,
    env: registryEnv(r),
    timeout: 120_000,
  });
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

const versions = (names: readonly string[]) =>
  Object.fromEntries(names.map((n) => [n, packages.get(n)?.manifest.version ?? "?"]));

interface Sizes {
  packed: number;
  installed: number;
  files: number;
  withDependencies: number;
  browser: Record<string, { minified: number; gzipped: number } | "node-only">;
}
const sizes = new Map<string, Sizes>();

describe.skipIf(registry === undefined)("installed from a registry", () => {
  const r = () => {
    if (registry === undefined) throw new Error(unavailable);
    return registry;
  };

  it("lists every package as a dependency of this test, so the release is built first", () => {
    const deps = Object.keys(self().devDependencies ?? {}).filter((n) => n.startsWith("@tideward/"));
    expect(deps.sort()).toEqual([...packages.keys()].sort());
  });

  it(
    "publishes every package with the release command, sibling dependencies as semver ranges",
    { timeout: 240_000 },
    async () => {
      const env = registryEnv(r());
      // The release must be pointed at the test registry, never the public one.
      const config = await run("pnpm", ["config", "get", "registry"], { cwd: root, env });
      expect(config.stdout.trim()).toBe(r().url);
      await run("pnpm", ["run", "release", "--no-git-tag"], { cwd: root, env, timeout: 240_000 });

      for (const [name, { manifest }] of packages) {
        const res = await fetch(`${r().url}${name.replace("/", "%2f")}`);
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
    },
  );

  describe("npm install @tideward/breaker @tideward/limiters", () => {
    let app = "";
    const wanted = ["@tideward/breaker", "@tideward/limiters"];

    it("installs them and their @tideward dependencies, nothing else", { timeout: 120_000 }, async () => {
      app = await project("app", wanted, r());
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

    it("runs a CommonJS client", { timeout: 30_000 }, async () => {
      writeFileSync(join(app, "client.cjs"), cjs);
      const out = JSON.parse((await run(process.execPath, ["client.cjs"], { cwd: app })).stdout) as {
        resolved: string[];
      };
      expect(out).toEqual({ ...promised, resolved: out.resolved });
      for (const file of out.resolved)
        expect(file).toMatch(/\/node_modules\/@tideward\/(breaker|limiters)\/dist\/index\.cjs$/);
    });

    const require = createRequire(import.meta.url);
    const tsc = require.resolve("typescript/bin/tsc");
    const configs = tsconfigs(join(dirname(require.resolve("@types/node/package.json")), ".."));
    it.each(Object.keys(configs) as (keyof typeof configs)[])(
      "type-checks a strict TypeScript client under %s resolution",
      { timeout: 60_000 },
      async (mode) => {
        for (const file of configs[mode].files) writeFileSync(join(app, file), typescript);
        writeFileSync(join(app, `tsconfig.${mode}.json`), JSON.stringify(configs[mode], null, 2));
        const out = await run(process.execPath, [tsc, "-p", `tsconfig.${mode}.json`, "--pretty", "false"], {
          cwd: app,
          allowFailure: true,
        });
        expect(out.stdout + out.stderr).toBe("");
        expect(out.code).toBe(0);
        // And the check is real: a type error in the client is reported.
        const broken = join(app, configs[mode].files[0] ?? "");
        writeFileSync(broken, `${typescript}\nexport const q: PeriodAnswer = new Bucket(1).take(0);\n`);
        const bad = await run(process.execPath, [tsc, "-p", `tsconfig.${mode}.json`, "--pretty", "false"], {
          cwd: app,
          allowFailure: true,
        });
        expect(bad.stdout).toMatch(/error TS2322: Type 'boolean' is not assignable to type 'PeriodAnswer'/);
        writeFileSync(broken, typescript);
      },
    );
  });

  it("installs each package alone, with only its @tideward dependencies", { timeout: 180_000 }, async () => {
    await Promise.all(
      [...packages.keys()].map(async (name) => {
        const dir = await project(name.replace("@tideward/", "solo-"), [name], r());
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
            // A peer (@tideward/otel's @opentelemetry/api) is the application's own copy: not bundled.
            external: Object.keys(manifest.peerDependencies ?? {}),
            platform: "browser",
            format: "esm",
            minify: true,
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
});

// The README's way to install before anything is published: `pnpm pack:local`, then the
// tarballs of a package and of its @tideward dependencies, together, with no registry at all.
describe("installed from the tarballs of a local build", () => {
  it(
    "npm install --offline of breaker's and limiters' tarballs runs the ESM client",
    { timeout: 180_000 },
    async () => {
      await run("pnpm", ["run", "pack:local"], { cwd: root, timeout: 180_000 });
      const wanted = ["@tideward/breaker", "@tideward/limiters"];
      const tarballs = closure(wanted, packages).map((name) => {
        const version = packages.get(name)?.manifest.version ?? "?";
        return join(root, "packs", `${name.replace("@", "").replace("/", "-")}-${version}.tgz`);
      });
      const dir = join(scratch, "projects", "tarballs");
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, "package.json"),
        JSON.stringify({ name: "consumer-tarballs", version: "1.0.0", private: true }),
      );
      const env: NodeJS.ProcessEnv = {};
      for (const [key, value] of Object.entries(process.env)) if (!/^(npm|pnpm)_config_/i.test(key)) env[key] = value;
      // Offline, and pointed at a port nothing listens on: nothing may come from a registry.
      Object.assign(env, {
        npm_config_registry: "http://127.0.0.1:9/",
        npm_config_cache: join(scratch, "npm-cache-offline"),
        npm_config_audit: "false",
        npm_config_fund: "false",
      });
      await run("npm", ["install", "--offline", "--loglevel=error", ...tarballs], { cwd: dir, env, timeout: 120_000 });
      expect(installed(dir)).toEqual(versions(closure(wanted, packages)));
      writeFileSync(join(dir, "client.mjs"), esm);
      const out = JSON.parse((await run(process.execPath, ["client.mjs"], { cwd: dir })).stdout) as {
        resolved: string[];
      };
      expect(out).toEqual({ ...promised, resolved: out.resolved });
    },
  );
});

afterAll(() => {
  if (sizes.size === 0) return;
  const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`;
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
