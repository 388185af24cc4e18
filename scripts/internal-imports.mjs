// Moves imports of tideward's internal helpers to the internal entry points they live in now:
// `check` from "@tideward/time" to "@tideward/time/internal", and the shedder's cgroup and core
// helpers from "@tideward/shedder/node" to "@tideward/shedder/internal". Only import lines
// change. Run it (`node scripts/internal-imports.mjs`) after merging code written before the move;
// it prints the files it rewrote and is a no-op when there are none.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(import.meta.dirname, "..");
const moves = [
  { from: "@tideward/time", to: "@tideward/time/internal", names: new Set(["check"]) },
  {
    from: "@tideward/shedder/node",
    to: "@tideward/shedder/internal",
    names: new Set(["availableCores", "cgroupCores", "parseCpuMax", "readText", "CoresOptions"]),
  },
];

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist" || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (/\.(m|c)?tsx?$/.test(entry.name)) yield path;
  }
}

/** The import statement for `names` from `from`, or nothing when there are none. */
const statement = (type, names, from) =>
  names.length === 0 ? [] : [`import ${type}{ ${names.join(", ")} } from "${from}";`];

let changed = 0;
for (const group of ["packages", "apps", "bench", "tests"]) {
  let paths;
  try {
    paths = [...files(join(root, group))];
  } catch {
    continue;
  }
  for (const path of paths) {
    const text = readFileSync(path, "utf8");
    let next = text;
    for (const move of moves) {
      const pattern = new RegExp(
        String.raw`^import (type )?\{([^}]*)\} from "${move.from.replace("/", "\\/")}";$`,
        "gm",
      );
      next = next.replace(pattern, (line, type = "", list) => {
        const names = list
          .split(",")
          .map((n) => n.trim())
          .filter(Boolean);
        const moved = names.filter((n) => move.names.has(n.replace(/^type\s+/, "").split(/\s+as\s+/)[0]));
        if (moved.length === 0) return line;
        const kept = names.filter((n) => !moved.includes(n));
        return [...statement(type, kept, move.from), ...statement(type, moved, move.to)].join("\n");
      });
    }
    if (next !== text) {
      writeFileSync(path, next);
      changed++;
      console.log(relative(root, path));
    }
  }
}
console.log(`${changed} file(s) rewritten`);
