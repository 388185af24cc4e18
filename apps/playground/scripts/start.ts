// `pnpm start`: builds the playground and serves it on loopback, printing its address and
// nothing before it. The build is quiet unless it fails; the port is 4173 unless that is taken
// (then any free one) or PORT says otherwise. Ctrl-C (SIGINT) or SIGTERM stops it with exit
// code 0, during the build too: stopping the server is what the user asked for, not a failure.
// (The package.json scripts `exec` this, so no shell sits between pnpm and it: a shell that
// gets the terminal's SIGINT exits 130 whatever its child does, and pnpm reports that.)
import { join } from "node:path";
import { build } from "vite";
import { serve } from "./serve.ts";
import type { Served } from "./serve.ts";

let served: Served | undefined;
const stop = (): void => {
  if (served === undefined) process.exit(0);
  else void served.close().then(() => process.exit(0));
};
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, stop);

const root = join(import.meta.dirname, "..");
try {
  await build({ root, configFile: join(root, "vite.config.ts"), logLevel: "silent" });
} catch (error) {
  console.error("the playground did not build:", error);
  process.exit(1);
}
const wanted = Number(process.env.PORT ?? 4173);
try {
  served = await serve(join(root, "dist"), wanted);
} catch {
  served = await serve(join(root, "dist"), 0);
}
console.log(`tideward playground: ${served.url}`);
console.log("Ctrl-C stops it. The example programs: pnpm example <name> (pnpm example lists them).");
