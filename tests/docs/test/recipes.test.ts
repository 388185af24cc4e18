// Every ```ts redis block in a package README (a recipe that needs a Redis) runs here against a
// real redis-server started on a free loopback port and stopped by its own pid, REDIS_URL naming
// it. A block that logs prints what its comments promise, as for the READMEs' other blocks
// (apps/playground/test/readme-examples.test.ts): `console.log(x); // y` means x is y.
// Without redis-server the suite skips, saying how to install it; under CI it fails.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INSTALL_HINT, findRedisServer, startRedis } from "@tideward/redis/testing";
import type { RedisServer } from "@tideward/redis/testing";

const root = join(import.meta.dirname, "..", "..", "..");
const scratch = join(import.meta.dirname, "..", ".recipes");
rmSync(scratch, { recursive: true, force: true });
mkdirSync(scratch, { recursive: true });
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const recipes = readdirSync(join(root, "packages")).flatMap((name) => {
  let text: string;
  try {
    text = readFileSync(join(root, "packages", name, "README.md"), "utf8");
  } catch {
    return [];
  }
  return [...text.matchAll(/```ts redis\n([\s\S]*?)```/g)].map((m, i) => ({ name, i, code: m[1] ?? "" }));
});

const available = findRedisServer() !== undefined;
if (!available) {
  if (process.env.CI === "true") throw new Error(`CI=true and ${INSTALL_HINT} (.ci/apt-packages lists it)`);
  console.warn(`README recipes on Redis skipped: ${INSTALL_HINT}`);
}

let runs = 0;
/** Runs `code` as a module with REDIS_URL set to `url`; what it logged, each line as the READMEs' test renders it. */
async function run(code: string, url: string): Promise<string[]> {
  const file = join(scratch, `recipe-${runs++}.ts`);
  writeFileSync(file, code);
  const log: unknown[][] = [];
  const original = console.log;
  const before = process.env.REDIS_URL;
  console.log = (...args: unknown[]) => void log.push(args);
  process.env.REDIS_URL = url;
  try {
    await import(pathToFileURL(file).href);
  } finally {
    console.log = original;
    if (before === undefined) delete process.env.REDIS_URL;
    else process.env.REDIS_URL = before;
  }
  return log.map((args) => args.map((a) => (typeof a === "string" ? JSON.stringify(a) : String(a))).join(" "));
}

/** What the block's comments promise it logs. */
const promised = (code: string): string[] =>
  [...code.matchAll(/console\.log\((.*)\);\s*\/\/ (.+)$/gm)].map((m) => m[2]?.trim() ?? "");

describe("README recipes", () => {
  it("the breaker's README has its Redis recipe", () => {
    expect(recipes.map((r) => r.name)).toContain("breaker");
  });
});

(available ? describe : describe.skip)("README recipes against a real redis-server", () => {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await startRedis();
  }, 20_000);
  afterAll(async () => {
    await server?.stop();
  });
  const get = (): RedisServer => {
    if (server === undefined) throw new Error("the server has not started");
    return server;
  };

  it.each(recipes.map((r) => [`${r.name} #${r.i + 1}`, r] as const))(
    "%s runs on an empty Redis, then on a key holding what it cannot use, and starts cold each time",
    { timeout: 60_000 },
    async (_, recipe) => {
      const s = get();
      await s.command("FLUSHALL");
      expect(await run(recipe.code, s.url)).toEqual(promised(recipe.code));
      // What it left is a snapshot, of the kind that saved it, expiring.
      const keys = (await s.command("KEYS", "*")).split("\n").filter((k) => k !== "");
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        const stored = JSON.parse(await s.command("GET", key)) as { version?: unknown; kind?: unknown };
        expect(stored.version).toBe(1);
        expect(stored.kind).toBe(recipe.name);
        expect(Number(await s.command("PTTL", key))).toBeGreaterThan(0);
      }
      // Text that is not JSON, and JSON that is not its snapshot: refused, the instances start cold.
      for (const junk of ['{"version": 1, "kind"', JSON.stringify({ version: 1, kind: "shedder", clock: 0 })]) {
        for (const key of keys) await s.command("SET", key, junk);
        expect(await run(recipe.code, s.url)).toEqual(promised(recipe.code));
      }
    },
  );
});
