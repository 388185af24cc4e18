// The linker that builds the scripts from parts (scripts/link-lua.mjs) writes each call of a part
// out in place. Written out, a part must answer what calling it answers: the parts are plain Lua
// functions too, so a script that calls them is run both ways, on Redis, over random arguments at
// clocks near 0 and near Date.now(), and the replies compared. Its rules are checked as well: a
// part's names never catch the caller's, and what it cannot write out stops the build by name.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, copyFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { linkScripts, shareParts, squeeze } from "../scripts/link-lua.mjs";
import { useRedis, withRedis } from "./server";

const parts = join(import.meta.dirname, "..", "src", "lua", "parts");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A directory of the real parts (or `own` in their place) and `scripts` (file name → text). */
function tree(scripts: Record<string, string>, own?: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "tideward-link-"));
  dirs.push(dir);
  mkdirSync(join(dir, "parts"));
  if (own === undefined) for (const f of readdirSync(parts)) copyFileSync(join(parts, f), join(dir, "parts", f));
  else for (const [f, text] of Object.entries(own)) writeFileSync(join(dir, "parts", f), text);
  for (const [f, text] of Object.entries(scripts)) writeFileSync(join(dir, f), text);
  return dir;
}

const built = (dir: string, name: string): string => {
  const script = linkScripts(dir).find((s) => s.name === name);
  if (script === undefined) throw new Error(`no script ${name}`);
  return script.source;
};

// The parts as functions, each after the parts it calls, then the script: what the written-out
// script must equal.
const called = (script: string): string =>
  ["prelude", "bucket", "gcra", "window", "state"]
    .map((f) => readFileSync(join(parts, `${f}.lua`), "utf8"))
    .join("\n") +
  "\n" +
  script;

// Every step of the quota engine's state on the arguments: a limit's two numbers, a state, a
// clock, a cost and a margin; each number answered as the shortest text of its double.
const PROBE = `-- probe
local p1, p2 = ARGV[1] + 0, ARGV[2] + 0
local a, b, t, cost, margin = ARGV[3] + 0, ARGV[4] + 0, ARGV[5] + 0, ARGV[6] + 0, ARGV[7] + 0
local kind = kindOf(p1, p2)
local fits, na, nb, f = step(a, b, t, cost, kind, p1, p2)
local fa, fb = fresh(t, kind, p1)
local old = expires(a, b, kind, p1, p2, margin)
local ms = 0
local value = ''
if fits then
  ms = px(f, old, margin, t)
  value = encode(na, nb, kind)
end
local function show(x) return string.format('%.17g', x) end
return { kind, tostring(fits), show(na or 0), show(nb or 0), show(f), show(fa), show(fb), show(old), show(ms), value }
`;

withRedis("the scripts' parts, written out at each call", () => {
  const redis = useRedis();

  for (const origin of [0, 1.7e12 + 0.5]) {
    it(`answer what calling them answers, for every kind of limit and random states (origin ${origin})`, async () => {
      const direct = await redis.raw();
      const out = built(tree({ "probe.lua": PROBE }), "probe");
      // Written out: no part is called by name in what Redis runs.
      expect(out).not.toMatch(/\b(kindOf|step|fresh|expires|px|encode|bucket|gcra|window|opens|reach)\(/);
      const limit = fc.oneof(
        fc.tuple(fc.integer({ min: 1, max: 1_000 }), fc.double({ min: 1e-3, max: 1e3, noNaN: true })), // bucket
        fc.tuple(
          fc.integer({ min: 1, max: 1_000 }).map((c) => c + 0.5),
          fc.integer({ min: 1, max: 1e5 }).map((x) => x / 128),
        ), // one number
        fc.tuple(
          fc.integer({ min: 1, max: 1_000 }),
          fc.double({ min: 1e-2, max: 1e4, noNaN: true }).map((x) => -x),
        ), // GCRA
        fc.tuple(
          fc.integer({ min: -1_000, max: -1 }),
          fc.double({ min: 1, max: 1e6, noNaN: true }).map((x) => (x > 5e5 ? -x : x)),
        ), // window
      );
      await fc.assert(
        fc.asyncProperty(
          limit,
          fc.double({ min: 0, max: 2_000, noNaN: true }),
          fc.double({ min: -1e6, max: 1e6, noNaN: true }),
          fc.double({ min: 0, max: 1e6, noNaN: true }),
          fc.double({ min: 0, max: 50, noNaN: true }),
          fc.constantFrom(0, 1, 250, 1_000),
          async ([p1, p2], a, at, dt, cost, margin) => {
            const args = [p1, p2, a, origin + at, origin + at + dt, cost, margin].map(String);
            const inline = await direct.eval(out, 0, ...args);
            const plain = await direct.eval(called(PROBE), 0, ...args);
            expect(inline).toEqual(plain);
          },
        ),
        { numRuns: 300 },
      );
    });
  }

  it("a part's names never catch the caller's: its locals and parameters are renamed apart", async () => {
    const direct = await redis.raw();
    const script =
      "-- s\nlocal level, x, y = 1, 10, 7\nlocal z = twice(level)\nx = twice(x)\nreturn { level, x, y, z }\n";
    const out = built(tree({ "s.lua": script }, { "p.lua": part }), "s");
    expect(await direct.eval(out, 0)).toEqual([1, 20, 7, 2]);
    expect(await direct.eval(part + script, 0)).toEqual([1, 20, 7, 2]);
  });
});

const part = `local function twice(x)
  local z = 0
  local level = x * 2
  return level + z
end
`;

describe("the linker's rules", () => {
  it("stops the build, naming the line, at a call that is not a statement of its own", () => {
    expect(() => linkScripts(tree({ "s.lua": "-- s\nreturn twice(3) + 1\n" }, { "p.lua": part }))).toThrow(
      /s\.lua: "return twice\(3\) \+ 1": a part's call must be a statement of its own line/,
    );
  });

  it("stops the build at a part that returns before its last line", () => {
    const early = "local function f(x)\n  if x then return 1 end\n  return 2\nend\n";
    expect(() => linkScripts(tree({ "s.lua": "-- s\nlocal y = f(1)\nreturn y\n" }, { "p.lua": early }))).toThrow(
      /f may return only on its last line/,
    );
  });

  it("stops the build at a script that declares a part's name, and at a call that declares what it passes", () => {
    expect(() => linkScripts(tree({ "s.lua": "-- s\nlocal twice = 1\nreturn twice\n" }, { "p.lua": part }))).toThrow(
      /declares twice, the name of a part/,
    );
    expect(() =>
      linkScripts(tree({ "s.lua": "-- s\nlocal x = 1\nlocal x = twice(x)\nreturn x\n" }, { "p.lua": part })),
    ).toThrow(/an argument names what the call declares/);
  });
});

withRedis("the module holds each part once", () => {
  const redis = useRedis();
  // A part long enough that holding it once saves more than a call of it costs.
  const note = "a note long enough to be worth holding once rather than at each place it is written out";
  const told = `local function told(x)
  local level = x + 1
  local note = '${note}'
  return level .. #note
end
`;

  it("a part written out at several calls, its locals renamed apart at one, is one text; each script joins to what Redis runs", async () => {
    const dir = tree(
      {
        "s.lua": "-- s\nlocal level = 1\nlocal a = told(level)\nlocal b = told(5)\nreturn { level, a, b }\n",
        "t.lua": "-- t\nlocal x = told(2)\nreturn x\n",
      },
      { "p.lua": told },
    );
    const scripts = linkScripts(dir);
    const { templates, scripts: shared } = shareParts(scripts);
    expect(templates.map((t) => t.part)).toEqual(["told"]);
    const calls = shared.flatMap((s) => s.chunks.filter((c) => typeof c !== "string"));
    expect(calls.length).toBe(3);
    // At the call from `level`, the part's own `level` is renamed apart: one text, other names.
    expect(new Set(calls.map((c) => c.args.join())).size).toBeGreaterThan(1);
    for (const [i, s] of shared.entries()) {
      const text = s.chunks.map((c) => (typeof c === "string" ? c : c.template.fill(c.args))).join("");
      expect(text).toBe(scripts[i]?.source);
      expect(text.match(/a note long enough/g)?.length).toBe(s.name === "s" ? 2 : 1);
    }
    const direct = await redis.raw();
    expect(await direct.eval(scripts[0]?.source ?? "", 0)).toEqual([1, `2${note.length}`, `6${note.length}`]);
    expect(await direct.eval(scripts[1]?.source ?? "", 0)).toBe(`3${note.length}`);
  });

  it("squeezes a line alike whatever its names: a space before `..` only after a number", () => {
    expect(squeeze("x = v_1 .. 'a'")).toBe("x=v_1..'a'");
    expect(squeeze("x = v .. 'a'")).toBe("x=v..'a'");
    // A number's digits and a dot would read as one number (`1..` is malformed); a name ends at a dot.
    expect(squeeze("x = 1 .. 'a' .. 2.5 .. 'b' .. v2 .. 'c'")).toBe("x=1 ..'a'.. 2.5 ..'b'..v2..'c'");
    expect(squeeze("x = 'a' .. 1 .. 'b'")).toBe("x='a'.. 1 ..'b'");
  });
});
