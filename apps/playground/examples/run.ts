// Runs the example programs one after another: `pnpm start` runs them all,
// `pnpm start -- limiters` only those whose name contains "limiters".
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dir = import.meta.dirname;
const filter = process.argv.slice(2).filter((a) => a !== "--");
const programs = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts")
  .filter((f) => filter.length === 0 || filter.some((x) => f.includes(x)))
  .sort();

for (const file of programs) {
  console.log(`\n── ${file.replace(/\.ts$/, "")} ──`);
  const mod = (await import(pathToFileURL(join(dir, file)).href)) as { main: () => string[] | Promise<string[]> };
  for (const line of await mod.main()) console.log(line);
}
