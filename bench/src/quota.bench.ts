// @tideward/quota-engine at a million keys: a token-bucket check on a random key in two regimes —
// keys that stay (100 an hour) and keys that come and go (100 a second, each back after its bucket
// refilled, so the engine drops and remakes it) — and an atomic three-dimension charge, against
// plain Maps as the floor (and rate-limiter-flexible's RateLimiterMemory where keys stay); and heap
// bytes per key after GC.
//
// How it is measured, so the figures mean something:
// - Every contender holds the same 1 000 000 distinct keys (the same string objects, made before
//   any baseline is taken, so key strings are excluded from every bytes-per-key figure) and reads
//   the same precomputed sequence of random key indices.
// - Memory is heapUsed + arrayBuffers (the engine's typed arrays live outside the JS heap) after
//   two full GCs, before and after filling one contender with all keys, divided by the key count.
//   rate-limiter-flexible's per-key expiry timers are part of its design and are counted.
// - Time: after a warm-up, the contenders take turns (in a rotating order), 100 000 checks each
//   per round, for 21 rounds. Each reports its median round in ns per check, and the median over
//   rounds of its time divided by tideward's time in the same round: load on this shared machine
//   comes in bursts, and a ratio taken within one round sees the same load on both sides. The compare() harness (mitata) is not used here: it cannot await a promise per
//   call, and a million-key working set (cache misses) is the point, not a hot loop.
// - rate-limiter-flexible's consume() returns a promise. It is measured two ways: awaited one by
//   one (what a request handler does), and issued 1 000 at a time then awaited together with
//   Promise.allSettled (the promise machinery is paid for, the event-loop hop amortised: its best
//   case). Its rejections (over the limit) are handled, never left unhandled. Its clock is its own
//   Date.now(); the others are given a simulated clock advancing 1 µs a check.
import { RateLimiterMemory } from "rate-limiter-flexible";
import { QuotaEngine, QuotaKey, charge, limitSpec, perSecond } from "@tideward/quota-engine";

const N = 1_000_000;
const PER_ROUND = 100_000;
const ROUNDS = 21;
const RATE = 100; // per second per user key; the capacity the same
const gc = (globalThis as { gc?: (options?: { type: "major" | "minor" }) => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc (bench/run.ts does)");

const keys: QuotaKey[] = new Array<QuotaKey>(N);
const ids: string[] = new Array<string>(N);
for (let i = 0; i < N; i++) {
  keys[i] = new QuotaKey("tenant-" + (i % 1_000), "user-" + i, "api");
  ids[i] = keys[i].id;
}
const subjects = keys.map((k) => k.subject);
const tenants = Array.from({ length: 1_000 }, (_, i) => new QuotaKey("tenant-" + i, "*", "api"));
const models = Array.from({ length: 10 }, (_, i) => new QuotaKey("*", "*", "model-" + i));
const MASK = (1 << 22) - 1;
const order = new Int32Array(MASK + 1);
let seed = 12345;
for (let i = 0; i <= MASK; i++) {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  order[i] = seed % N;
}

function heap(): number {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** A contender: runs `count` checks from position `from` of the random order, returns how many passed. */
interface Contender {
  readonly name: string;
  readonly bytes?: number;
  readonly run: (from: number, count: number) => number | Promise<number>;
}

// A synchronous contender over a simulated clock (1 µs a check).
function sync(name: string, check: (i: number, now: number) => boolean, bytes?: number): Contender {
  let now = 1_000;
  return {
    name,
    bytes,
    run(from, count) {
      let passed = 0;
      for (let i = 0; i < count; i++) if (check(order[(from + i) & MASK], (now += 0.001))) passed++;
      return passed;
    },
  };
}

// An asynchronous contender: `batch` 1 awaits every call, more issues that many then awaits them.
function async(name: string, check: (i: number) => Promise<unknown>, batch: number, bytes?: number): Contender {
  return {
    name,
    bytes,
    async run(from, count) {
      let passed = 0;
      const ok = (): void => void passed++;
      const no = (): void => undefined;
      if (batch === 1) {
        for (let i = 0; i < count; i++) await check(order[(from + i) & MASK]).then(ok, no);
        return passed;
      }
      for (let i = 0; i < count; i += batch) {
        const pending: Promise<void>[] = [];
        for (let j = 0; j < batch; j++) pending.push(check(order[(from + i + j) & MASK]).then(ok, no));
        await Promise.allSettled(pending);
      }
      return passed;
    },
  };
}

async function race(title: string, contenders: readonly Contender[]): Promise<void> {
  for (const c of contenders) await c.run(0, PER_ROUND); // warm-up
  const times = contenders.map(() => [] as number[]);
  const ratios = contenders.map(() => [] as number[]);
  let from = PER_ROUND;
  for (let r = 0; r < ROUNDS; r++) {
    // Take turns in a rotating order, so no contender always runs right after another's garbage.
    const round: number[] = [];
    for (let k = 0; k < contenders.length; k++) {
      const c = (k + r) % contenders.length;
      // Each round starts on an empty young generation, so no contender pays for collecting the
      // garbage the one before it left (rate-limiter-flexible's promises leave a lot).
      gc?.({ type: "minor" });
      const start = performance.now();
      const passed = await contenders[c].run(from, PER_ROUND);
      round[c] = ((performance.now() - start) * 1e6) / PER_ROUND;
      if (passed === 0)
        throw new Error(`${contenders[c]?.name}: nothing passed; the benchmark would time refusals only`);
    }
    round.forEach((ns, c) => {
      times[c]?.push(ns);
      ratios[c]?.push(ns / round[0]);
    });
    from += PER_ROUND;
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  console.log(`\n${title}`);
  console.log(
    `  ${"case".padEnd(72)} ${"ns/check".padEnd(9)} ${"checks/s".padEnd(11)} ${"bytes/key".padEnd(10)} time vs tideward`,
  );
  contenders.forEach((c, i) => {
    const t = median(times[i]);
    const ratio = i === 0 ? "—" : `${median(ratios[i]).toFixed(2)}×`;
    console.log(
      `  ${c.name.padEnd(72)} ${t.toFixed(0).padEnd(9)} ${Math.round(1e9 / t)
        .toLocaleString("en")
        .padEnd(11)} ${(c.bytes === undefined ? "" : c.bytes.toFixed(1)).padEnd(10)} ${ratio}`,
    );
  });
}

async function fillFlexible(limiter: RateLimiterMemory): Promise<void> {
  for (let i = 0; i < N; i += 10_000) {
    const batch: Promise<unknown>[] = [];
    for (let j = i; j < i + 10_000; j++) batch.push(limiter.consume(ids[j]).catch(() => undefined));
    await Promise.all(batch);
  }
}

// A plain Map<string, { tokens, at }> token bucket that never forgets a key: the floor.
function plainBuckets(
  capacity: number,
  perMs: number,
): { map: Map<string, { tokens: number; at: number }>; take: (id: string, now: number) => boolean } {
  const map = new Map<string, { tokens: number; at: number }>();
  const take = (id: string, now: number): boolean => {
    let b = map.get(id);
    if (b === undefined) map.set(id, (b = { tokens: capacity, at: now }));
    else if (now > b.at) {
      const t = b.tokens + (now - b.at) * perMs;
      b.tokens = t > capacity ? capacity : t;
      b.at = now;
    }
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  };
  return { map, take };
}

// ── keys that stay: one token-bucket check on a random key of a million, 100 an hour per key ──
// No key is ever back to full between its visits (it regains under three hundredths of a token
// in the second between them), so every key keeps its state and nothing is swept.
{
  const HOUR = 3_600_000;
  let before = heap();
  const engine = new QuotaEngine();
  engine.addLimit(limitSpec({ name: "api", capacity: RATE, refill: RATE, window: HOUR }));
  for (let i = 0; i < N; i++) engine.checkTokenBucket(keys[i], "api", 0);
  const engineBytes = (heap() - before) / N;

  before = heap();
  const { take } = plainBuckets(RATE, RATE / HOUR);
  // A fractional instant, as a real clock gives, so `at` is a double like the engine's. Then a
  // second pass, so `tokens` turns fractional too while nothing is timed: V8 first stores it as a
  // small integer, and when the first fraction arrives it changes the objects' layout and moves
  // every object over on its next touch (~0.8 µs each), which would otherwise land in the timed
  // rounds and slow the floor down.
  for (let i = 0; i < N; i++) take(ids[i], 0.5);
  for (let i = 0; i < N; i++) take(ids[i], 0.75);
  const mapBytes = (heap() - before) / N;

  before = heap();
  // keyPrefix "" so it keys its Map by our strings as they are (no prefixed copies).
  const limiter = new RateLimiterMemory({ points: RATE, duration: 3_600, keyPrefix: "" });
  await fillFlexible(limiter);
  const flexibleBytes = (heap() - before) / N;

  await race(`keys that stay: one check on a random key of ${N.toLocaleString("en")} (${RATE} an hour per key)`, [
    sync(
      "@tideward/quota-engine checkTokenBucket → Decision",
      (i, now) => engine.checkTokenBucket(keys[i], "api", now).allowed,
      engineBytes,
    ),
    sync("plain Map<string, { tokens, at }> → boolean (the floor)", (i, now) => take(ids[i], now), mapBytes),
    // The engine is handed a QuotaKey and reads its id: one more (cold) object per check here.
    sync("plain Map, keyed by the same QuotaKey objects' id", (i, now) => take(keys[i].id, now)),
    // What a request handler does: build the key from the request's parts, then check.
    sync(
      "@tideward/quota-engine, QuotaKey built per check from its parts",
      (i, now) => engine.checkTokenBucket(new QuotaKey(keys[i].scope, subjects[i], "api"), "api", now).allowed,
    ),
    // Joined, as QuotaKey builds its id: a template literal would leave a tree of pieces (a cons
    // string), which is slower to hash and compare, and the floor should not pay for that.
    sync("plain Map, string key built per check from the same parts", (i, now) =>
      take([keys[i].scope.length, ":", keys[i].scope, subjects[i].length, ":", subjects[i], "3:api"].join(""), now),
    ),
    async("rate-limiter-flexible 11.4.0 consume, each awaited", (i) => limiter.consume(ids[i]), 1, flexibleBytes),
    async(
      "rate-limiter-flexible 11.4.0 consume, 1 000 per await (its best case)",
      (i) => limiter.consume(ids[i]),
      1_000,
    ),
  ]);
}

// ── keys that come and go: the same traffic at 100 a second per key ──────────────────────────
// At a microsecond a check, a key comes back about a second after its last visit, long after its
// bucket is full again (10 ms): the engine drops it as soon as a sweep finds it full, exactly
// (a full bucket decides as a fresh one), and gives it a slot again when it comes back; the Map
// keeps every key it has seen.
{
  let before = heap();
  const engine = new QuotaEngine();
  engine.addLimit(perSecond("api", RATE));
  // Every key seen once at the bench's own pace, so the engine holds what it will hold when timed.
  let clock = 0;
  for (let i = 0; i < N; i++) engine.checkTokenBucket(keys[order[i & MASK]], "api", (clock += 0.001));
  const engineBytes = (heap() - before) / N;
  const live = engine.stats().keys;

  before = heap();
  const { take } = plainBuckets(RATE, RATE / 1_000);
  for (let i = 0; i < N; i++) take(ids[i], 0.5);
  for (let i = 0; i < N; i++) take(ids[i], 0.75);
  const mapBytes = (heap() - before) / N;

  await race(
    `keys that come and go: one check on a random key of ${N.toLocaleString("en")} (${RATE} a second per key, back after a refill)`,
    [
      sync(
        "@tideward/quota-engine checkTokenBucket → Decision",
        (i, now) => engine.checkTokenBucket(keys[i], "api", now).allowed,
        engineBytes,
      ),
      sync(
        "plain Map<string, { tokens, at }> → boolean (the floor, never forgets)",
        (i, now) => take(ids[i], now),
        mapBytes,
      ),
    ],
  );
  const after = engine.stats();
  console.log(
    `  engine: ${live.toLocaleString("en")} keys held after the fill, ${after.keys.toLocaleString("en")} after the rounds (${after.dropped.toLocaleString("en")} dropped in all); the Map holds ${N.toLocaleString("en")}`,
  );
  console.log(
    `  bytes/key above: the heap each holds divided by the ${N.toLocaleString("en")} keys seen; the engine's per live key: ${((engineBytes * N) / live).toFixed(1)}`,
  );
}

// ── an atomic three-dimension charge: user (1 of a million), tenant (1 of 1 000), model (1 of 10)
{
  const engine = new QuotaEngine();
  engine.addLimit(perSecond("user", RATE));
  engine.addLimit(perSecond("tenant", 1_000_000));
  engine.addLimit(perSecond("model", 10_000_000));
  const set = (i: number): ReturnType<typeof charge>[] => [
    charge(keys[i], "user"),
    charge(tenants[i % 1_000], "tenant", 10),
    charge(models[i % 10], "model", 10),
  ];
  for (let i = 0; i < N; i++) engine.checkAtomic(set(i), 0);

  type B = { tokens: number; at: number };
  const maps = [new Map<string, B>(), new Map<string, B>(), new Map<string, B>()] as const;
  const level = (m: Map<string, B>, id: string, cap: number, now: number): B => {
    let b = m.get(id);
    if (b === undefined) m.set(id, (b = { tokens: cap, at: now }));
    else if (now > b.at) {
      const t = b.tokens + ((now - b.at) * cap) / 1_000;
      b.tokens = t > cap ? cap : t;
      b.at = now;
    }
    return b;
  };
  // Check all three, then debit all three: all-or-nothing by hand (correct for distinct keys only).
  const take3 = (i: number, now: number): boolean => {
    const u = level(maps[0], ids[i], RATE, now);
    const t = level(maps[1], tenants[i % 1_000].id, 1_000_000, now);
    const m = level(maps[2], models[i % 10].id, 10_000_000, now);
    if (u.tokens < 1 || t.tokens < 10 || m.tokens < 10) return false;
    u.tokens -= 1;
    t.tokens -= 10;
    m.tokens -= 10;
    return true;
  };
  // Two passes, as above: the million user objects reach their final (fractional) layout untimed.
  for (let i = 0; i < N; i++) take3(i, 0.5);
  for (let i = 0; i < N; i++) take3(i, 0.75);

  const user = new RateLimiterMemory({ points: RATE, duration: 3_600, keyPrefix: "" });
  const tenant = new RateLimiterMemory({ points: 1_000_000, duration: 3_600, keyPrefix: "" });
  const model = new RateLimiterMemory({ points: 10_000_000, duration: 3_600, keyPrefix: "" });
  await fillFlexible(user);
  // What its users do for several dimensions (RateLimiterUnion works the same way): consume all,
  // reject if any rejects. Not atomic: a refusal leaves the other dimensions debited.
  const three = (i: number): Promise<unknown> =>
    Promise.all([
      user.consume(ids[i]),
      tenant.consume(tenants[i % 1_000].id, 10),
      model.consume(models[i % 10].id, 10),
    ]);

  await race("an atomic three-dimension charge (rate-limiter-flexible: not atomic, partial debits on refusal)", [
    sync(
      "@tideward/quota-engine checkAtomic (all-or-nothing, charges built per call)",
      (i, now) => engine.checkAtomic(set(i), now).committed,
    ),
    sync("plain Maps, check three then debit three (the floor)", take3),
    async("rate-limiter-flexible 11.4.0 three consumes, Promise.all awaited", three, 1),
    async("rate-limiter-flexible 11.4.0 three consumes, 1 000 sets per await", three, 1_000),
  ]);
}
