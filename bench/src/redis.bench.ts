// @tideward/redis against a local redis-server this bench starts (no persistence), 50 calls in
// flight on one ioredis connection, over 1 000 000 keys:
// - the ceiling: a minimal token-bucket Lua script via EVALSHA (HMGET, refill, HSET, PEXPIRE);
// - rate-limiter-flexible 11.4.0's RateLimiterRedis.consume (its own Lua script);
// - tideward's one limit (checkTokenBucket), an atomic three-dimension charge (one round trip)
//   against three rlf consumes per request, the batch path (100 decisions a call), leases;
// - Redis memory per bucket key (INFO used_memory over 1 000 000 keys, and MEMORY USAGE);
// - the unfavourable regimes: a slow Redis (every reply delayed 2 ms by a loopback proxy) and a
//   Redis that is down (the outage mode answering).
//
// Throughput is decisions per second over interleaved rounds (this machine is shared), every
// ratio the median over rounds of a case's rate against the first case's in the same round; beside
// each rate, the CPU one decision costs the client process and the Redis server (INFO cpu), which
// say which side sets the rate. Run: pnpm bench redis
import Redis from "ioredis";
import { RateLimiterRedis } from "rate-limiter-flexible";
import { QuotaKey, limitSpec } from "@tideward/quota-engine";
import { RedisQuotaEngine, ioredisClient } from "@tideward/redis";
import { startProxy, startRedis } from "@tideward/redis/testing";

const N = 1_000_000;
const INFLIGHT = 50;
const ROUND = 15_000;
const ROUNDS = 11;
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
 * sees the same load on both sides. Resolves with those median ratios (1 for the first case).
 */
async function rounds(title: string, cases: readonly Case[], round = ROUND): Promise<number[]> {
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
  const first = rates[0];
  const ratios = rates.map((rs) => median(rs.map((x, r) => x / first[r])));
  console.log(`\n${title} — ${ROUNDS} interleaved rounds, ${INFLIGHT} in flight on one connection`);
  console.log(`  ${"".padEnd(58)} ${"decisions".padStart(11)}      CPU µs a decision: client / Redis`);
  for (const [i, c] of cases.entries()) {
    const ratio = i === 0 ? "" : `${ratios[i].toFixed(2)}× the first`;
    const cpu = `${median(clients[i]).toFixed(2).padStart(6)} / ${median(servers[i]).toFixed(2).padStart(5)}`;
    console.log(
      `  ${c.name.padEnd(58)} ${Math.round(median(rates[i])).toLocaleString("en").padStart(11)} /s   ${cpu}   ${ratio}`,
    );
  }
  return ratios;
}

const engine = new RedisQuotaEngine(ioredisClient(redis), { prefix: "tw:" });
await engine.addLimit(limitSpec({ name: "r", capacity: RATE, refill: RATE, window: 1_000 }));
await engine.addLimit(limitSpec({ name: "tenant", capacity: 1_000_000, refill: 1_000_000, window: 1_000 }));
await engine.addLimit(limitSpec({ name: "model", capacity: 1_000_000, refill: 1_000_000, window: 1_000 }));
const rlf = new RateLimiterRedis({ storeClient: redis, points: RATE, duration: 1, keyPrefix: "rlf" });
const rlfTenant = new RateLimiterRedis({ storeClient: redis, points: 1_000_000, duration: 1, keyPrefix: "rlft" });
const rlfModel = new RateLimiterRedis({ storeClient: redis, points: 1_000_000, duration: 1, keyPrefix: "rlfm" });
const consume = (limiter: RateLimiterRedis, key: string, cost = 1): Promise<unknown> =>
  limiter.consume(key, cost).catch((e: unknown) => e);

const ceiling: Case = {
  name: "ceiling: minimal token-bucket EVALSHA",
  fn: (i) => redis.evalsha(minimalSha, 1, `m{${names[order[i]]}}`, String(RATE), perMs, String(Date.now())),
};
const rlfOne: Case = {
  name: "rate-limiter-flexible RateLimiterRedis.consume",
  fn: (i) => consume(rlf, names[order[i]]),
};
const twOne: Case = {
  name: "tideward checkTokenBucket (one limit)",
  fn: (i) => engine.checkTokenBucket(keys[order[i]], "r", Date.now()),
};

const one = await rounds("One limit, a random key of 1 000 000", [ceiling, twOne, rlfOne]);
console.log(
  `  → tideward ${(one[1] / one[0]).toFixed(2)}× the ceiling (target ≥ 0.95), ${(one[1] / one[2]).toFixed(2)}× rate-limiter-flexible (target ≥ 1.0)`,
);

const three = await rounds("An atomic three-dimension charge (user, tenant, model), per request", [
  {
    name: "tideward checkAtomic, one round trip",
    fn: (i) => {
      const k = order[i];
      const t = k % 1_000;
      return engine.checkAtomic(
        [
          { key: keys[k], limit: "r", cost: 1 },
          { key: tenants[t], limit: "tenant", cost: 5 },
          { key: models[t], limit: "model", cost: 5 },
        ],
        Date.now(),
      );
    },
  },
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
]);
console.log(
  `  → tideward ${(three[0] / three[1]).toFixed(2)}× three rlf consumes (target ≥ 2.5), and not atomic there: a refused third charge leaves the first two taken`,
);

const BATCH = 100;
const batch = await rounds(`The batch path: ${BATCH} decisions a call (checkMany), against the per-call ceiling`, [
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
]);
console.log(`  → batch decisions ${(batch[1] / batch[0]).toFixed(2)}× the per-call ceiling`);

// ── leases ────────────────────────────────────────────────────────────────────────────────────
{
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
{
  const proxy = await startProxy(server.port);
  proxy.delay = 2;
  const slow = await connect(proxy.port);
  await slow.script("LOAD", MINIMAL);
  const slowEngine = new RedisQuotaEngine(ioredisClient(slow), { prefix: "tw:" });
  await slowEngine.addLimit(limitSpec({ name: "r", capacity: RATE, refill: RATE, window: 1_000 }));
  const slowRlf = new RateLimiterRedis({ storeClient: slow, points: RATE, duration: 1, keyPrefix: "rlf" });
  await rounds(
    "A slow Redis: every reply 2 ms late (a loopback proxy), same 50 in flight",
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
  console.log(
    `  ${name.padEnd(58)} ${result.info.toFixed(1).padStart(7)} B (INFO)   ${result.usage.toFixed(1).padStart(6)} B (MEMORY USAGE)   ${count.toLocaleString("en")} keys`,
  );
  return result;
}
console.log(`\nRedis memory per key, ${N.toLocaleString("en")} keys each holding state (a charge of 1 of ${RATE})`);
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
const tw = await perKey("tideward bucket (a string of two doubles), default names", fill(memEngine), (i) =>
  memEngine.redisKey(keys[i], "r"),
);
// The unfavourable naming: a hash tag of each user's own, so the name carries the full id.
const ownTag = new RedisQuotaEngine(ioredisClient(redis), {
  prefix: "tw:",
  hashTag: (k) => k.subject,
  expiryMargin: 3_600_000,
  timeout: 30_000,
});
await ownTag.addLimit(limitSpec({ name: "r", capacity: RATE, refill: 1, window: 3_600_000 }));
const long = await perKey("tideward bucket, each user its own hash tag (full id)", fill(ownTag), (i) =>
  ownTag.redisKey(keys[i], "r"),
);
const rlfLong = new RateLimiterRedis({ storeClient: redis, points: RATE, duration: 3_600, keyPrefix: "rlf" });
const rl = await perKey(
  "rate-limiter-flexible (string counter)",
  async (from, to) => {
    const jobs = [];
    for (let i = from; i < to; i++) jobs.push(consume(rlfLong, names[i]));
    return Promise.all(jobs);
  },
  (i) => `rlf:${names[i]}`,
);
console.log(
  `  → tideward ${tw.usage.toFixed(0)} B a key by MEMORY USAGE (target ≤ 110), ${tw.info.toFixed(0)} B by INFO; rate-limiter-flexible ${rl.usage.toFixed(0)} and ${rl.info.toFixed(0)}`,
);
console.log(
  `  → with the full id in the name, tideward ${long.usage.toFixed(0)} B by MEMORY USAGE, ${long.info.toFixed(0)} B by INFO`,
);
console.log(
  `  (names: tideward "${memEngine.redisKey(keys[123_456], "r")}" and "${ownTag.redisKey(keys[123_456], "r")}", rlf "rlf:u123456"; INFO includes the expiry entry and dict slots every key pays)`,
);

redis.disconnect();
await server.stop();
