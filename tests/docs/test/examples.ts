// Reads the TSDoc `@example` blocks out of the packages' sources and turns each into a module
// that runs it. The conventions an example is written to:
//
// - It is a complete program: every name it uses is declared in it, imported in it, or exported
//   by its own package (those imports are added; a name the example declares is not).
// - A line `expression; // value`, where the comment starts with a literal (a number, a string,
//   true/false/null/undefined, Infinity/NaN, or a one-line array or object) followed by the end
//   of the comment, " — ", ": " or " (", asserts that the expression equals the value. Any
//   other comment is prose.
// - An example that imports "vitest" is test code itself (a conformance suite, say) and runs as
//   a test module.
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";

export interface Example {
  /** The package's folder name under packages/. */
  readonly folder: string;
  /** The source file, relative to the repository. */
  readonly file: string;
  /** The 1-based line of the `@example` tag. */
  readonly line: number;
  /** The example's code, as written. */
  readonly code: string;
}

/** Every `@example` in `packages/<folder>/src/**` (sorted by file, then line). */
export function examples(root: string, folder: string): Example[] {
  const src = join(root, "packages", folder, "src");
  const files = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name))
    .sort();
  return files.flatMap((path) =>
    inFile(readFileSync(path, "utf8")).map((e) => ({ folder, file: relative(root, path), ...e })),
  );
}

/** The examples of one source text: their tag's line and code. */
export function inFile(text: string): { line: number; code: string }[] {
  const out: { line: number; code: string }[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\/\*\*/.test(lines[i] ?? "")) continue;
    // The comment's lines, without the leading "*" (one space after it is part of the margin).
    const body: { n: number; text: string }[] = [];
    for (let j = i; j < lines.length; j++) {
      const raw = lines[j] ?? "";
      const end = raw.includes("*/");
      const text = raw
        .replace(/^\s*\/\*\*\s?/, "")
        .replace(/\*\/.*$/, "")
        .replace(/^\s*\* ?/, "");
      body.push({ n: j + 1, text: end ? text.trimEnd() : text });
      if (end) {
        i = j;
        break;
      }
    }
    for (let k = 0; k < body.length; k++) {
      const tag = /^\s*@example\b ?(.*)$/.exec(body[k]?.text ?? "");
      if (tag === null) continue;
      const code: string[] = tag[1]?.trim() ? [tag[1]] : [];
      let m = k + 1;
      for (; m < body.length && !/^\s*@\w+/.test(body[m]?.text ?? ""); m++) code.push(body[m]?.text ?? "");
      let block = code.join("\n").trim();
      const fenced = /```(?:ts|typescript|js)?\n([\s\S]*?)```/.exec(block);
      if (fenced !== null) block = (fenced[1] ?? "").trim();
      if (block !== "") out.push({ line: body[k]?.n ?? 0, code: block });
      k = m - 1;
    }
  }
  return out;
}

const literal = String.raw`(?:-?(?:\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?|Infinity)|NaN|true|false|null|undefined|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\[[^\]]*\]|\{[^}]*\})`;
const assertion = new RegExp(String.raw`^(\s*)(.+?);?\s*//\s*(${literal})(?:\s*$|\s+—|:\s|\s+\()`);
const declaration =
  /^\s*(?:const|let|var|if|for|while|do|switch|return|throw|try|catch|finally|function|class|import|export|type|interface|else|case|default)\b|^\s*[{}]/;

/** The lines of `code` that assert, as [line index, expression, expected literal]. */
export function assertions(code: string): [number, string, string][] {
  const out: [number, string, string][] = [];
  code.split("\n").forEach((text, index) => {
    if (declaration.test(text)) return;
    const m = assertion.exec(text);
    if (m !== null && m[2] !== undefined && m[3] !== undefined) out.push([index, m[2].trim(), m[3]]);
  });
  return out;
}

/** Whether the example is itself test code. */
export const isTest = (code: string) => /from\s+["']vitest["']/.test(code);

/**
 * The module that runs an example: the imports it needs from its own package added, each
 * asserting line turned into a check that names the line.
 *
 * @param exported - the names each of the package's entry points exports, by specifier
 */
export function module(example: Example, exported: ReadonlyMap<string, readonly string[]>): string {
  const lines = example.code.split("\n");
  for (const [index, expression, expected] of assertions(example.code)) {
    const indent = /^\s*/.exec(lines[index] ?? "")?.[0] ?? "";
    const where = JSON.stringify(`${example.file}:${example.line + 1 + index}: ${expression}`);
    lines[index] = `${indent}__check(${expression}, ${expected}, ${where});`;
  }
  const code = lines.join("\n");
  const imported = new Set(
    [...code.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}/g)].flatMap((m) =>
      (m[1] ?? "").split(",").map(
        (s) =>
          s
            .trim()
            .split(/\s+as\s+/)
            .pop() ?? "",
      ),
    ),
  );
  const declared = new Set(
    [...code.matchAll(/\b(?:const|let|var|function|class)\s+([A-Za-z_$][\w$]*)/g)].map((m) => m[1]),
  );
  const used = (name: string) => new RegExp(String.raw`(?<![\w$.])${name.replace(/\$/g, "\\$")}(?![\w$])`).test(code);
  const taken = new Set<string>();
  const header: string[] = [];
  for (const [specifier, names] of exported) {
    const wanted = names.filter((n) => !taken.has(n) && !imported.has(n) && !declared.has(n) && used(n));
    wanted.forEach((n) => taken.add(n));
    if (wanted.length > 0) header.push(`import { ${wanted.join(", ")} } from ${JSON.stringify(specifier)};`);
  }
  const checks = assertions(example.code).length > 0;
  if (checks) {
    header.push(`import { expect as __expect } from "vitest";`);
    header.push(
      `const __check = (actual: unknown, expected: unknown, where: string) => __expect(actual, where).toEqual(expected);`,
    );
  }
  return `// ${example.file}:${example.line}\n${header.join("\n")}\n${code}\nexport {};\n`;
}
