import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { QuotaKey, perSecond } from "@tideward/quota-engine";
import { RedisQuotaEngine, scripts } from "@tideward/redis";
import type { LuaScript } from "@tideward/redis";
import { linkScripts, readParts, squeeze } from "../scripts/link-lua.mjs";
import { stripLua } from "../scripts/strip-lua.mjs";
import { useRedis, withRedis, patient } from "./server";

const dir = join(import.meta.dirname, "..", "src", "lua");
const embedded = Object.values(scripts).filter((s): s is LuaScript => typeof s === "object");

describe("scripts live in their own files", () => {
  it("every .lua file is embedded as the linker builds it from the file and its parts, with the SHA1 of that text", () => {
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".lua"))
      .sort();
    expect(embedded.map((s) => `${s.name}.lua`).sort()).toEqual(files);
    const built = linkScripts(dir);
    for (const s of embedded) {
      const text = built.find((b) => b.name === s.name)?.source;
      expect(s.source).toBe(text); // run `pnpm embed` after editing a script or a part
      expect(s.sha).toBe(
        createHash("sha1")
          .update(text ?? "")
          .digest("hex"),
      );
    }
  });

  it("ships a script's first line and every line of its code, in order, unindented, and no line that is only a comment", () => {
    const file = "-- name\n-- why\nlocal a = '--not a comment'\n\n  -- indented\nif a then\n  return a -- kept\nend\n";
    expect(stripLua(file)).toBe("-- name\nlocal a = '--not a comment'\nif a then\nreturn a -- kept\nend\n");
    const parts = readdirSync(join(dir, "parts")).map((f) => join("parts", f));
    for (const file of [...embedded.map((s) => `${s.name}.lua`), ...parts]) {
      // No file holds a string spanning lines, whose indentation would be part of its text.
      expect(readFileSync(join(dir, file), "utf8")).not.toMatch(/\[=*\[|\\$/m);
    }
    const calls = new RegExp(
      `\\b(${[...readParts(dir).values()]
        .filter((p) => p.fn)
        .map((p) => p.name)
        .join("|")})\\(`,
    );
    for (const s of embedded) {
      const lines = s.source.split("\n");
      expect(lines[0]).toBe(readFileSync(join(dir, `${s.name}.lua`), "utf8").split("\n")[0]);
      expect(lines.at(-1)).toBe("");
      expect(lines.slice(1, -1).filter((l) => /^\s/.test(l) || l.startsWith("--") || l === "")).toEqual([]);
      // The script's own code, every line in order (without the spaces its tokens do not need), but
      // for its calls of parts, written out.
      const own = stripLua(readFileSync(join(dir, `${s.name}.lua`), "utf8"))
        .split("\n")
        .slice(1, -1)
        .map(squeeze);
      let at = 1;
      for (const line of own.filter((l) => !calls.test(l))) {
        const found = lines.indexOf(line, at);
        expect([s.name, line, found >= at]).toEqual([s.name, line, true]);
        at = found + 1;
      }
      expect(s.source).not.toMatch(calls);
    }
  });

  it("the module holds the refusal of a foreign key once, though Redis runs it wherever a key is read", () => {
    const module = readFileSync(join(dir, "..", "scripts.ts"), "utf8");
    const format = "string.format('%02x',c:byte())";
    const runs = embedded.reduce((n, s) => n + s.source.split(format).length - 1, 0);
    expect(runs).toBeGreaterThan(embedded.length);
    expect(module.split(format).length - 1).toBe(1);
  });

  it("no script builds a key name: every redis.call names a key from KEYS", () => {
    for (const s of embedded) {
      // A part's parameter that names a key (key, key_7) is bound, where the part is written out,
      // to a key of KEYS, to rid, or to such a parameter of the part calling it.
      for (const m of s.source.matchAll(/^local (key(?:_\d+)?)(?:,[\w,]+)?=(.+)$/gm))
        expect([s.name, m[1], /^(KEYS\[.+?\]+|rid|key(_\d+)?)(,|$)/.test(m[2] ?? "")]).toEqual([s.name, m[1], true]);
      for (const m of s.source.matchAll(/redis\.call\('(\w+)',([^,)]+)/g)) {
        if (m[1] === "TIME") continue;
        // A key from KEYS, a name given one (above and below), or the keys of KEYS themselves (an MGET).
        expect([s.name, m[1], /^(KEYS\[[^\]]+\]|rid|key(_\d+)?|_G\.unpack\(KEYS)$/.test(m[2] ?? "")]).toEqual([
          s.name,
          m[1],
          true,
        ]);
      }
      // ... and the two names that hold a key are only ever given one from KEYS.
      for (const m of s.source.matchAll(/^(?:local )?(rid|key)=(.+)$/gm))
        expect([s.name, m[2]?.startsWith("KEYS[") === true || m[2] === "nil"]).toEqual([s.name, true]);
    }
  });
});

withRedis("scripts on a real Redis", () => {
  const redis = useRedis();

  it("SCRIPT LOAD answers each pinned SHA", async () => {
    for (const s of embedded) expect(await redis.server().command("SCRIPT", "LOAD", s.source)).toBe(s.sha);
  });

  it("after SCRIPT FLUSH the next call falls back to EVAL and stays on the store path", async () => {
    const engine = new RedisQuotaEngine(await redis.ioredis(), { ...patient, prefix: "flush:" });
    await engine.addLimit(perSecond("r", 3));
    const alice = new QuotaKey("t", "alice", "api");
    expect((await engine.checkTokenBucket(alice, "r", 0)).path).toBe("store");
    expect(await redis.server().command("SCRIPT", "FLUSH")).toBe("OK");
    expect(await redis.server().command("SCRIPT", "EXISTS", scripts.quota.sha)).toBe("0");
    const d = await engine.checkTokenBucket(alice, "r", 0);
    expect([d.path, d.allowed, d.remaining]).toEqual(["store", true, 1]);
    // EVAL loaded it again, so EVALSHA works from here on.
    expect(await redis.server().command("SCRIPT", "EXISTS", scripts.quota.sha)).toBe("1");
  });
});
