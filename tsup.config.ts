// One build for every package: the entries are read from the package's own `exports` map (its
// "@tideward/source" paths), so a package carries no tsup config.
//
// What ships is what a user runs, once: ES modules only (Node.js 20.19 and later `require()` them,
// so CommonJS callers need no second copy), one declaration file per entry point with its TSDoc,
// and chunks shared between a package's entry points (one copy of each class, so `instanceof`
// holds across them). The code is minified in whitespace and syntax but not in names, so a stack
// trace still names the function and a formatter makes the file readable again; no source maps
// (they would be as large as the code, and point at sources that are not shipped).
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
  format: ["esm"],
  target: "node20",
  platform: "neutral",
  // A sibling is imported, never bundled, so one copy of it serves every package; and `node:http`
  // stays `node:http`, so no bundler mistakes it for a package of that name.
  external: [/^@tideward\//, /^node:/],
  removeNodeProtocol: false,
  dts: {
    // Declarations of a sibling come from its built dist, not its source.
    compilerOptions: { customConditions: [], composite: false },
  },
  minifyWhitespace: true,
  minifySyntax: true,
  esbuildOptions(options) {
    // Lines of at most about 160 characters: a stack trace's line number still narrows it down.
    options.lineLimit = 160;
  },
  sourcemap: false,
  clean: true,
  treeshake: true,
  splitting: true,
});
