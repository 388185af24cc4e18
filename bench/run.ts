// Runs every bench/src/*.bench.ts in a child process of its own, one after another, so that one
// benchmark's JIT and heap state never colour the next. `pnpm bench breaker` runs only those
// whose file name contains "breaker". A name that is exactly a program's in bench/src and not a
// benchmark's (`pnpm bench breaker-sweep` for src/breaker-sweep.ts) runs that program alone;
// arguments starting with "--" are handed to whatever runs.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

const dir = join(import.meta.dirname, "src");
const flags = process.argv.slice(2).filter((a) => a.startsWith("--"));
const filter = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const programs = filter.filter((x) => existsSync(join(dir, `${x}.ts`))).map((x) => `${x}.ts`);
const files =
  programs.length > 0
    ? programs
    : readdirSync(dir)
        .filter((f) => f.endsWith(".bench.ts"))
        .filter((f) => filter.length === 0 || filter.some((x) => f.includes(x)))
        .sort();

console.log(`node ${process.version}, ${files.length} benchmark file(s)`);
let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file}`);
  const run = spawnSync(
    process.execPath,
    ["--expose-gc", "--conditions=@tideward/source", "--import", "tsx", join(dir, file), ...flags],
    {
      stdio: "inherit",
    },
  );
  if (run.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
