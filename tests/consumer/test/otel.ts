// @tideward/otel as its README installs it: each install line typed in a fresh project on the
// Node.js it names (22 fetched from npm's registry as the node-<platform>-<arch> package), from the
// local registry for @tideward and npm's for OpenTelemetry; then the README's example, run as
// written and again with its exporter serving /metrics to a real scrape.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { transform } from "esbuild";
import { describe, expect, it } from "vitest";
import { run, root } from "./workspace";

const readme = readFileSync(join(root, "packages", "otel", "README.md"), "utf8");

/** Where the README's lines name the local registry; the test puts its own address there. */
export const PLACEHOLDER = "http://127.0.0.1:PORT";

/** One install line of the README: the major Node.js version it is for (as its comment says) and its words. */
export interface InstallLine {
  readonly node: number;
  readonly words: readonly string[];
}

/** The README's install lines, each after its `# Node.js N` comment, in the first `sh` block. */
export function installLines(): InstallLine[] {
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const lines: InstallLine[] = [];
  let node: number | undefined;
  for (const line of block.split("\n")) {
    const comment = /^# Node\.js (\d+)/.exec(line);
    if (comment !== null) node = Number(comment[1]);
    else if (line.startsWith("npm install ")) {
      if (node === undefined) throw new Error(`the otel README's line "${line}" says for no Node.js version`);
      lines.push({ node, words: line.split(" ") });
      node = undefined;
    }
  }
  return lines;
}

/** The README's example as JavaScript, and what its `console.log` lines say they print, in order. */
export async function example(): Promise<{ code: string; prints: number[] }> {
  const source = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const prints = [...source.matchAll(/^console\.log\(.*\); \/\/ (\S+)$/gm)].map((m) => Number(m[1]));
  const { code } = await transform(source, { loader: "ts", format: "esm" });
  return { code, prints };
}

/**
 * The example with its exporter serving `/metrics` on `127.0.0.1:$PORT`, read by a scrape over
 * HTTP where the example serializes the exporter's collection itself: it prints what a
 * Prometheus server would read.
 */
export function scraped(code: string): string {
  const swaps: [RegExp, string][] = [
    [
      /new PrometheusExporter\(\{ preventServerStart: true \}\)/,
      'new PrometheusExporter({ preventServerStart: true, host: "127.0.0.1", port: Number(process.env.PORT) })',
    ],
    [
      /const \{ resourceMetrics \} = await exporter\.collect\(\);\nconst lines = new PrometheusSerializer\(\)\.serialize\(resourceMetrics\)\.split\("\\n"\);/,
      'await exporter.startServer();\nconst lines = (await (await fetch(`http://127.0.0.1:${process.env.PORT}/metrics`)).text()).split("\\n");',
    ],
  ];
  let out = code;
  for (const [from, to] of swaps) {
    if (!from.test(out)) throw new Error(`the otel README's example no longer has ${String(from)}: update the scrape`);
    out = out.replace(from, to);
  }
  return `${out}await exporter.shutdown();\n`;
}

/** The Node.js 22 release the Node.js 22 line is tried on (npm's `node-<platform>-<arch>` package carries it). */
export const NODE_22 = "22.23.5";

/**
 * The directory of a Node.js 22 binary, fetched once from npm's registry (about 50 MB, 15 s) into
 * the system's temporary folder and kept there for later runs. Nothing is committed.
 */
export async function node22(env: NodeJS.ProcessEnv): Promise<string> {
  const name = `node-${process.platform}-${process.arch}`;
  const dir = join(tmpdir(), `tideward-${name}-${NODE_22}`);
  const bin = join(dir, "package", "bin");
  if (existsSync(join(bin, "node"))) return bin;
  const work = `${dir}.part-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const packed = await run("npm", ["pack", `${name}@${NODE_22}`, "--silent", "--pack-destination", work], {
    cwd: work,
    env,
    timeout: 180_000,
  });
  const tarball = packed.stdout.trim().split("\n").at(-1) ?? "";
  await run("tar", ["xzf", tarball, "package/bin/node"], { cwd: work, timeout: 60_000 });
  rmSync(join(work, tarball));
  // Renamed into place whole: a run cut short leaves no half binary behind.
  try {
    renameSync(work, dir);
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    if (!existsSync(join(bin, "node"))) throw error; // not another run's rename that came first
  }
  return bin;
}

/** A loopback port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** What the tests take from the consumer test's own setup. */
export interface Consumer {
  /** The local registry's address. */
  readonly url: string;
  /** A folder for caches. */
  readonly scratch: string;
  /** A terminal's environment, with `extra` laid over it. */
  terminal(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** A fresh project folder named `name`. */
  fresh(name: string): string;
  /** Every package a project's lockfile says it installed, with its version (checked on disk). */
  installed(dir: string): Record<string, string>;
  /** The @tideward packages `@tideward/otel` brings, each at its version. */
  readonly tideward: Record<string, string>;
}

/** Whether npm's own registry answers (the Node.js 22 binary and OpenTelemetry come from it). */
export async function npmReachable(): Promise<boolean> {
  return fetch("https://registry.npmjs.org/-/ping", { signal: AbortSignal.timeout(10_000) }).then(
    (r) => r.ok,
    () => false,
  );
}

/** The tests of the README's lines, in the consumer test's registry `describe`. */
export function otelInstallTests(c: Consumer): void {
  const lines = installLines();
  const line = (node: number) => {
    const found = lines.find((l) => l.node === node);
    if (found === undefined) throw new Error(`the otel README has no line for Node.js ${node}`);
    return found.words.map((w) => w.replace(PLACEHOLDER, c.url));
  };
  /** A terminal whose `node` (and so npm's) is the one in `bin`, with its own npm cache. */
  const on = (bin: string, cache: string) =>
    c.terminal({ PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`, npm_config_cache: join(c.scratch, cache) });
  const node20 = dirname(process.execPath);

  describe("@tideward/otel, installed with its README's lines", () => {
    it("gives one line for Node.js 20 and one for Node.js 22, each asking the local registry for @tideward alone", () => {
      expect(lines.map((l) => l.node)).toEqual([20, 22]);
      for (const l of lines)
        expect(l.words.slice(0, 4)).toEqual([
          "npm",
          "install",
          `--@tideward:registry=${PLACEHOLDER}`,
          "@tideward/otel",
        ]);
    });

    it.each([20, 22])(
      "on Node.js %i: installs with no warning, each package once, and the example runs and is scraped",
      { timeout: 300_000 },
      async (major) => {
        const bin =
          major === 20 ? node20 : await node22(c.terminal({ npm_config_cache: join(c.scratch, "npm-cache-node") }));
        const env = on(bin, `npm-cache-otel-${major}`);
        const version = (await run("node", ["--version"], { cwd: c.scratch, env })).stdout.trim();
        expect(version).toMatch(new RegExp(`^v${major}\\.`));
        const dir = c.fresh(`otel-node-${major}`);
        const [npm, ...args] = line(major);
        const out = await run(npm ?? "", args, { cwd: dir, env, timeout: 180_000 });
        // As typed: npm's own messages at their default level, and none of them a warning.
        expect(out.stdout + out.stderr).not.toMatch(/ERESOLVE|EBADENGINE/);
        expect(out.stdout + out.stderr).not.toMatch(/^npm (warn|error)/m);
        const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as {
          packages: Record<string, unknown>;
        };
        // One copy of each package: nothing nested under another (a second SDK would be).
        expect(Object.keys(lock.packages).filter((p) => p.lastIndexOf("node_modules/") > 0)).toEqual([]);
        const got = c.installed(dir);
        expect(Object.fromEntries(Object.entries(got).filter(([n]) => n.startsWith("@tideward/")))).toEqual(c.tideward);
        // Each OpenTelemetry package at the release the line pins.
        for (const word of args.filter((w) => w.startsWith("@opentelemetry/"))) {
          const [name = "", wanted = ""] = /^(@[^@]+)@(.+)$/.exec(word)?.slice(1) ?? [];
          expect(got[name], word).toMatch(new RegExp(`^${wanted.replaceAll(".", "\\.")}(\\.|$)`));
        }

        // The example as written prints what its comments say; scraped over HTTP, the same.
        const { code, prints } = await example();
        expect(prints.length).toBeGreaterThan(0);
        writeFileSync(join(dir, "example.mjs"), code);
        const ran = await run("node", ["example.mjs"], { cwd: dir, env });
        expect(ran.stderr).toBe("");
        expect(ran.stdout.trim().split("\n").map(Number)).toEqual(prints);
        writeFileSync(join(dir, "scrape.mjs"), scraped(code));
        const port = await freePort();
        const scrape = await run("node", ["scrape.mjs"], { cwd: dir, env: { ...env, PORT: String(port) } });
        expect(scrape.stderr).toBe("");
        expect(scrape.stdout.trim().split("\n").map(Number)).toEqual(prints);
      },
    );

    // So that the check above can fail: the Node.js 22 line on Node.js 20 is what it catches.
    it(
      "refuses the Node.js 22 line on Node.js 20 with EBADENGINE, as npm resolves it",
      { timeout: 120_000 },
      async () => {
        const [npm, ...args] = line(22);
        const out = await run(npm ?? "", [...args, "--dry-run"], {
          cwd: c.fresh("otel-22-on-20"),
          env: on(node20, "npm-cache-otel-22"),
          timeout: 120_000,
        });
        expect(out.stderr).toMatch(/EBADENGINE\s+package: '@opentelemetry\/sdk-metrics@3\./);
      },
    );
  });
}
