// A real npm registry on loopback: Verdaccio from this folder (its own npm project, so its 327
// packages stay out of the workspace), storage in a folder the caller names, no uplinks (it
// cannot reach the internet), anyone may publish @tideward/*; and every package published to it
// with the project's release command. `pnpm registry` (serve.ts) and the consumer test both use
// it. Verdaccio is stopped by the process id it was started with (it renames its process to
// "verdaccio").
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { pnpm, root } from "../packages.ts";

const project = import.meta.dirname;
const bin = join(project, "node_modules", "verdaccio", "bin", "verdaccio");

export interface Registry {
  /** `http://127.0.0.1:PORT/` */
  readonly url: string;
  /** An npm userconfig holding a token for the registry (Verdaccio wants one on `npm publish`). */
  readonly userconfig: string;
  /** The process id Verdaccio runs as. */
  readonly pid: number;
  /** The promise that Verdaccio exits, with its exit code (or null when a signal ended it). */
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Installs Verdaccio into this folder from its lockfile unless it is there already. */
export function installVerdaccio(): void {
  if (existsSync(bin)) return;
  const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: project,
    encoding: "utf8",
    timeout: 180_000,
  });
  if (r.status !== 0 || !existsSync(bin)) {
    throw new Error(`npm ci in ${project} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stderr}`);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Starts Verdaccio in `dir` on a free loopback port and waits until it answers a ping. */
export async function startRegistry(dir: string): Promise<Registry> {
  installVerdaccio();
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    [
      `storage: ${JSON.stringify(join(dir, "storage"))}`,
      `auth: { htpasswd: { file: ${JSON.stringify(join(dir, "htpasswd"))}, max_users: -1 } }`,
      "uplinks: {}",
      "packages:",
      "  '@tideward/*': { access: $all, publish: $anonymous }",
      "  '**': { access: $all }",
      "web: { enable: false }",
      "max_body_size: 50mb",
      "log: { type: stdout, format: pretty, level: warn }",
      "",
    ].join("\n"),
  );
  const log = join(dir, "verdaccio.log");
  // A port found free can be taken before Verdaccio binds it; try a few.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/`;
    const out = openSync(log, "w");
    const child = spawn(process.execPath, [bin, "--config", config, "--listen", `127.0.0.1:${port}`], {
      stdio: ["ignore", out, out],
    });
    const stop = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      if (!(await exited(child, 5_000))) {
        child.kill("SIGKILL");
        await exited(child, 5_000);
      }
    };
    // Up to 60 s: on a loaded two-core machine it takes a few seconds to come up.
    for (let i = 0; i < 600 && child.exitCode === null; i++) {
      try {
        const res = await fetch(`${url}-/ping`, { signal: AbortSignal.timeout(2_000) });
        if (res.ok) {
          const userconfig = join(dir, "npmrc");
          writeFileSync(userconfig, `registry=${url}\n//127.0.0.1:${port}/:_authToken=anything\n`);
          if (child.pid === undefined) throw new Error("Verdaccio has no process id");
          const gone = new Promise<number | null>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
            else child.once("exit", (code) => resolve(code));
          });
          return { url, userconfig, pid: child.pid, exited: gone, stop };
        }
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await stop();
    const text = readFileSync(log, "utf8");
    if (attempt < 3 && text.includes("EADDRINUSE")) continue;
    throw new Error(`Verdaccio did not answer on ${url} (exit ${child.exitCode}):\n${text.slice(-2_000)}`);
  }
}

/**
 * An environment for npm and pnpm that talks to `registry` only, with a cache in `cache`:
 * nothing inherited from the npm or pnpm that started us may point elsewhere.
 */
export function registryEnv(registry: Registry, cache: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^(npm|pnpm)_config_/i.test(key)) env[key] = value;
  return {
    ...env,
    npm_config_registry: registry.url,
    "npm_config_@tideward:registry": registry.url,
    pnpm_config_registry: registry.url,
    "pnpm_config_@tideward:registry": registry.url,
    npm_config_userconfig: registry.userconfig,
    npm_config_cache: cache,
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
}

function capture(command: string, args: readonly string[], env: NodeJS.ProcessEnv, timeout: number) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeout);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * Builds every package and publishes each to `registry` with the project's release command
 * (`pnpm release`: turbo's build, then `changeset publish`), sibling ranges as semver ranges.
 * It first asks pnpm which registry it would publish to, and refuses unless that is `registry`:
 * nothing may go to the public one.
 */
export async function publishAll(registry: Registry, cache: string): Promise<void> {
  const env = registryEnv(registry, cache);
  const { command, args } = pnpm();
  const target = await capture(command, [...args, "config", "get", "registry"], env, 60_000);
  if (target.code !== 0 || target.output.trim() !== registry.url) {
    throw new Error(
      `pnpm would publish to ${JSON.stringify(target.output.trim())}, not ${registry.url}: nothing published`,
    );
  }
  const release = await capture(command, [...args, "run", "release", "--no-git-tag"], env, 600_000);
  if (release.code !== 0) throw new Error(`pnpm release exited ${release.code}:\n${release.output.slice(-4_000)}`);
}
