// Runs every bench/src/*.bench.ts in a child process of its own, one after another, so that one
// benchmark's JIT and heap state never colour the next. `pnpm bench breaker` runs only those
// whose file name contains "breaker".
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const dir = join(import.meta.dirname, "src");
const filter = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => filter.length === 0 || filter.some((x) => f.includes(x)))
  .sort();

console.log(`node ${process.version}, ${files.length} benchmark file(s)`);
let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file}`);
  const run = spawnSync(
    process.execPath,
    ["--expose-gc", "--conditions=@tideward/source", "--import", "tsx", join(dir, file)],
    {
      stdio: "inherit",
    },
  );
  if (run.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
