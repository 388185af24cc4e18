// Builds the text Redis runs for each script of src/lua from the script and the parts it names
// (src/lua/parts/*.lua), so that every step, decode and check is written once.
//
// A part file holds only top-level definitions, each starting at a line's start:
// - `local NAME = value` (one line): prepended to a script that names it;
// - `local function name(params)` … `end` (its body indented): written out in place at each call,
//   as if called. A script pays nothing to define a function (in Redis's Lua a closure costs about
//   what a token bucket's whole step does) nor to call one. So a part's body may `return` only on its
//   last line, and a call must stand as a statement of its own line: `name(args)`,
//   `targets = name(args)` or `local names = name(args)`. It becomes a `do … end` block binding
//   the parameters to the arguments, then the body, then the targets to what it returns, every
//   local of the body renamed apart (`level` becomes `level_7`), so no name of the script's or of
//   another part's can be caught or shadowed. Parts may call parts (not in a cycle).
//
// So a new script is one file: its first line names it, its code reads ARGV and calls the parts it
// needs (`clock`, `foreign`, `decode`, `step`, …). `pnpm embed` builds it; a part that does not
// fit these rules, or a call that is not a statement, stops the build naming the line.
//
// Written out at each call in the text Redis runs, a part is held once in the package: the text
// at every place is the same but for its locals' names, so src/scripts.ts holds it as a template
// given those names, and each script is joined from its own lines and those (shareParts).
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { stripLua } from "./strip-lua.mjs";

const KEYWORDS = new Set(
  "and break do else elseif end false for function if in local nil not or repeat return then true until while".split(
    " ",
  ),
);
const DEFINITION = /^local (function )?([A-Za-z_]\w*)\b/;
// An identifier that is a name, not a field (t.name, s:name) nor part of a number (1e-9).
const NAME = /(?<![.:\w])[A-Za-z_]\w*/g;

/**
 * A line of Lua as its code and string pieces (`code` true for code), its comment dropped.
 * @param {string} line
 */
function pieces(line) {
  const out = [];
  let code = "";
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== ch) j += line[j] === "\\" ? 2 : 1;
      out.push({ code: true, text: code }, { code: false, text: line.slice(i, j + 1) });
      code = "";
      i = j;
    } else if (ch === "-" && line[i + 1] === "-") break;
    else code += ch;
  }
  out.push({ code: true, text: code });
  return out;
}

/** @param {string} line */
const codeOf = (line) =>
  pieces(line)
    .map((p) => (p.code ? p.text : "''"))
    .join("");

/** The names a line of code uses (fields, keywords, strings and comments left out). @param {string} line */
function namesOf(line) {
  return (codeOf(line).match(NAME) ?? []).filter((n) => !KEYWORDS.has(n));
}

/** The names a line declares: `local a, b`, `local function f`, `for a, b in`, `for i =`, `function(x, y)`. */
function declared(line) {
  const code = codeOf(line);
  const names = [];
  for (const m of code.matchAll(/\blocal\s+function\s+([A-Za-z_]\w*)/g)) names.push(m[1]);
  for (const m of code.matchAll(/\blocal\s+(?!function\b)([A-Za-z_][\w\s,]*?)\s*(?:=|$)/g))
    names.push(...m[1].split(",").map((s) => s.trim()));
  for (const m of code.matchAll(/\bfor\s+([A-Za-z_][\w\s,]*?)\s*(?:=|\bin\b)/g))
    names.push(...m[1].split(",").map((s) => s.trim()));
  for (const m of code.matchAll(/\bfunction\s*[\w.:]*\s*\(([^)]*)\)/g))
    names.push(
      ...m[1]
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "" && s !== "..."),
    );
  return names;
}

/** `line` with each name in `map` renamed, outside strings and comments. */
function rename(line, map) {
  return pieces(line)
    .map((p) => (p.code ? p.text.replace(NAME, (n) => map.get(n) ?? n) : p.text))
    .join("");
}

// The expressions of an argument list, split at its top-level commas.
function splitArgs(text) {
  const out = [];
  let depth = 0;
  let current = "";
  for (const p of pieces(text)) {
    if (!p.code) {
      current += p.text;
      continue;
    }
    for (const ch of p.text) {
      if ("([{".includes(ch)) depth++;
      else if (")]}".includes(ch)) depth--;
      if (ch === "," && depth === 0) {
        out.push(current.trim());
        current = "";
      } else current += ch;
    }
  }
  if (current.trim() !== "" || out.length > 0) out.push(current.trim());
  return out;
}

// The names a line assigns to (`x = `, `x, y = `), conservatively: any name standing before a
// lone `=`, or in a list before one.
function assignedIn(line) {
  const code = codeOf(line);
  const names = [];
  for (const m of code.matchAll(/(?<![.:\w])([A-Za-z_]\w*)\s*(?:,[\w\s,[\]]*)?=(?!=)/g)) names.push(m[1]);
  for (const m of code.matchAll(/,\s*([A-Za-z_]\w*)\s*(?:,[\w\s,[\]]*)?=(?!=)/g)) names.push(m[1]);
  return names;
}

// Whether the parentheses of `text` balance (strings aside) and never close below zero.
function balanced(text) {
  let depth = 0;
  for (const ch of codeOf(text)) {
    if (ch === "(") depth++;
    else if (ch === ")" && --depth < 0) return false;
  }
  return depth === 0;
}

/**
 * A line of code as shipped: its comment dropped and no space a token does not need (as the
 * package's JavaScript is minified in whitespace but not in names). A space stays between two
 * names or numbers (`local x`), between a number and a dot (`1 ..`, not a number `1..`; but
 * `v_1..`, as a name ends where a dot starts), and between two `-` or two `[`, which would start a
 * comment or a long string. So a line squeezes the same whatever its names: a part written out
 * with its locals renamed is its lines as shipped with other names in them.
 * @param {string} line
 */
export function squeeze(line) {
  const word = /\w/;
  // Whether the text so far ends in a number: a word starting with a digit (1, 2.5, 1e-9).
  const numeral = (text) => /(?<!\w)\d[\w.]*$/.test(text);
  const needed = (a, b) =>
    (word.test(a) && word.test(b)) ||
    (/\d/.test(a) && b === "." && numeral(out)) ||
    (a === "." && /[\d.]/.test(b)) ||
    (a === "-" && b === "-") ||
    (a === "[" && b === "[");
  const parts = pieces(line);
  let out = "";
  for (const [i, p] of parts.entries()) {
    if (!p.code) {
      out += p.text;
      continue;
    }
    const text = p.text;
    for (let j = 0; j < text.length; j++) {
      if (!/\s/.test(text[j])) {
        out += text[j];
        continue;
      }
      while (j + 1 < text.length && /\s/.test(text[j + 1])) j++;
      // The next character: in this piece, else the next piece's first (a string's quote).
      const next = j + 1 < text.length ? text[j + 1] : (parts[i + 1]?.text[0] ?? "");
      if (out !== "" && next !== "" && needed(out[out.length - 1], next)) out += " ";
    }
  }
  return out;
}

/**
 * The parts of `dir/parts`: values and functions, each with its code as stripLua ships it.
 * @param {string} dir
 */
export function readParts(dir) {
  const parts = new Map();
  const files = readdirSync(join(dir, "parts"))
    .filter((f) => f.endsWith(".lua"))
    .sort();
  for (const file of files) {
    let current;
    for (const line of readFileSync(join(dir, "parts", file), "utf8").split("\n")) {
      const m = DEFINITION.exec(line);
      if (m) {
        if (parts.has(m[2])) throw new Error(`parts/${file}: ${m[2]} is defined twice`);
        current = { name: m[2], file, fn: m[1] !== undefined, lines: [line] };
        parts.set(m[2], current);
        if (!current.fn) current = undefined;
      } else if (line.trim() === "" || line.trim().startsWith("--")) {
        // a comment or a blank line: not shipped
      } else if (current === undefined || !(line.startsWith(" ") || line === "end")) {
        throw new Error(`parts/${file}: "${line}" is neither a definition nor inside a function's`);
      } else current.lines.push(line);
    }
  }
  for (const p of parts.values()) {
    const where = `parts/${p.file}: ${p.name}`;
    if (!p.fn) {
      p.code = `${p.lines[0]}\n`;
      continue;
    }
    if (p.lines.at(-1) !== "end") throw new Error(`${where} does not end with "end" at a line's start`);
    const head = /^local function \w+\(([^)]*)\)\s*$/.exec(p.lines[0]);
    if (head === null) throw new Error(`${where}: its parameters must close on its first line`);
    p.params = head[1]
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
    const raw = p.lines.slice(1, -1);
    const body = raw.map((l) => l.trim());
    // A one-line function inside (a gsub callback) may return within itself.
    const returns = body.filter((l) => /\breturn\b/.test(codeOf(l).replace(/\bfunction\s*\([^)]*\).*?\bend\b/g, "")));
    const last = body.at(-1) ?? "";
    if (returns.length > 1 || (returns.length === 1 && !last.startsWith("return ")))
      throw new Error(`${where} may return only on its last line, to be written out at its calls`);
    p.result = returns.length === 1 ? last.slice("return ".length) : undefined;
    p.body = returns.length === 1 ? body.slice(0, -1) : body;
    p.locals = new Set([...p.params, ...body.flatMap(declared)]);
    // The names it uses that are not its own: globals (struct, math, redis), values of parts.
    p.free = new Set(body.flatMap(namesOf).filter((n) => !p.locals.has(n)));
    // A parameter the body never assigns nor declares again may stand for its argument itself,
    // when that is a name: no copy made.
    const again = new Set([...body.flatMap(declared), ...body.flatMap(assignedIn)]);
    p.constant = new Set(p.params.filter((n) => !again.has(n)));
    // What it returns, when that is locals each declared once, on a line of the body's own (not
    // nested) that declares only them: a call into names of the caller's may have the body work on
    // those names themselves, with no copy at the end.
    const results = p.result?.split(",").map((r) => r.trim());
    if (results?.every((r) => /^[A-Za-z_]\w*$/.test(r))) {
      const counts = new Map();
      for (const n of body.flatMap(declared)) counts.set(n, (counts.get(n) ?? 0) + 1);
      const lines = p.body.map((l, i) =>
        raw[i].startsWith("  local ") && !raw[i].startsWith("   ") ? declared(l) : [],
      );
      const own = results.every(
        (r) => counts.get(r) === 1 && !p.params.includes(r) && lines.some((names) => names.includes(r)),
      );
      if (own && new Set(results).size === results.length) p.forward = { results, lines };
    }
  }
  return parts;
}

/**
 * `lines` (code, unindented) with every call of a function part written out, recursively;
 * `state` counts the renamings and collects the parts used, `within` the calls being written out.
 */
function inline(lines, parts, where, state, within = []) {
  const out = [];
  for (const line of lines) {
    const names = namesOf(line);
    for (const n of names) if (parts.get(n)?.fn === false) state.values.add(n);
    const called = names.filter((n) => parts.get(n)?.fn === true);
    if (called.length === 0) {
      out.push(line);
      continue;
    }
    const m = /^(local\s+)?(?:([^=]+?)\s*=\s*)?([A-Za-z_]\w*)\((.*)\)$/.exec(line);
    const p = m === null ? undefined : parts.get(m[3]);
    if (m === null || p === undefined || !p.fn || !balanced(m[4]) || called.length > 1)
      throw new Error(
        `${where}: "${line}": a part's call must be a statement of its own line (name(args), x = name(args), local x = name(args))`,
      );
    if (within.includes(p.name)) throw new Error(`${where}: ${[...within, p.name].join(" calls ")}`);
    state.calls.add(p.name);
    const [, isLocal, targets, , args] = m;
    const k = ++state.counter;
    const given = splitArgs(args);
    const bound = [];
    const values = [];
    // Fewer arguments than parameters: the rest are nil, unless the last one is a call, which may
    // answer several values (then every argument is bound as a call binds them).
    const exact =
      given.length === p.params.length || (given.length < p.params.length && !/\)$/.test(given.at(-1) ?? ")"));
    const subst = new Map();
    for (const [i, n] of p.params.entries()) {
      const arg = given[i];
      if (arg !== undefined && exact && p.constant.has(n) && /^[A-Za-z_]\w*$/.test(arg) && !KEYWORDS.has(arg))
        subst.set(n, arg);
    }
    const into = targets?.split(",").map((t) => t.trim()) ?? [];
    // A local of the body keeps its name unless it is one the body must still reach (an argument's
    // name standing for a parameter, a global it uses) or the call assigns (a target): then it is
    // renamed apart (`level_7`). The do … end block keeps the others from the caller's names.
    const clash = new Set([...subst.values(), ...(targets === undefined ? [] : namesOf(targets)), ...p.free]);
    const map = new Map();
    for (const n of p.locals) map.set(n, subst.get(n) ?? (clash.has(n) ? `${n}_${k}` : n));
    for (const [i, n] of p.params.entries()) {
      if (subst.has(n)) continue;
      bound.push(map.get(n));
      values.push(given[i] ?? "nil");
    }
    if (isLocal !== undefined && given.some((a) => namesOf(a).some((n) => into.includes(n))))
      throw new Error(`${where}: "${line}": an argument names what the call declares`);
    // The body's result locals become the targets themselves, when they are names no argument
    // stands in for and no name of the body is.
    let body = p.body;
    // The first results, as many as there are targets; a line declaring some of them must declare
    // only those.
    const taken = p.forward?.results.slice(0, into.length) ?? [];
    const forward =
      p.forward !== undefined &&
      into.length > 0 &&
      into.length <= p.forward.results.length &&
      p.forward.lines.every(
        (names) => names.every((n) => taken.includes(n)) || names.every((n) => !taken.includes(n)),
      ) &&
      into.every((n) => /^[A-Za-z_]\w*$/.test(n) && !KEYWORDS.has(n)) &&
      new Set(into).size === into.length &&
      !into.some((n) => [...subst.values()].includes(n) || p.free.has(n));
    if (forward) {
      taken.forEach((r, i) => map.set(r, into[i]));
      body = p.body.map((l, i) => {
        if (!p.forward.lines[i].some((n) => taken.includes(n))) return l;
        const m = /^local\s+([^=]+?)\s*(=.*)?$/.exec(l);
        if (m[2] !== undefined) return `${m[1]} ${m[2]}`;
        return isLocal !== undefined
          ? ""
          : `${m[1]} = ${m[1]
              .split(",")
              .map(() => "nil")
              .join(", ")}`;
      });
    }
    if (isLocal !== undefined && targets !== undefined) out.push(`local ${targets}`);
    out.push("do");
    if (bound.length > 0) {
      if (exact) out.push(`local ${bound.join(", ")} = ${values.join(", ")}`);
      else out.push(`local ${bound.join(", ")}${args.trim() === "" ? "" : ` = ${args}`}`);
    }
    // Each run of its lines that calls no part is written out as it is at every call but for its
    // locals' names: kept as those lines and those names (`{ part, lines, map }`, rendered in
    // linkScript), so the module may hold it once (shareParts). A line calling a part is written
    // out in turn.
    let run;
    for (const l of body) {
      if (l === "") continue;
      if (namesOf(l).some((n) => parts.get(n)?.fn === true)) {
        run = undefined;
        out.push(...inline([rename(l, map)], parts, `parts/${p.file}: ${p.name}`, state, [...within, p.name]));
        continue;
      }
      for (const n of namesOf(l)) if (parts.get(n)?.fn === false) state.values.add(n);
      if (run === undefined) out.push((run = { part: p, lines: [], map }));
      run.lines.push(l);
    }
    if (p.result !== undefined && !forward) {
      const result = rename(p.result, map);
      if (targets !== undefined) out.push(`${targets} = ${result}`);
      else if (!/^[A-Za-z_]\w*$/.test(result)) out.push(`local _ = ${result}`);
    }
    out.push("end");
  }
  return out;
}

/**
 * The text Redis runs for `file` (in `dir`): its first line (which names it in SCRIPT and
 * SLOWLOG output), the values it uses, then its code with each call of a part written out.
 * @param {string} dir
 * @param {string} file
 * @param {ReturnType<typeof readParts>} parts
 * @returns {{ source: string, parts: string[] }}
 */
export function linkScript(dir, file, parts) {
  const [first, ...code] = stripLua(readFileSync(join(dir, file), "utf8")).split("\n");
  code.pop(); // the empty string after the last newline
  for (const line of code)
    for (const n of declared(line))
      if (parts.has(n)) throw new Error(`${file}: "${line}" declares ${n}, the name of a part`);
  const state = { counter: 0, values: new Set(), calls: new Set() };
  const body = inline(code, parts, file, state);
  // The globals the written-out parts use must be the globals at every call: no local of the
  // script's may take one of their names.
  const locals = new Set(code.flatMap(declared));
  for (const p of parts.values()) {
    if (!p.fn) continue;
    for (const n of [...p.body, p.result ?? ""].flatMap(namesOf))
      if (!p.locals.has(n) && !parts.has(n) && locals.has(n))
        throw new Error(`${file} declares ${n}, which parts/${p.file}: ${p.name} uses as a global`);
  }
  const values = [...parts.values()].filter((p) => state.values.has(p.name));
  // Its lines in order: each a line of code as shipped, or a value's line, or a run of a part's
  // lines written out (its lines and the names its locals take there).
  const written = [
    first,
    ...values.map((p) => ({ part: p, lines: [p.lines[0]], map: new Map() })),
    ...body.map((l) => (typeof l === "string" ? squeeze(l) : l)),
  ];
  const source = written.map((l) => (typeof l === "string" ? l : render(l))).join("\n") + "\n";
  return {
    source,
    written,
    parts: [...parts.values()].filter((p) => state.values.has(p.name) || state.calls.has(p.name)).map((p) => p.name),
  };
}

/** A value's line, or a run of a part's lines, as written out at one place: its locals renamed, squeezed. */
const render = ({ lines, map }) => lines.map((l) => squeeze(rename(l, map))).join("\n");

/**
 * A run's lines as shipped with a hole at each local of its part: the pieces of text between them
 * and the locals' names, in order (`[text, name, text, …, text]`).
 */
function skeleton({ part, lines }) {
  // Each local renamed to a name of its own (a name squeezes as any other does), then split there.
  const locals = [...(part.locals ?? [])];
  const hole = new Map(locals.map((n, i) => [n, `__hole${i}__`]));
  const text = lines.map((l) => squeeze(rename(l, hole))).join("\n");
  if (/__hole\d+__/.test(lines.join("\n"))) throw new Error(`parts/${part.file}: ${part.name} names a hole`);
  return text.split(/__hole(\d+)__/).map((t, i) => (i % 2 === 0 ? t : locals[Number(t)]));
}

/**
 * The scripts as the module holds them, each piece of Lua once where it can be. A value, or a run
 * of a part's lines between its calls of other parts, written out at several places is the same
 * text at each but for its locals' names (the foreign-key formatter at twenty places, the clock,
 * an algorithm's step): it is held once, as a template given those names, and each script is its
 * own lines and calls of templates, joined when the module loads. So Redis runs the text
 * `linkScripts` builds, and the package carries each part once, not once at each call.
 * @param {ReturnType<typeof linkScripts>} scripts
 */
export function shareParts(scripts) {
  // The places each run is written out, by its part and its lines as shipped with holes.
  const groups = new Map();
  for (const s of scripts)
    for (const l of s.written) {
      if (typeof l === "string") continue;
      const shape = skeleton(l);
      const key = `${l.part.name}\0${shape.join("\0")}`;
      if (!groups.has(key)) groups.set(key, { part: l.part, shape, calls: [] });
      groups.get(key).calls.push(l);
    }
  const templates = new Map();
  const taken = new Map();
  for (const g of groups.values()) {
    // A local that takes its own name at every call stays written; the others are the template's
    // parameters, in the order they first appear.
    const holes = [];
    for (let i = 1; i < g.shape.length; i += 2) {
      const n = g.shape[i];
      if (!holes.includes(n) && g.calls.some((c) => c.map.get(n) !== n)) holes.push(n);
    }
    const fill = (args) => g.shape.map((t, i) => (i % 2 === 0 ? t : (args[holes.indexOf(t)] ?? t))).join("");
    // A place whose text the template cannot give stays written (none does today: a line
    // squeezes alike whatever its names).
    const calls = g.calls.filter((c) => fill(holes.map((n) => c.map.get(n))) === render(c));
    // Held once where that is shorter: each call costs its name and the names it passes.
    const size = g.shape.join("").length;
    if (calls.length < 2 || (calls.length - 1) * size < calls.length * 8 * (holes.length + 1) + 40) continue;
    const count = (taken.get(g.part.name) ?? 0) + 1;
    taken.set(g.part.name, count);
    const t = {
      name: `${g.part.name}Part${count === 1 ? "" : count}`,
      part: g.part.name,
      file: g.part.file,
      holes,
      shape: g.shape,
      fill,
    };
    for (const c of calls) templates.set(c, t);
  }
  const out = scripts.map((s) => {
    // Its text as pieces: strings, and calls of templates (`{ template, args }`), in order.
    const chunks = [];
    const text = (t) => {
      if (typeof chunks.at(-1) === "string") chunks[chunks.length - 1] += t;
      else chunks.push(t);
    };
    for (const [i, l] of s.written.entries()) {
      if (i > 0) text("\n");
      const t = typeof l === "string" ? undefined : templates.get(l);
      if (t === undefined) text(typeof l === "string" ? l : render(l));
      else chunks.push({ template: t, args: t.holes.map((n) => l.map.get(n)) });
    }
    text("\n");
    const joined = chunks.map((c) => (typeof c === "string" ? c : c.template.fill(c.args))).join("");
    if (joined !== s.source) throw new Error(`${s.file}: its shared parts do not give its text`);
    return { name: s.name, chunks };
  });
  return { templates: [...new Set(templates.values())], scripts: out };
}

/**
 * Every script of `dir` (src/lua), built: its name (the file's) and the text Redis runs.
 * @param {string} dir
 */
export function linkScripts(dir) {
  const parts = readParts(dir);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".lua"))
    .sort()
    .map((file) => ({ name: file.replace(/\.lua$/, ""), file, ...linkScript(dir, file, parts) }));
}
