// `pnpm registry`: every package built and published to a local npm registry (Verdaccio on a free
// loopback port, storage in a temporary folder), so that a project anywhere on this machine
// installs one the way it will from npm: `npm install --registry http://127.0.0.1:PORT
// @tideward/guard`. It runs until Ctrl-C (or SIGTERM), then stops Verdaccio, deletes the storage
// and exits 0.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publicPackages } from "../packages.ts";
import { installVerdaccio, publishAll, startRegistry } from "./verdaccio.ts";
import type { Registry } from "./verdaccio.ts";

const dir = mkdtempSync(join(tmpdir(), "tideward-registry-"));
let registry: Registry | undefined;
let stopping = false;

async function stop(code: number): Promise<void> {
  // pnpm passes Ctrl-C on as well as the terminal: the second signal finds us stopping already,
  // and must not end the process before the storage is gone.
  if (stopping) return;
  stopping = true;
  await registry?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (code === 0) console.log("\nregistry stopped, its storage deleted");
  process.exit(code);
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void stop(0));

try {
  console.log("starting a local registry (Verdaccio, which the first start installs with npm: about 15 s)");
  installVerdaccio();
  registry = await startRegistry(join(dir, "verdaccio"));
  const started = registry;
  void started.exited.then((exit) => {
    if (stopping) return;
    console.error(`Verdaccio stopped by itself (exit ${exit}); see ${join(dir, "verdaccio", "verdaccio.log")}`);
    void stop(1);
  });
  console.log(`building every package and publishing it to ${started.url} (pnpm release)`);
  await publishAll(started, join(dir, "npm-cache"));
  const url = started.url.replace(/\/$/, "");
  const names = [...publicPackages().keys()];
  console.log(
    [
      "",
      `Published ${names.length} packages to ${started.url} (storage ${dir}): ${names.join(", ")}.`,
      "In a project of yours, install any of them with npm; each brings the @tideward packages it",
      "depends on and nothing else:",
      "",
      `npm install --registry ${url} @tideward/guard`,
      "",
      "or, in a project with dependencies from npm as well, naming the registry for @tideward only:",
      "",
      `npm install --@tideward:registry=${url} @tideward/guard`,
      "",
      "Ctrl-C stops the registry and deletes its storage.",
    ].join("\n"),
  );
} catch (error) {
  if (!stopping) {
    console.error(`pnpm registry failed: ${error instanceof Error ? error.message : String(error)}`);
    await stop(1);
  }
}
