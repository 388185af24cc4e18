// Run after a package's build: takes the TSDoc out of its `internal` entry's declarations
// (dist/internal.d.ts, or the file after `--file`). That entry is for the sibling packages only, which are written against the
// sources (the "@tideward/source" condition) where the comments stay; in the published package
// they would be bytes every user installs and no user reads. Chunks it shares with the public
// entry keep theirs, and so does each declaration named after `--keep` (comma-separated): one a
// public entry re-exports from here, whose TSDoc users do read.
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

// `--shared` names declarations the internal entry alone exports that the bundler put in a chunk
// shared with a public entry (the type of a field the internal entry reads): their TSDoc, members'
// included, is taken out of those chunks too.
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

const sharedAt = process.argv.indexOf("--shared");
const shared = new Set(sharedAt === -1 ? [] : (process.argv[sharedAt + 1] ?? "").split(",").filter(Boolean));
if (shared.size > 0) {
  const found = new Set();
  for (const chunk of readdirSync(dirname(file)).filter((f) => /-[\w-]{8}\.d\.ts$/.test(f))) {
    const path = join(dirname(file), chunk);
    const lines = readFileSync(path, "utf8").split("\n");
    const out = [];
    for (let i = 0; i < lines.length; i++) {
      const name = lines[i].startsWith(" ") ? undefined : named.exec(lines[i])?.[1];
      if (name === undefined || !shared.has(name)) {
        out.push(lines[i]);
        continue;
      }
      found.add(name);
      // Its own comment, just above it, goes with it.
      if (out.at(-1)?.trimEnd().endsWith("*/")) while (!out.pop()?.trimStart().startsWith("/**"));
      let end = i;
      if (!lines[i].trimEnd().endsWith(";")) while (end < lines.length - 1 && !lines[end].startsWith("}")) end++;
      const body = lines
        .slice(i, end + 1)
        .join("\n")
        .replace(/^[ \t]*\/\*\*[\s\S]*?\*\/[ \t]*\n|\/\*\*[\s\S]*?\*\/ ?/gm, "");
      out.push(...body.split("\n"));
      i = end;
    }
    writeFileSync(path, out.join("\n"));
  }
  const missing = [...shared].filter((name) => !found.has(name));
  if (missing.length > 0) {
    console.error(`internal-dts: --shared names no declaration in a shared chunk: ${missing.join(", ")}`);
    process.exit(1);
  }
}
