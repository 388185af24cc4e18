// What the repository says the published packages are (read from packages/*/package.json by
// scripts/packages.ts, so a package added later is published, installed and bundled without
// touching this test), and the helpers the consumer tests share.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { readManifest } from "../../../scripts/packages.ts";
import type { Manifest } from "../../../scripts/packages.ts";

export { closure, publicPackages, root, tarballName } from "../../../scripts/packages.ts";
export type { Manifest, Workspace } from "../../../scripts/packages.ts";

/** The manifest of this test's own workspace. */
export const self = () => readManifest(join(import.meta.dirname, "..", "package.json"));

/** A dependency range as the packed manifest must carry it: `workspace:^` becomes `^<version>`. */
export function packedRange(range: string, version: string): string {
  const m = /^workspace:(.*)$/.exec(range);
  if (m === null) return range;
  const spec = m[1] ?? "";
  if (spec === "*" || spec === "") return version;
  if (spec === "^" || spec === "~") return `${spec}${version}`;
  return spec;
}

/** The public entry points of a package: `@scope/name` and `@scope/name/sub`, not package.json. */
export function entryPoints(manifest: Manifest): string[] {
  return Object.keys(manifest.exports ?? { ".": null })
    .filter((key) => key !== "./package.json" && !key.includes("*"))
    .map((key) => (key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`));
}

/** Bytes and files under `dir`, recursively. */
export function du(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const sub = du(path);
      bytes += sub.bytes;
      files += sub.files;
    } else if (entry.isFile()) {
      bytes += statSync(path).size;
      files++;
    }
  }
  return { bytes, files };
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (killed after `timeout` ms); rejects with its output unless it exits 0. */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number; allowFailure?: boolean },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeout ?? 120_000);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      const ran = { code, stdout, stderr };
      if (code === 0 || options.allowFailure === true) resolve(ran);
      else reject(new Error(`${command} ${args.join(" ")} (in ${options.cwd}) exited ${code}\n${stdout}\n${stderr}`));
    });
  });
}
