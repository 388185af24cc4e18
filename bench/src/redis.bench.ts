// @tideward/redis against a local redis-server this bench starts (no persistence), 64 calls in
// flight on one ioredis connection, rate-limiter-flexible 11.4.0 (rlf) on the same connection:
// - one limit at 10 000 and at 1 000 000 keys: tideward's checkTokenBucket with the adapter's
//   write coalescing and without it, rlf's consume, and the ceiling, a minimal token-bucket
//   EVALSHA through plain ioredis;
// - an atomic three-dimension charge (user, tenant, model: one round trip) against three rlf
//   consumes in Promise.all, beside its ceiling, a minimal three-key script (MGET, three SETs)
//   answering as many bytes;
// - a reserve of that set (its record written in the same call) against the set's checkAtomic,
//   and a reserve with its settle;
// - the batch path (100 decisions a call), leases;
// - Redis memory a key at 1 000 000 keys, by INFO used_memory over the key count and by MEMORY
//   USAGE: tideward's bucket of one number (an integer-encoded value) and of two numbers (two
//   doubles, a limit whose ms a token is off the 2^-7 ms grid), rlf keyed by the user alone and by
//   the same identity;
// - the unfavourable regimes: a slow Redis (every reply delayed 2 ms by a loopback proxy) and a
//   Redis that is down (the outage mode answering).
//
// Throughput is decisions per second over interleaved rounds (this machine is shared), every
// ratio the median over rounds of a case's rate against the first case's in the same round; beside
// each rate, the CPU one decision costs the client process and the Redis server (INFO cpu), which
// say which side sets the rate. Run: pnpm bench redis (REDIS_BENCH=one,three,reserve,batch,lease,slow,down,memory
// picks sections, all by default; REDIS_BENCH_ROUND sets a round's calls, 12 000 by default).
// REDIS_BENCH_BASELINE=<path to another build's packages/redis/src/index.ts> (an export of an earlier
// commit, its node_modules linked to this checkout's) adds that build's checkTokenBucket and
// checkAtomic beside this one's in the same rounds, under a prefix of its own, and prints this
// build's rate over that one's: how a change moved the rate, taken in one process.
//
// Where Redis's time goes in the atomic charge (valgrind callgrind: the instructions redis-server
// runs a call, over 1 000 pipelined EVALSHAs of the bench's arguments on a keyspace the same 1 000
// warmed; deterministic to ±0.5 %, whatever the machine's load; 2026-12-07): the bare three-key
// script below 73–76 k, tideward's 136–142 k (as on main before its scripts were built from parts:
// 131–136 k, 126–128 k without the EXISTS that checked absent keys, which SET … NX now replaces).
// Nine arguments more than the floor's cost about 10 k however the script reads them, the script's
// own work about 680 Lua instructions (the floor's 30). Redis's CPU a call (INFO cpu, 15 interleaved
// rounds of 20 000) is the old script's to within 2 % (0.99×). Tried and not kept: a charge's three
// numbers as one binary argument (24 bytes, one struct.unpack; 144 k), and the limits' numbers
// written into the script with a charge naming its limit by index (138 k): each answered no fewer
// instructions. The script's parts are written out at each call (scripts/link-lua.mjs): in Lua 5.1 a
// closure costs about 130 ns a call, as much as a token bucket's step. A set's numbers as one
// binary argument for the whole set (the client writing 2 + 3n doubles into a Buffer) was tried on
// 2026-12-02: inside the noise, for a change to ScriptClient's types. On two cores the client and
// Redis share the machine, and the atomic charge's rate follows Redis's CPU (the client's is lower).
import Redis from "ioredis";
import { RateLimiterRedis } from "rate-limiter-flexible";
import { QuotaKey, limitSpec } from "@tideward/quota-engine";
import { RedisQuotaEngine, ioredisClient } from "@tideward/redis";
import { startProxy, startRedis } from "@tideward/redis/testing";

const N = 1_000_000;
const INFLIGHT = 64;
const ROUND = Number(process.env.REDIS_BENCH_ROUND ?? 12_000);
const ROUNDS = 7;
const SECTIONS = new Set((process.env.REDIS_BENCH ?? "one,three,reserve,batch,lease,slow,down,memory").split(","));
const RATE = 100; // per second per key, capacity the same

const server = await startRedis({ args: ["--maxmemory-policy", "noeviction"] });
const connect = async (port = server.port): Promise<Redis> => {
  const r = new Redis({
    host: "127.0.0.1",
    port,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
  });
  r.on("error", () => undefined);
  await r.connect();
  return r;
};
const redis = await connect();

let seed = 12_345;
const MASK = (1 << 21) - 1;
const order = new Int32Array(MASK + 1);
for (let i = 0; i <= MASK; i++) {
  seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
  order[i] = seed % N;
}
const keys = new Array<QuotaKey>(N);
const names = new Array<string>(N);
for (let i = 0; i < N; i++) {
  keys[i] = new QuotaKey(`t${i % 1_000}`, `u${i}`, "r");
  names[i] = `u${i}`;
}
const tenants = Array.from({ length: 1_000 }, (_, i) => new QuotaKey(`t${i}`, "*", "r"));
const models = Array.from({ length: 1_000 }, (_, i) => new QuotaKey(`t${i}`, "*", "gpt"));

// The ceiling: the least a token bucket in Lua can do (no clamp, no expiry arithmetic, 14-digit
// floats), sent through plain ioredis as rate-limiter-flexible's calls are.
const MINIMAL = `local v = redis.call('HMGET', KEYS[1], 't', 'a')
local cap, rate, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tokens, at = cap, now
if v[1] then tokens, at = tonumber(v[1]), tonumber(v[2]) end
if now > at then tokens = math.min(cap, tokens + (now - at) * rate); at = now end
local ok = 0
if tokens >= 1 then tokens = tokens - 1; ok = 1 end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'a', tostring(at))
redis.call('PEXPIRE', KEYS[1], 2000)
return ok`;
const minimalSha = (await redis.script("LOAD", MINIMAL)) as string;
const perMs = String(RATE / 1_000);

async function serverCpu(): Promise<number> {
  const info = await redis.info("cpu");
  return (Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1])) * 1e6;
}

/** Runs `calls` of `fn` with INFLIGHT in flight; resolves with calls a second and µs of client and server CPU a call. */
async function throughput(
  fn: (i: number) => Promise<unknown>,
  calls: number,
  from: number,
): Promise<{ rate: number; client: number; server: number }> {
  let next = 0;
  const server0 = await serverCpu();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const worker = async (): Promise<void> => {
    while (next < calls) {
      const i = next++;
      await fn((from + i) & MASK);
    }
  };
  await Promise.all(Array.from({ length: INFLIGHT }, worker));
  const rate = calls / ((performance.now() - start) / 1_000);
  const used = process.cpuUsage(cpu);
  return { rate, client: (used.user + used.system) / calls, server: ((await serverCpu()) - server0) / calls };
}

interface Case {
  readonly name: string;
  readonly fn: (i: number) => Promise<unknown>;
  /** Decisions one call makes (a batch makes many). */
  readonly per?: number;
}

/**
 * Interleaved rounds; prints each case's decisions a second (its median round) and, for every
 * case after the first, the median over rounds of its rate divided by the first case's rate in
 * the same round: load on this shared machine comes in bursts, and a ratio taken within one round
 * sees the same load on both sides. Resolves with those median ratios (1 for the first case), and
 * `over(i, j)`, the median over rounds of case i's rate over case j's.
 */
interface Rounds {
  readonly ratios: readonly number[];
  readonly over: (i: number, j: number) => number;
}
async function rounds(title: string, cases: readonly Case[], round = ROUND): Promise<Rounds> {
  const rates: number[][] = cases.map(() => []);
  const clients: number[][] = cases.map(() => []);
  const servers: number[][] = cases.map(() => []);
  let from = 0;
  for (const c of cases) await throughput(c.fn, 2_000, (from += 2_000)); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    const turn = r % 2 === 0 ? cases.map((_, i) => i) : cases.map((_, i) => cases.length - 1 - i);
    for (const i of turn) {
      const c = cases[i];
      const per = c.per ?? 1;
      const calls = Math.max(200, Math.floor(round / per));
      const got = await throughput(c.fn, calls, (from += calls));
      rates[i]?.push(got.rate * per);
      clients[i]?.push(got.client / per);
      servers[i]?.push(got.server / per);
    }
  }
  const median = (xs: readonly number[]): number => {
    const sorted = [...xs].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  };
  const over = (i: number, j: number): number => median(rates[i].map((x, r) => x / rates[j][r]));
  const ratios = rates.map((_, i) => over(i, 0));
  console.log(`\n${title} — ${ROUNDS} interleaved rounds, ${INFLIGHT} in flight on one connection`);
  console.log(`  ${"".padEnd(58)} ${"decisions".padStart(11)}      CPU µs a decision: client / Redis`);
  for (const [i, c] of cases.entries()) {
    const ratio = i === 0 ? "" : `${ratios[i].toFixed(2)}× the first`;
    const cpu = `${median(clients[i]).toFixed(2).padStart(6)} / ${median(servers[i]).toFixed(2).padStart(5)}`;
    console.log(
      `  ${c.name.padEnd(58)} ${Math.round(median(rates[i])).toLocaleString("en").padStart(11)} /s   ${cpu}   ${ratio}`,
    );
  }
  return { ratios, over };
}

type Engine = Pick<RedisQuotaEngine, "addLimit" | "checkTokenBucket" | "checkAtomic">;
const limits = async <E extends Engine>(e: E): Promise<E> => {
  await e.addLimit(limitSpec({ name: "r", capacity: RATE, refill: RATE, window: 1_000 }));
  await e.addLimit(limitSpec({ name: "tenant", capacity: 1_000_000, refill: 1_000_000, window: 1_000 }));
  await e.addLimit(limitSpec({ name: "model", capacity: 1_000_000, refill: 1_000_000, window: 1_000 }));
  return e;
};
const engine = await limits(new RedisQuotaEngine(ioredisClient(redis), { prefix: "tw:" }));
// Another build's engine, side by side (REDIS_BENCH_BASELINE), under a prefix as long as "tw:".
const BASELINE = process.env.REDIS_BENCH_BASELINE;
const baseline: Engine | undefined =
  BASELINE === undefined
    ? undefined
    : await limits(
        new ((await import(BASELINE)) as { RedisQuotaEngine: new (c: unknown, p: object) => Engine }).RedisQuotaEngine(
          ioredisClient(redis),
          { prefix: "tb:" },
        ),
      );
const rlf = new RateLimiterRedis({ storeClient: redis, points: RATE, duration: 1, keyPrefix: "rlf" });
const rlfTenant = new RateLimiterRedis({ storeClient: redis, points: 1_000_000, duration: 1, keyPrefix: "rlft" });
const rlfModel = new RateLimiterRedis({ storeClient: redis, points: 1_000_000, duration: 1, keyPrefix: "rlfm" });
const consume = (limiter: RateLimiterRedis, key: string, cost = 1): Promise<unknown> =>
  limiter.consume(key, cost).catch((e: unknown) => e);

const plain = new RedisQuotaEngine(ioredisClient(redis, { coalesce: false }), { prefix: "tw:" });
await plain.addLimit(limitSpec({ name: "r", capacity: RATE, refill: RATE, window: 1_000 }));
const minimal = (k: number): Promise<unknown> =>
  redis.evalsha(minimalSha, 1, `m{${names[k]}}`, String(RATE), perMs, String(Date.now()));

// The least an atomic three-key charge can cost: one script reading the three keys (MGET) and
// writing them back with an expiry, answering 49 bytes as tideward's does, with no arithmetic.
const MINIMAL3 = `local v = redis.call('MGET', KEYS[1], KEYS[2], KEYS[3])
for c = 1, 3 do redis.call('SET', KEYS[c], ARGV[2], 'PX', 2000) end
return '1' .. ARGV[2] .. ARGV[2] .. ARGV[2]`;
const minimal3Sha = (await redis.script("LOAD", MINIMAL3)) as string;
const state16 = "0123456789abcdef";

if (SECTIONS.has("one")) {
  for (const count of [10_000, N]) {
    const at = (i: number): number => order[i] % count;
    const { ratios: one, over: oneOver } = await rounds(`One limit, a random key of ${count.toLocaleString("en")}`, [
      { name: "rate-limiter-flexible RateLimiterRedis.consume", fn: (i) => consume(rlf, names[at(i)]) },
      {
        name: "tideward checkTokenBucket, writes coalesced",
        fn: (i) => engine.checkTokenBucket(keys[at(i)], "r", Date.now()),
      },
      {
        name: "tideward checkTokenBucket, no coalescing",
        fn: (i) => plain.checkTokenBucket(keys[at(i)], "r", Date.now()),
      },
      { name: "ceiling: minimal token-bucket EVALSHA (plain ioredis)", fn: (i) => minimal(at(i)) },
      ...(baseline === undefined
        ? []
        : [
            {
              name: "baseline build: checkTokenBucket, writes coalesced",
              fn: (i: number) => baseline.checkTokenBucket(keys[at(i)], "r", Date.now()),
            },
          ]),
    ]);
    console.log(
      `  → tideward ${one[1].toFixed(2)}× rlf coalesced (target ≥ 1.2 at 1M keys), ${one[2].toFixed(2)}× without (target ≥ 1.0); the ceiling ${one[3].toFixed(2)}×`,
    );
    if (baseline !== undefined) console.log(`  → this build ${oneOver(1, 4).toFixed(3)}× the baseline build's rate`);
  }
}

if (SECTIONS.has("three")) {
  const set = (e: Engine, i: number): Promise<unknown> => {
    const k = order[i];
    const t = k % 1_000;
    return e.checkAtomic(
      [
        { key: keys[k], limit: "r", cost: 1 },
        { key: tenants[t], limit: "tenant", cost: 5 },
        { key: models[t], limit: "model", cost: 5 },
      ],
      Date.now(),
    );
  };
  const { ratios: three, over: threeOver } = await rounds(
    "An atomic three-dimension charge (user, tenant, model) a request, 1 000 000 users",
    [
      {
        name: "rate-limiter-flexible: three consumes (Promise.all)",
        fn: (i) => {
          const k = order[i];
          return Promise.all([
            consume(rlf, names[k]),
            consume(rlfTenant, `t${k % 1_000}`, 5),
            consume(rlfModel, `t${k % 1_000}`, 5),
          ]);
        },
      },
      { name: "tideward checkAtomic, one round trip", fn: (i) => set(engine, i) },
      {
        name: "ceiling: minimal three-key EVALSHA (MGET, 3 SET PX)",
        fn: (i) => {
          const k = order[i];
          const t = k % 1_000;
          return redis.callBuffer(
            "EVALSHA",
            minimal3Sha,
            3,
            // Names as long as tideward's, under a prefix of their own: its 16 bytes of state are
            // no bucket's, and tideward's later sections must not read them as one.
            `m3:{t${t}}B1:r${names[k].length}:${names[k]}r`,
            `m3:{t${t}}B6:tenant1:*r`,
            `m3:{t${t}}B5:model1:*gpt`,
            String(Date.now()),
            state16,
          );
        },
      },
      ...(baseline === undefined ? [] : [{ name: "baseline build: checkAtomic", fn: (i: number) => set(baseline, i) }]),
    ],
  );
  console.log(
    `  → tideward ${three[1].toFixed(2)}× three rlf consumes, and not atomic there: a refused third charge leaves the first two taken; the ceiling ${three[2].toFixed(2)}×`,
  );
  // Time a charge against the floor's: the floor's rate over tideward's, each round's, its median.
  console.log(`  → tideward's time a charge ${threeOver(2, 1).toFixed(3)}× the bare three-key script's (target ≤ 1.3)`);
  if (baseline !== undefined) console.log(`  → this build ${threeOver(1, 3).toFixed(3)}× the baseline build's rate`);
}

// Reserve against the charge set it makes: the same three-dimension set on one engine, a reserve
// its record written beside it in the same script call (expiring 2 s later, so tens of thousands
// are open at a time, as in a service whose calls take seconds), and a reserve then its settle
// (two round trips: the reservation's whole cost).
if (SECTIONS.has("reserve")) {
  // A patient timeout: on this shared machine a reply can take longer than the default 250 ms, and a
  // settle that gets none rejects (a charge set would answer from the outage mode instead).
  const reserving = new RedisQuotaEngine(ioredisClient(redis), {
    prefix: "rv:",
    reservationTtl: 2_000,
    timeout: 5_000,
  });
  await limits(reserving);
  const set = (i: number) => {
    const k = order[i];
    const t = k % 1_000;
    return [
      { key: keys[k], limit: "r", cost: 1 },
      { key: tenants[t], limit: "tenant", cost: 800 },
      { key: models[t], limit: "model", cost: 800 },
    ];
  };
  const { ratios } = await rounds("Reserve against the charge set it makes (user, tenant, model), 1 000 000 users", [
    { name: "tideward checkAtomic, one round trip", fn: (i) => reserving.checkAtomic(set(i), Date.now()) },
    { name: "tideward reserve, one round trip", fn: (i) => reserving.reserve(set(i), Date.now()) },
    {
      name: "tideward reserve, then settle (two round trips)",
      fn: async (i) => {
        const r = await reserving.reserve(set(i), Date.now());
        return r.committed ? reserving.settle(r.id, { tenant: 300, model: 300 }, Date.now()) : r;
      },
    },
  ]);
  console.log(
    `  → reserve ${(1 / ratios[1]).toFixed(2)}× a charge set's time (target ≤ 1.2); reserve then settle ${(1 / ratios[2]).toFixed(2)}×`,
  );
}

const ceiling: Case = { name: "ceiling: minimal token-bucket EVALSHA", fn: (i) => minimal(order[i]) };

if (SECTIONS.has("batch")) {
  const BATCH = 100;
  const { ratios: batch } = await rounds(
    `The batch path: ${BATCH} decisions a call (checkMany), against the per-call ceiling`,
    [
      ceiling,
      {
        name: `tideward checkMany, ${BATCH} random keys a call`,
        per: BATCH,
        fn: (i) => {
          const now = Date.now();
          const inputs = [];
          for (let j = 0; j < BATCH; j++) inputs.push({ key: keys[order[(i * BATCH + j) & MASK]], now });
          return engine.checkMany("r", inputs);
        },
      },
    ],
  );
  console.log(`  → batch decisions ${(batch[1] / batch[0]).toFixed(2)}× the per-call ceiling`);
}

// ── leases ────────────────────────────────────────────────────────────────────────────────────
if (SECTIONS.has("lease")) {
  const leaseEngine = new RedisQuotaEngine(ioredisClient(redis), { prefix: "lease:" });
  const rate = 5_000_000; // a second: a global quota a fleet shares
  const capacity = 50_000;
  await leaseEngine.addLimit(limitSpec({ name: "global", capacity, refill: rate, window: 1_000 }));
  const global = new QuotaKey("all", "*", "api");
  const instances = 4;
  const slice = 10_000;
  const leases = Array.from({ length: instances }, () => leaseEngine.lease(global, "global", { slice }));
  await Promise.all(leases.map((l) => l.fill(Date.now())));
  const started = performance.now();
  const t0 = Date.now();
  let decisions = 0;
  const admitted: number[] = [];
  const stamps: number[] = [];
  while (performance.now() - started < 2_000) {
    const now = Date.now();
    let ok = 0;
    for (let j = 0; j < 20_000; j++) if ((leases[j & 3] as { take(now: number): boolean }).take(now)) ok++;
    decisions += 20_000;
    admitted.push(ok);
    stamps.push(now - t0);
    await new Promise((r) => setImmediate(r)); // let the refills land
  }
  const seconds = (performance.now() - started) / 1_000;
  // Over any stretch of chunks [a, b]: admitted − (capacity + rate · span) must stay ≤ slice × instances.
  const prefix = [0];
  for (const a of admitted) prefix.push((prefix.at(-1) as number) + a);
  let worst = -Infinity;
  for (let a = 0; a < admitted.length; a++) {
    for (let b = a; b < admitted.length; b++) {
      const span = stamps[b] - stamps[a] + 1; // ms, whole readings of Date.now()
      const over = prefix[b + 1] - prefix[a] - (capacity + (rate * span) / 1_000);
      if (over > worst) worst = over;
    }
  }
  console.log(
    `\nLeases: ${instances} leases of ${slice.toLocaleString("en")} in one process over a global bucket of ${rate.toLocaleString("en")}/s`,
  );
  console.log(
    `  decisions ${Math.round(decisions / seconds).toLocaleString("en")} /s (target ≥ 1,000,000), admitted ${Math.round(prefix.at(-1)! / seconds).toLocaleString("en")} /s`,
  );
  console.log(
    `  worst over-admission over any stretch: ${Math.max(0, worst).toLocaleString("en")} tokens; stated bound slice × instances = ${(slice * instances).toLocaleString("en")}`,
  );
}

// ── the unfavourable regimes ──────────────────────────────────────────────────────────────────
if (SECTIONS.has("slow")) {
  const proxy = await startProxy(server.port);
  proxy.delay = 2;
  const slow = await connect(proxy.port);
  await slow.script("LOAD", MINIMAL);
  const slowEngine = new RedisQuotaEngine(ioredisClient(slow), { prefix: "tw:" });
  await slowEngine.addLimit(limitSpec({ name: "r", capacity: RATE, refill: RATE, window: 1_000 }));
  const slowRlf = new RateLimiterRedis({ storeClient: slow, points: RATE, duration: 1, keyPrefix: "rlf" });
  await rounds(
    `A slow Redis: every reply 2 ms late (a loopback proxy), same ${INFLIGHT} in flight`,
    [
      {
        name: "ceiling: minimal EVALSHA",
        fn: (i) => slow.evalsha(minimalSha, 1, `m{${names[order[i]]}}`, String(RATE), perMs, String(Date.now())),
      },
      { name: "tideward checkTokenBucket", fn: (i) => slowEngine.checkTokenBucket(keys[order[i]], "r", Date.now()) },
      { name: "rate-limiter-flexible consume", fn: (i) => consume(slowRlf, names[order[i]]) },
    ],
    3_000,
  );
  slow.disconnect();
  await proxy.stop();
}

if (SECTIONS.has("down")) {
  const down = new Redis({
    host: "127.0.0.1",
    port: 1,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    lazyConnect: true,
  });
  down.on("error", () => undefined);
  const outage = new RedisQuotaEngine(ioredisClient(down), { outage: "fallback", instances: 4 });
  await outage.addLimit(limitSpec({ name: "r", capacity: RATE, refill: RATE, window: 1_000 }));
  const downRlf = new RateLimiterRedis({
    storeClient: down,
    points: RATE,
    duration: 1,
    keyPrefix: "rlf",
    rejectIfRedisNotReady: true,
  });
  await rounds("Redis down: the outage mode answers (fallback to a local limiter at a quarter of the rate)", [
    {
      name: "tideward checkTokenBucket, path fallback",
      fn: (i) => outage.checkTokenBucket(keys[order[i]], "r", Date.now()),
    },
    { name: "rate-limiter-flexible consume, rejectIfRedisNotReady", fn: (i) => consume(downRlf, names[order[i]]) },
  ]);
}

// ── memory per key ────────────────────────────────────────────────────────────────────────────
async function used(): Promise<number> {
  const info = await redis.info("memory");
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}
async function perKey(
  name: string,
  fill: (from: number, to: number) => Promise<unknown>,
  sample: (i: number) => string,
): Promise<{ info: number; usage: number }> {
  await redis.flushall();
  await new Promise((r) => setTimeout(r, 200));
  const before = await used();
  const step = 5_000;
  const jobs: Promise<unknown>[] = [];
  for (let from = 0; from < N; from += step) {
    jobs.push(fill(from, Math.min(N, from + step)));
    if (jobs.length >= 10) await Promise.all(jobs.splice(0));
  }
  await Promise.all(jobs);
  const count = await redis.dbsize();
  const after = await used();
  let usage = 0;
  for (let i = 0; i < 200; i++) usage += Number(await redis.call("MEMORY", "USAGE", sample(i * 4_999)));
  const result = { info: (after - before) / count, usage: usage / 200 };
  const encoding = String(await redis.call("OBJECT", "ENCODING", sample(0)));
  console.log(
    `  ${name.padEnd(58)} ${result.info.toFixed(1).padStart(7)} B (INFO)   ${result.usage.toFixed(1).padStart(6)} B (MEMORY USAGE)   ${count.toLocaleString("en")} keys, ${encoding}`,
  );
  return result;
}
if (SECTIONS.has("memory")) {
  console.log(`\nRedis memory a key, ${N.toLocaleString("en")} keys each holding state (a charge of 1 of ${RATE})`);
  // Default names: prefix "tw:", the key's scope as its hash tag (so the scope is left out of the id).
  const memEngine = new RedisQuotaEngine(ioredisClient(redis), {
    prefix: "tw:",
    expiryMargin: 3_600_000,
    timeout: 30_000,
  });
  await memEngine.addLimit(limitSpec({ name: "r", capacity: RATE, refill: 1, window: 3_600_000 }));
  const fill =
    (engine: RedisQuotaEngine) =>
    (from: number, to: number): Promise<unknown> => {
      const now = Date.now();
      const inputs = [];
      for (let i = from; i < to; i++) inputs.push({ key: keys[i], now });
      return engine.checkMany("r", inputs);
    };
  const tw = await perKey("tideward bucket of one number (an integer), default names", fill(memEngine), (i) =>
    memEngine.redisKey(keys[i], "r"),
  );
  // A limit whose ms a token (3 600 000 / 7) is not a whole number of 2^-7 ms keeps two numbers:
  // tokens and the instant they were counted, a string of two doubles.
  await memEngine.addLimit(limitSpec({ name: "s", capacity: RATE, refill: 7, window: 3_600_000 }));
  const twoNumbers = await perKey(
    "tideward bucket of two numbers (two doubles), default names",
    (from, to) => {
      const now = Date.now();
      const inputs = [];
      for (let i = from; i < to; i++) inputs.push({ key: keys[i], now });
      return memEngine.checkMany("s", inputs);
    },
    (i) => memEngine.redisKey(keys[i], "s"),
  );
  const rlfLong = new RateLimiterRedis({ storeClient: redis, points: RATE, duration: 3_600, keyPrefix: "rlf" });
  const rl = await perKey(
    "rate-limiter-flexible, keyed by the user (rlf:u123456)",
    async (from, to) => {
      const jobs = [];
      for (let i = from; i < to; i++) jobs.push(consume(rlfLong, names[i]));
      return Promise.all(jobs);
    },
    (i) => `rlf:${names[i]}`,
  );
  const ids = (i: number): string => `t${i % 1_000}:${names[i]}:r`;
  const rlId = await perKey(
    "rate-limiter-flexible, keyed by the same identity (rlf:t456:u123456:r)",
    async (from, to) => {
      const jobs = [];
      for (let i = from; i < to; i++) jobs.push(consume(rlfLong, ids(i)));
      return Promise.all(jobs);
    },
    (i) => `rlf:${ids(i)}`,
  );
  console.log(
    `  → by INFO tideward ${(tw.info / rl.info).toFixed(2)}× rlf keyed by the user (target ≤ 1.25), ${(tw.info / rlId.info).toFixed(2)}× keyed by the same identity; a bucket of two numbers ${(twoNumbers.info / rl.info).toFixed(2)}× and ${(twoNumbers.info / rlId.info).toFixed(2)}×`,
  );
  console.log(
    `  → by MEMORY USAGE tideward ${tw.usage.toFixed(0)} B, two numbers ${twoNumbers.usage.toFixed(0)} B, rlf ${rl.usage.toFixed(0)} and ${rlId.usage.toFixed(0)} B; by MEMORY USAGE tideward ${(tw.usage / rl.usage).toFixed(2)}× and ${(tw.usage / rlId.usage).toFixed(2)}× rlf`,
  );
  console.log(
    `  (names: tideward "${memEngine.redisKey(keys[123_456], "r")}", rlf "rlf:u123456" and "rlf:${ids(123_456)}"; INFO includes the expiry entry and dict slots every key pays)`,
  );
}

redis.disconnect();
await server.stop();
