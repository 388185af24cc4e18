import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listing, pick } from "../examples/run";

describe("the example command", () => {
  it("lists every program with what it shows, the four introductions first", () => {
    const [head, ...rows] = listing();
    expect(head).toMatch(/pnpm example <name>/);
    expect(rows.slice(0, 4).map((r) => r.trim().split(/ +/)[0])).toEqual(["minimal", "limiters", "tour", "guide"]);
    for (const r of rows) expect(r.trim().split(/ {2,}/)).toHaveLength(2);
  });

  it("picks programs by exact name, all of them for 'all', and names the choices for a wrong one", () => {
    expect(pick(["tour"]).map((p) => p.name)).toEqual(["tour"]);
    expect(pick(["--", "all"]).map((p) => p.name)).toEqual(
      listing()
        .slice(1)
        .map((r) => r.trim().split(/ +/)[0]),
    );
    expect(() => pick(["tours"])).toThrow(/no example named "tours"; the examples are minimal, limiters, tour, guide/);
  });

  it("runs one program from the command line and prints its lines, nothing else", { timeout: 30_000 }, () => {
    const run = spawnSync(
      process.execPath,
      [
        "--conditions=@tideward/source",
        "--import",
        "tsx",
        join(import.meta.dirname, "..", "examples", "run.ts"),
        "limiters",
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const out = run.stdout.trimEnd().split("\n");
    expect(out[0]).toMatch(/^40 calls offered/);
    expect(out).toHaveLength(7);
  });
});
