// Run after a package's build: takes the TSDoc out of its `internal` entry's declarations
// (dist/internal.d.ts, or the file after `--file`). That entry is for the sibling packages only, which are written against the
// sources (the "@tideward/source" condition) where the comments stay; in the published package
// they would be bytes every user installs and no user reads. Chunks it shares with the public
// entry keep theirs, and so does each declaration named after `--keep` (comma-separated): one a
// public entry re-exports from here, whose TSDoc users do read.
import { existsSync, readFileSync, writeFileSync } from "node:fs";

// `--file` names another entry of the same standing (one documented as not covered by semver).
const fileAt = process.argv.indexOf("--file");
const file = fileAt === -1 ? "dist/internal.d.ts" : (process.argv[fileAt + 1] ?? "");
if (!existsSync(file)) {
  console.error(`internal-dts: no ${file} in ${process.cwd()} (run it after the build)`);
  process.exit(1);
}
const at = process.argv.indexOf("--keep");
const keep = new Set(at === -1 ? [] : (process.argv[at + 1] ?? "").split(",").filter(Boolean));
const text = readFileSync(file, "utf8");
const named = /^\s*(?:export\s+)?(?:declare\s+)?(?:type|interface|function|const|class|enum)\s+([\w$]+)/;
const kept = new Set();
// A comment on lines of its own (taken with its line), or one inline.
const bare = text.replace(/^[ \t]*\/\*\*[\s\S]*?\*\/[ \t]*\n|\/\*\*[\s\S]*?\*\/ ?/gm, (comment, offset) => {
  const after = offset + comment.length;
  const name = comment.endsWith("\n") ? named.exec(text.slice(after, after + 200))?.[1] : undefined;
  if (name === undefined || !keep.has(name)) return "";
  kept.add(name);
  return comment;
});
const missing = [...keep].filter((name) => !kept.has(name));
if (missing.length > 0) {
  console.error(`internal-dts: --keep names no documented declaration in ${file}: ${missing.join(", ")}`);
  process.exit(1);
}
writeFileSync(file, bare);
