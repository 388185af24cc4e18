// Run after a package's build: takes the TSDoc out of its `internal` entry's declarations
// (dist/internal.d.ts). That entry is for the sibling packages only, which are written against the
// sources (the "@tideward/source" condition) where the comments stay; in the published package
// they would be bytes every user installs and no user reads. Chunks it shares with the public
// entry keep theirs.
import { existsSync, readFileSync, writeFileSync } from "node:fs";

const file = "dist/internal.d.ts";
if (!existsSync(file)) {
  console.error(`internal-dts: no ${file} in ${process.cwd()} (run it after the build)`);
  process.exit(1);
}
const text = readFileSync(file, "utf8");
const bare = text.replace(/^[ \t]*\/\*\*[\s\S]*?\*\/[ \t]*\n/gm, "").replace(/\/\*\*[\s\S]*?\*\/ ?/g, "");
writeFileSync(file, bare);
