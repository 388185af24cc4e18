// One build for every package: the entries are read from the package's own
// `exports` map (its "@tideward/source" paths), so a package carries no tsup config.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { defineConfig } from "tsup";

type ExportEntry = { "@tideward/source"?: string } | string;

function entries(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(resolve(process.cwd(), "package.json"), "utf8")) as {
    exports?: Record<string, ExportEntry>;
  };
  const out: Record<string, string> = {};
  for (const value of Object.values(pkg.exports ?? {})) {
    if (typeof value === "string") continue;
    const source = value["@tideward/source"];
    if (source === undefined) continue;
    // ./src/node/index.ts -> node/index
    out[source.replace(/^\.\/src\//, "").replace(/\.ts$/, "")] = source;
  }
  if (Object.keys(out).length === 0) throw new Error("no @tideward/source entry in package.json exports");
  return out;
}

export default defineConfig({
  entry: entries(),
  format: ["esm", "cjs"],
  target: "node20",
  platform: "neutral",
  dts: {
    // Declarations of a sibling come from its built dist, not its source.
    compilerOptions: { customConditions: [], composite: false },
  },
  sourcemap: true,
  clean: true,
  treeshake: true,
  splitting: false,
});
