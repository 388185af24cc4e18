// What Redis runs a call, counted: redis-server under valgrind's callgrind, the instructions it
// runs for 1 000 pipelined calls of each case (a charge set, a reserve of that set, a settle, and
// the floors below), its instrumentation on only while they run, three rounds in one server. The
// count is deterministic to about ±2 % whatever the machine's load, where a wall-clock ratio on
// this shared machine is not: so a change to a script is weighed here, on Redis's side alone.
//
// The set is the bench's (bench/src/redis.bench.ts): a user, its tenant and its model, on a
// keyspace of 1 000 users charged once before. Each reserve writes its record (a new key with its
// expiry); its time to live is long enough that none expires while counted. The floors: a script
// that only reads its arguments, and one that also writes a string of the record's size with PX
// under a new key: what writing a record costs Redis at least, measured alone.
//
// Run: pnpm bench callgrind (valgrind must be installed; `CALLGRIND_KEEP=1` keeps the dumps for
// callgrind_annotate, and prints where they are).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Redis from "ioredis";
import { QuotaKey, limitSpec } from "@tideward/quota-engine";
import { RedisQuotaEngine, ioredisClient } from "@tideward/redis";
import { findRedisServer, freePort, serverArgs } from "@tideward/redis/testing";

const CALLS = 1_000;
const ROUNDS = Number(process.env.CALLGRIND_ROUNDS ?? 3);
const RATE = 100;

const binary = findRedisServer();
if (binary === undefined) throw new Error("redis-server is not installed");
if (spawnSync("valgrind", ["--version"]).status !== 0) throw new Error("valgrind is not installed");

const dir = mkdtempSync(join(tmpdir(), "tideward-callgrind-"));
const port = await freePort();
const server = spawn(
  "valgrind",
  [
    "--tool=callgrind",
    "--instr-atstart=no",
    `--callgrind-out-file=${join(dir, "cg.out")}`,
    binary,
    ...serverArgs(port, dir),
  ],
  { stdio: "ignore" },
);
const pid = server.pid;
if (pid === undefined) throw new Error("valgrind did not start");
const stop = () => {
  server.kill("SIGTERM");
  if (process.env.CALLGRIND_KEEP === undefined) rmSync(dir, { recursive: true, force: true });
  else console.log(`dumps kept in ${dir}`);
};
process.once("exit", stop);

const redis = new Redis({
  host: "127.0.0.1",
  port,
  lazyConnect: true,
  maxRetriesPerRequest: 0,
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
});
redis.on("error", () => undefined);
for (let tries = 0; ; tries++) {
  try {
    await redis.connect();
    if ((await redis.ping()) === "PONG") break;
  } catch (error) {
    if (tries > 300) throw error;
    redis.disconnect();
    await new Promise((r) => setTimeout(r, 100));
  }
}

const control = (...args: string[]) => {
  const run = spawnSync("callgrind_control", [...args, String(pid)], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`callgrind_control ${args.join(" ")}: ${run.stderr}`);
};
let dumps = 0;
/** The instructions Redis runs in `fn`'s calls, a call. */
async function count(name: string, fn: (i: number) => Promise<unknown>): Promise<number> {
  control("-i", "on");
  control("-z");
  await Promise.all(Array.from({ length: CALLS }, (_, i) => fn(i)));
  control("-d", name.replace(/\W+/g, "_"));
  control("-i", "off");
  dumps++;
  const files = readdirSync(dir).filter((f) => f.startsWith("cg.out."));
  const last = files.find((f) => f.endsWith(`.${dumps}`));
  if (last === undefined) throw new Error(`no dump ${dumps} in ${dir}: ${files.join(", ")}`);
  const text = readFileSync(join(dir, last), "utf8");
  const total = /^(?:summary|totals): (\d+)/m.exec(text)?.[1];
  if (total === undefined) throw new Error(`no total in ${last}`);
  return Number(total) / CALLS;
}

const engine = new RedisQuotaEngine(ioredisClient(redis), { prefix: "cg:", reservationTtl: 600_000, timeout: 600_000 });
await engine.addLimit(limitSpec({ name: "r", capacity: RATE, refill: RATE, window: 1_000 }));
await engine.addLimit(limitSpec({ name: "tenant", capacity: 1_000_000, refill: 1_000_000, window: 1_000 }));
await engine.addLimit(limitSpec({ name: "model", capacity: 1_000_000, refill: 1_000_000, window: 1_000 }));
const set = (i: number) => [
  { key: new QuotaKey(`t${i % 100}`, `u${i}`, "r"), limit: "r", cost: 1 },
  { key: new QuotaKey(`t${i % 100}`, "*", "r"), limit: "tenant", cost: 800 },
  { key: new QuotaKey(`t${i % 100}`, "*", "gpt"), limit: "model", cost: 800 },
];

// The floors, each sent as the engine sends a reserve: the set's three keys and the record's, and
// its arguments (now, mode, ttl, margin, three a charge).
const ARGS = ["", "v", "600000", "1000", "1", "101", "0.1", "800", "1000001", "1000", "800", "1000001", "1000"];
const READ = await redis.script(
  "LOAD",
  "-- floor: read\nlocal n = 0\nfor i = 1, #ARGV do n = n + #ARGV[i] end\nreturn n",
);
const WRITE = await redis.script(
  "LOAD",
  "-- floor: write\nlocal n = 0\nfor i = 1, #ARGV do n = n + #ARGV[i] end\nredis.call('SET', KEYS[4], ARGV[#ARGV], 'PX', 600000)\nreturn n",
);
const record = "o" + "x".repeat(8 + 16 + 16 * 3); // a record of three charges: 73 bytes
const floorKeys = (i: number, tag: string) => [
  `{t${i % 100}}a`,
  `{t${i % 100}}b`,
  `{t${i % 100}}c`,
  `{t${i % 100}}:${tag}:${i}`,
];

// Warm: every key the cases touch exists, the scripts are loaded, the engine's code is compiled.
let now = Date.now();
await Promise.all(Array.from({ length: CALLS }, (_, i) => engine.checkAtomic(set(i), now)));
const reserved: string[] = [];
await Promise.all(Array.from({ length: 50 }, (_, i) => engine.reserve(set(i), now)));

const results = new Map<string, number[]>();
const note = (name: string, n: number) => {
  if (!results.has(name)) results.set(name, []);
  results.get(name)?.push(n);
};
for (let r = 0; r < ROUNDS; r++) {
  now = Date.now();
  note("charge set (checkAtomic)", await count(`set${r}`, (i) => engine.checkAtomic(set(i), now)));
  let committed = 0;
  note(
    "reserve of that set",
    await count(`reserve${r}`, async (i) => {
      const got = await engine.reserve(set(i), now);
      if (got.committed) {
        committed++;
        reserved[i] = got.id;
      }
    }),
  );
  if (committed !== CALLS) throw new Error(`round ${r}: ${committed} of ${CALLS} reserves committed`);
  note(
    "settle of that reserve",
    await count(`settle${r}`, (i) => engine.settle(reserved[i] ?? "", { tenant: 300, model: 300 }, now)),
  );
  note(
    "floor: a script reading the reserve's arguments",
    await count(`read${r}`, (i) =>
      redis.evalsha(READ as string, 4, ...floorKeys(i, `r${r}`), String(now), ...ARGS.slice(1)),
    ),
  );
  note(
    "floor: that, and SET PX of a 73-byte record",
    await count(`write${r}`, (i) =>
      redis.evalsha(WRITE as string, 4, ...floorKeys(i, `w${r}`), String(now), ...ARGS.slice(1, -1), record),
    ),
  );
}

const range = (xs: readonly number[]) => {
  const k = (x: number) => (x / 1_000).toFixed(1);
  return `${k(Math.min(...xs))}–${k(Math.max(...xs))} k`;
};
console.log(`\nInstructions redis-server runs a call (callgrind, ${CALLS} pipelined calls, ${ROUNDS} rounds):`);
for (const [name, xs] of results) console.log(`  ${name.padEnd(50)} ${range(xs).padStart(16)}`);
const over = (a: string, b: string) => {
  const xs = results.get(a) ?? [];
  const ys = results.get(b) ?? [];
  const ratios = xs.map((x, i) => x / (ys[i] ?? NaN));
  return `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`;
};
console.log(`  → reserve ${over("reserve of that set", "charge set (checkAtomic)")} a charge set's (target ≤ 1.2)`);
const set0 = results.get("charge set (checkAtomic)") ?? [];
const write = (results.get("floor: that, and SET PX of a 73-byte record") ?? []).map(
  (w, i) => w - (results.get("floor: a script reading the reserve's arguments")?.[i] ?? NaN),
);
console.log(
  `  → the record's write alone ${range(write)} a call: a charge set and it, ${set0
    .map((s, i) => (s + (write[i] ?? NaN)) / s)
    .map((x) => x.toFixed(2))
    .join(", ")}× a charge set's`,
);
redis.disconnect();
process.exit(0);
