// The README's table of instruments is the package's own list: every instrument, in order, with
// its kind and unit, and the Prometheus name the exporter gives it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { INSTRUMENTS, METRICS } from "../src/index";

const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");
const table = /<!-- instruments -->\n([\s\S]*?)<!-- \/instruments -->/.exec(readme)?.[1] ?? "";
const rows = table
  .trim()
  .split("\n")
  .slice(2)
  .map((line) =>
    line.split(" | ").map((cell) => cell.replace(/^\| /, "").replace(/ \|$/, "").replaceAll("`", "").trim()),
  );

describe("the README's table of instruments", () => {
  it("lists every instrument, in order, with its kind and unit", () => {
    expect(rows.map(([name, , kind, unit]) => ({ name, kind, unit }))).toEqual(
      INSTRUMENTS.map(({ name, kind, unit }) => ({ name, kind, unit })),
    );
    expect(new Set(INSTRUMENTS.map((i) => i.name))).toEqual(new Set(Object.values(METRICS)));
  });

  it("gives each the name the Prometheus exporter serves", () => {
    for (const [name, prometheus, kind] of rows)
      expect(prometheus).toBe(`${(name ?? "").replaceAll(".", "_")}${kind === "counter" ? "_total" : ""}`);
  });

  it("names every attribute an instrument carries in the attributes table", () => {
    const attributes = new Set(rows.flatMap((r) => (r[4] ?? "").split(", ").filter((a) => !a.startsWith("as "))));
    for (const a of attributes) expect(readme).toContain(`| \`${a}\``);
  });
});
