// The core must run in a browser: walk the import graph from the package's main entry and check
// that nothing on it is a Node.js built-in or a Node-only subpath (only the CLI may use them).
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const src = join(import.meta.dirname, "..", "src");

function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]);
}

function graph(entry: string): { files: string[]; external: string[] } {
  const seen = new Set<string>();
  const external = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of imports(file)) {
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec.endsWith(".ts") ? spec : `${spec}.ts`));
      else external.add(spec);
    }
  };
  visit(entry);
  return { files: [...seen], external: [...external] };
}

describe("browser safety", () => {
  const { files, external } = graph(join(src, "index.ts"));

  it("the main entry reaches no Node.js built-in, and only tideward's own browser-safe packages", () => {
    expect(files.length).toBeGreaterThan(20);
    expect(files.some((f) => f.includes(`${join("src", "cli")}`))).toBe(false);
    expect(external.filter((s) => s.startsWith("node:") || !s.startsWith("@tideward/"))).toEqual([]);
    // No subpath but @tideward/time/internal, which is the argument checks, and
    // @tideward/guard/internal, the guard's stages the policies run: both browser-safe (the
    // guard's Node.js code is under @tideward/guard/node).
    const safe = new Set(["@tideward/time/internal", "@tideward/guard/internal"]);
    expect(external.filter((s) => s.split("/").length > 2 && !safe.has(s))).toEqual([]);
  });

  it("no file it reaches touches process, Buffer, require or the wall clock", () => {
    for (const f of files) {
      const code = readFileSync(f, "utf8")
        .replace(/\/\/.*$/gm, "")
        .replace(/\/\*[\s\S]*?\*\//g, "");
      expect([
        f,
        /\bprocess\.|\bBuffer\b|\brequire\(|Date\.now\(|Math\.random\(|performance\.now\(/.exec(code)?.[0],
      ]).toEqual([f, undefined]);
    }
  });

  it("the CLI subpath is where the Node.js imports are", () => {
    expect(graph(join(src, "cli", "index.ts")).external).toContain("node:fs/promises");
  });
});
