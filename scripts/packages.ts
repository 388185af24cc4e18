// What the repository says the published packages are, read from packages/*/package.json (so a
// package added later is packed, published and installed without touching a list), and the
// commands that pack and publish them run through pnpm.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { delimiter, join } from "node:path";

export const root = join(import.meta.dirname, "..");

export interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  exports?: Record<string, unknown>;
  packageManager?: string;
}

export interface Workspace {
  dir: string;
  manifest: Manifest;
}

export const readManifest = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Manifest;

/** Every package under packages/ that is published (not private), by name. */
export function publicPackages(): Map<string, Workspace> {
  const out = new Map<string, Workspace>();
  for (const name of readdirSync(join(root, "packages")).sort()) {
    const dir = join(root, "packages", name);
    let manifest: Manifest;
    try {
      manifest = readManifest(join(dir, "package.json"));
    } catch {
      continue;
    }
    if (manifest.private !== true) out.set(manifest.name, { dir, manifest });
  }
  return out;
}

/** `names` and every package they depend on at run time, transitively, sorted. */
export function closure(names: readonly string[], packages: Map<string, Workspace>): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const dep of Object.keys(packages.get(name)?.manifest.dependencies ?? {})) visit(dep);
  };
  names.forEach(visit);
  return [...seen].sort();
}

/** The file name `pnpm pack` gives a package's tarball: `@tideward/time` 0.2.0 → `tideward-time-0.2.0.tgz`. */
export const tarballName = (manifest: Manifest) =>
  `${manifest.name.replace(/^@/, "").replace("/", "-")}-${manifest.version}.tgz`;

let found: { command: string; args: string[] } | undefined;

/**
 * How to run pnpm from a script: the pnpm that runs this script (`pnpm registry` sets
 * `npm_execpath`), else a pnpm on the PATH, else the version the repository names, fetched by
 * npx (the pnpm itself, not npx in front of it: npx ends by SIGINT on Ctrl-C whatever its command
 * does).
 */
export function pnpm(): { command: string; args: string[] } {
  if (found !== undefined) return found;
  const exec = process.env.npm_execpath;
  if (exec !== undefined && /pnpm\.[cm]?js$/.test(exec)) return (found = { command: process.execPath, args: [exec] });
  if (exec !== undefined && /pnpm(\.exe)?$/.test(exec)) return (found = { command: exec, args: [] });
  if ((process.env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && existsSync(join(dir, "pnpm"))))
    return (found = { command: "pnpm", args: [] });
  const version = (readManifest(join(root, "package.json")).packageManager ?? "").replace(/^pnpm@?/, "");
  const spec = `pnpm@${version === "" ? "latest" : version}`;
  const where = spawnSync("npm", ["exec", "--yes", `--package=${spec}`, "-c", "command -v pnpm"], { encoding: "utf8" });
  const bin = where.status === 0 ? where.stdout.trim() : "";
  return (found = bin !== "" && existsSync(bin) ? { command: bin, args: [] } : { command: "npx", args: ["-y", spec] });
}

/** A shell word: quoted only when it has to be. */
export const shellWord = (word: string) =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
