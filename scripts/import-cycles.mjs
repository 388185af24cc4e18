// Fails when a package's own modules import each other in a cycle, type-only imports included (a
// cycle of types is still a knot a reader has to untie). Reads every packages/*/src tree, follows
// relative `import … from` and `export … from` specifiers, and prints each cycle it finds.
//
//   node scripts/import-cycles.mjs            every package
//   node scripts/import-cycles.mjs limiters   only the packages named
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = join(import.meta.dirname, "..");
const only = process.argv.slice(2);
const packages = readdirSync(join(root, "packages")).filter((name) => only.length === 0 || only.includes(name));

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

// The module a relative specifier names: `./x` is `./x.ts`, `./x/index.ts` or `./x.js` written for `./x.ts`.
function target(from, spec) {
  const base = resolve(dirname(from), spec);
  const candidates = [base, `${base}.ts`, `${base}.tsx`, base.replace(/\.js$/, ".ts"), join(base, "index.ts")];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

const IMPORT = /^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gms;

let cycles = 0;
for (const name of packages) {
  const src = join(root, "packages", name, "src");
  if (!existsSync(src)) continue;
  const graph = new Map();
  for (const file of files(src)) {
    const text = readFileSync(file, "utf8");
    const deps = [];
    for (const m of text.matchAll(IMPORT)) if (m[1].startsWith(".")) deps.push(target(file, m[1]));
    graph.set(
      file,
      deps.filter((d) => d !== undefined),
    );
  }
  // Depth-first, colouring each module: a back edge to a module still on the stack is a cycle.
  const state = new Map();
  const stack = [];
  const visit = (file) => {
    state.set(file, "open");
    stack.push(file);
    for (const dep of graph.get(file) ?? []) {
      if (state.get(dep) === "open") {
        cycles++;
        const loop = [...stack.slice(stack.indexOf(dep)), dep].map((f) => relative(src, f));
        console.error(`@tideward/${name}: import cycle ${loop.join(" → ")}`);
      } else if (!state.has(dep)) visit(dep);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
}
if (cycles > 0) process.exit(1);
console.log(`no import cycles in ${packages.length} package(s)`);
