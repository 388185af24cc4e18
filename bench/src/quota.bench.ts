// @tideward/quota-engine at a million keys: a token-bucket check on a random key in two regimes —
// keys that stay (100 an hour) and keys that come and go (100 a second, each back after its bucket
// refilled, so the engine drops and remakes it) — and an atomic three-dimension charge, against
// plain Maps as the floor (and rate-limiter-flexible's RateLimiterMemory where keys stay); and heap
// bytes per key after GC.
//
// The method (an independent harness's, which our earlier figures did not reproduce):
// - 1 000 000 QuotaKeys are made up front: scope `t` + i % 1 000, subject `u` + i, resource `api`.
//   The Maps are keyed by the same id strings, held in an array of their own (so the floor does
//   not even read the key objects the engine is handed) or read from the key objects.
// - Each check takes its key from a table of 2^20 pseudo-random indices, made by an LCG
//   (s = s · 1103515245 + 12345 mod 2^32, index s mod 1 000 000). Every contender reads the same
//   stretch of that table in a round, on a simulated clock of its own advancing 1 µs a check.
// - Every contender stays alive in the same process. They take rounds of 200 000 checks in turn
//   (the order rotating from round to round), each round after a minor GC (--expose-gc), so no
//   contender pays for collecting another's garbage; 7 rounds after a warm-up. A contender's
//   figure is its median round in ns a check; a ratio is the median over rounds of tideward's time
//   over the other's in the same round (load on a shared machine comes in bursts, and a ratio
//   within one round sees the same load on both sides), with the range over rounds.
// - Before timing, every contender has seen every key: the engine once, the Maps twice at
//   fractional instants. V8 first stores a Map value's `tokens` as a small integer, and the first
//   fraction changes the objects' layout and moves every object over on its next touch (~0.8 µs
//   each); the second pass lets that happen untimed, so the floor is as fast as it gets.
// - Memory is heapUsed + arrayBuffers (the engine's typed arrays live outside the JS heap) after
//   two full GCs, before and after filling one contender with every key, over the key count; the
//   keys and their strings exist before any of it, so they count for no one.
// - rate-limiter-flexible's consume() returns a promise: it is measured awaited one by one (what a
//   request handler does) and 1 000 at a time awaited together (its best case). Its rejections
//   (over the limit) are handled. Its clock is its own Date.now().
// The compare() harness (mitata) is not used here: it cannot await a promise per call, and a
// million-key working set (cache misses) is the point, not a hot loop.
import { RateLimiterMemory } from "rate-limiter-flexible";
import {
  bucketFits,
  bucketFull,
  bucketLevel,
  bucketReady,
  bucketWhole,
  gcraFits,
  gcraLead,
  gcraReady,
  gcraRest,
  gcraWhole,
  until,
  windowCount,
  windowEnd,
  windowFits,
} from "@tideward/limiters/math";
import { QuotaEngine, QuotaKey, limitSpec, perSecond } from "@tideward/quota-engine";
import {
  BUCKET,
  EXHAUSTED,
  OK,
  Rule,
  TOO_LARGE,
  WINDOW,
  decide,
  freshAmount,
  freshInstant,
  step,
} from "@tideward/quota-engine/internal";
import type { Kind } from "@tideward/quota-engine/internal";
import { RecordFloor, chargeSetEngine, models, settleTokens, tenants, userKeys } from "./quota-floor";

const N = 1_000_000;
const TABLE = 1 << 20;
const PER_ROUND = 200_000;
const ROUNDS = 7;
const RATE = 100; // per key, an hour or a second; the capacity the same
const gc = (globalThis as { gc?: (options?: { type: "major" | "minor" }) => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc (bench/run.ts does)");
// The sections to run (QUOTA_BENCH=stay,churn,atomic,reserve,step; all by default).
const SECTIONS = new Set((process.env.QUOTA_BENCH ?? "stay,churn,atomic,reserve,step").split(","));

const keys = userKeys(N);
const ids = keys.map((k) => k.id);
const order = new Int32Array(TABLE);
let seed = 1;
for (let i = 0; i < TABLE; i++) {
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

// A synchronous contender on a simulated clock starting at `start` (ms), 1 µs a check.
// `clock`, when given, is shared with the other contenders on the same engine, so that the engine
// sees time move on through every turn (with a clock each, every turn but the first would run at
// the instant the turn before it ended, as the engine reads a clock behind its own).
function sync(
  name: string,
  check: (i: number, now: number) => boolean,
  bytes?: number,
  start = 1_000,
  clock = { now: start },
): Contender {
  return {
    name,
    bytes,
    run(from, count) {
      let passed = 0;
      for (let i = 0; i < count; i++) if (check(order[(from + i) & (TABLE - 1)], (clock.now += 0.001))) passed++;
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
        for (let i = 0; i < count; i++) await check(order[(from + i) & (TABLE - 1)]).then(ok, no);
        return passed;
      }
      for (let i = 0; i < count; i += batch) {
        const pending: Promise<void>[] = [];
        for (let j = 0; j < batch; j++) pending.push(check(order[(from + i + j) & (TABLE - 1)]).then(ok, no));
        await Promise.allSettled(pending);
      }
      return passed;
    },
  };
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function race(title: string, contenders: readonly Contender[]): Promise<void> {
  let from = 0;
  for (const c of contenders) await c.run(from, PER_ROUND); // warm-up
  from += PER_ROUND;
  const times = contenders.map(() => [] as number[]);
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < contenders.length; k++) {
      const c = (k + r) % contenders.length;
      gc?.({ type: "minor" });
      const start = performance.now();
      const passed = await contenders[c].run(from, PER_ROUND);
      times[c].push(((performance.now() - start) * 1e6) / PER_ROUND);
      if (passed === 0)
        throw new Error(`${contenders[c]?.name}: nothing passed; the benchmark would time refusals only`);
    }
    from += PER_ROUND;
  }
  console.log(`\n${title}`);
  console.log(
    `  ${"case".padEnd(74)} ${"ns/check".padEnd(9)} ${"checks/s".padEnd(11)} ${"bytes/key".padEnd(10)} tideward's time ÷ this one's (rounds)`,
  );
  contenders.forEach((c, i) => {
    const t = median(times[i]);
    const ratios = times[0].map((ns, r) => ns / times[i][r]);
    const ratio =
      i === 0
        ? "—"
        : `${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`;
    console.log(
      `  ${c.name.padEnd(74)} ${t.toFixed(0).padEnd(9)} ${Math.round(1e9 / t)
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

type Level = { tokens: number; at: number };

// A plain Map<string, { tokens, at }> token bucket that never forgets a key: the floor. Filled
// with every key twice (see the top of the file).
function plainBuckets(capacity: number, perMs: number): (id: string, now: number) => boolean {
  const map = new Map<string, Level>();
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
  for (let i = 0; i < N; i++) take(ids[i], 0.5);
  for (let i = 0; i < N; i++) take(ids[i], 0.75);
  return take;
}

// A Map that forgets, as a Map-based limiter with bounded memory must: each new key moves a sweep
// over the Map (an iterator kept between calls, in insertion order) on by two entries, deleting
// those whose bucket is full again — the engine's own policy (sweepStep 2).
function forgettingBuckets(capacity: number, perMs: number): (id: string, now: number) => boolean {
  const map = new Map<string, Level>();
  let sweep = map.entries();
  return (id, now) => {
    let b = map.get(id);
    if (b === undefined) {
      map.set(id, (b = { tokens: capacity, at: now }));
      for (let k = 0; k < 2; k++) {
        let next = sweep.next();
        if (next.done === true) next = (sweep = map.entries()).next();
        const [key, old] = next.value as [string, Level];
        if (old !== b && old.tokens + (now - old.at) * perMs >= capacity) map.delete(key);
      }
    } else if (now > b.at) {
      const t = b.tokens + (now - b.at) * perMs;
      b.tokens = t > capacity ? capacity : t;
      b.at = now;
    }
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  };
}

// The string a request handler would build for a Map, joined flat as QuotaKey builds its id (a
// template literal leaves a tree of pieces, a cons string, slower to hash and compare).
function joined(k: QuotaKey): string {
  return [k.scope.length, ":", k.scope, k.subject.length, ":", k.subject, "3:api"].join("");
}

// ── keys that stay: one token-bucket check on a random key of a million, 100 an hour per key ──
// No key is ever back to full between its visits (it regains under three hundredths of a token
// in the second between them), so every key keeps its state and nothing is swept.
if (SECTIONS.has("stay")) {
  const HOUR = 3_600_000;
  let before = heap();
  const engine = new QuotaEngine();
  engine.addLimit(limitSpec({ name: "api", capacity: RATE, refill: RATE, window: HOUR }));
  for (let i = 0; i < N; i++) engine.checkTokenBucket(keys[i], "api", 0);
  const engineBytes = (heap() - before) / N;

  before = heap();
  const take = plainBuckets(RATE, RATE / HOUR);
  const mapBytes = (heap() - before) / N;

  before = heap();
  // keyPrefix "" so it keys its Map by our strings as they are (no prefixed copies).
  const limiter = new RateLimiterMemory({ points: RATE, duration: 3_600, keyPrefix: "" });
  await fillFlexible(limiter);
  const flexibleBytes = (heap() - before) / N;

  await race(`keys that stay: one check on a random key of ${N.toLocaleString("en")} (${RATE} an hour per key)`, [
    sync(
      "@tideward/quota-engine checkTokenBucket(key) → Decision",
      (i, now) => engine.checkTokenBucket(keys[i], "api", now).allowed,
      engineBytes,
    ),
    sync(
      "plain Map<string, { tokens, at }> → boolean, ids from an array (the floor)",
      (i, now) => take(ids[i], now),
      mapBytes,
    ),
    // The engine is handed a QuotaKey and reads it: so does this one.
    sync("plain Map, keyed by the same QuotaKey objects' id", (i, now) => take(keys[i].id, now)),
    // What a request handler does that does not keep key objects: build the key, then check.
    sync(
      "@tideward/quota-engine, QuotaKey built per check from its parts",
      (i, now) => engine.checkTokenBucket(new QuotaKey(keys[i].scope, keys[i].subject, "api"), "api", now).allowed,
    ),
    sync("plain Map, string key built per check from the same parts", (i, now) => take(joined(keys[i]), now)),
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
if (SECTIONS.has("churn")) {
  let before = heap();
  const engine = new QuotaEngine();
  engine.addLimit(perSecond("api", RATE));
  // A second of traffic at the bench's own pace, so the engine holds what it will hold when timed.
  let clock = 0;
  for (let i = 0; i < N; i++) engine.checkTokenBucket(keys[order[i & (TABLE - 1)]], "api", (clock += 0.001));
  const engineBytes = (heap() - before) / N;
  const live = engine.stats().keys;

  before = heap();
  const take = plainBuckets(RATE, RATE / 1_000);
  const mapBytes = (heap() - before) / N;

  before = heap();
  const forget = forgettingBuckets(RATE, RATE / 1_000);
  clock = 0;
  for (let i = 0; i < N; i++) forget(ids[order[i & (TABLE - 1)]], (clock += 0.001));
  const forgetBytes = (heap() - before) / N;

  await race(
    `keys that come and go: one check on a random key of ${N.toLocaleString("en")} (${RATE} a second per key, back after a refill)`,
    [
      sync(
        "@tideward/quota-engine checkTokenBucket(key) → Decision",
        (i, now) => engine.checkTokenBucket(keys[i], "api", now).allowed,
        engineBytes,
        clock,
      ),
      sync("plain Map, ids from an array (the floor, never forgets)", (i, now) => take(ids[i], now), mapBytes, clock),
      sync("plain Map, keyed by the same QuotaKey objects' id", (i, now) => take(keys[i].id, now), undefined, clock),
      sync("plain Map that forgets (sweeps 2 entries a new key)", (i, now) => forget(ids[i], now), forgetBytes, clock),
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
if (SECTIONS.has("atomic") || SECTIONS.has("reserve")) {
  const { engine, set } = chargeSetEngine(keys);

  const maps = [new Map<string, Level>(), new Map<string, Level>(), new Map<string, Level>()] as const;
  const level = (m: Map<string, Level>, id: string, cap: number, now: number): Level => {
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

  if (SECTIONS.has("atomic"))
    await race("an atomic three-dimension charge (rate-limiter-flexible: not atomic, partial debits on refusal)", [
      sync(
        "@tideward/quota-engine checkAtomic (all-or-nothing, charges built per call)",
        (i, now) => engine.checkAtomic(set(i), now).committed,
      ),
      sync("plain Maps, check three then debit three (the floor)", take3),
      async("rate-limiter-flexible 11.4.0 three consumes, Promise.all awaited", three, 1),
      async("rate-limiter-flexible 11.4.0 three consumes, 1 000 sets per await", three, 1_000),
    ]);

  // Reserve against the charge set it makes: the same three-dimension set on the same engine, the
  // reservation's record kept under a made id and dropped when it expires (1 ms later: about
  // 1 000 held at a time, two expired per reserve, as in a service that reserves and settles);
  // and the floor under it, the charge set then the least a record costs (RecordFloor, in
  // quota-floor.ts).
  const shared = { now: 10_000 };
  const floor = new RecordFloor();
  if (SECTIONS.has("reserve"))
    await race("reserve against a charge set (the same set, the same engine; ratios: reserve's time ÷ the other's)", [
      sync(
        "@tideward/quota-engine reserve (expires 1 ms later, ~1 000 held)",
        (i, now) => engine.reserve(set(i), now, { ttl: 1 }).committed,
        undefined,
        10_000,
        shared,
      ),
      sync(
        "@tideward/quota-engine checkAtomic",
        (i, now) => engine.checkAtomic(set(i), now).committed,
        undefined,
        10_000,
        shared,
      ),
      sync(
        "the floor: checkAtomic, then the least a record costs (see RecordFloor)",
        (i, now) => {
          const charges = set(i);
          return engine.checkAtomic(charges, now).committed && floor.keep(charges, now + 1, now) !== "";
        },
        undefined,
        10_000,
        shared,
      ),
      sync(
        "@tideward/quota-engine reserve, then settle at once (tokens back)",
        (i, now) => {
          const r = engine.reserve(set(i), now, { ttl: 1 });
          return r.committed && engine.settle(r.id, settleTokens(i), now).ok;
        },
        undefined,
        10_000,
        shared,
      ),
    ]);
  if (SECTIONS.has("reserve"))
    console.log(`  reservations held after the rounds: ${engine.stats().reservations.toLocaleString("en")}`);
}

// ── the algorithm step's results: one shared object (what the engine does) or a returned one ──
// The engine's steps (bucket, window, GCRA) write what they computed into one module-wide object,
// `step`, read right after; the alternative returns a fresh object each time. Both are run here
// the way the engine's general path runs them (quota-engine's #stepOn): a key's two numbers read
// from a table of a million slots, one step through the three-way dispatch, the state written
// back when it passed, and a decision made. The shared side calls the engine's own `decide`; the
// returned side is the same formulas written to return their results.
if (SECTIONS.has("step")) {
  const bucket = new Rule(limitSpec({ name: "b", capacity: 100, refill: 7, window: 1_000 }));
  const gcra = new Rule(limitSpec({ name: "g", capacity: 100, refill: 100, window: 1_000, burst: 50 }));
  const rules = [bucket, bucket, gcra] as const;
  const data = new Float64Array(2 * N);
  const kindOf = new Uint8Array(N);
  for (let i = 0; i < N; i++) {
    const kind = (i % 3) as Kind;
    kindOf[i] = kind;
    data[2 * i] = freshAmount(kind, rules[kind]);
    data[2 * i + 1] = freshInstant(kind, 0);
  }

  class Made {
    constructor(
      readonly allowed: boolean,
      readonly remaining: number,
      readonly retryAfter: number,
      readonly resetAfter: number,
    ) {}
  }
  class Step {
    constructor(
      readonly code: number,
      readonly amount: number,
      readonly instant: number,
      readonly remaining: number,
      readonly passAt: number,
      readonly resetAt: number,
    ) {}
  }
  const no = (code: number, remaining: number, passAt: number, resetAt: number): Step =>
    new Step(code, 0, 0, remaining, passAt, resetAt);

  function bucketReturned(rule: Rule, tokens: number, at: number, t: number, cost: number): Step {
    const { perMs, capacity, bucketSlack } = rule;
    const level = bucketLevel(tokens, at, t, perMs, capacity);
    if (bucketFits(level, cost, capacity, bucketSlack)) {
      const left = level - cost;
      const since = t > at ? t : at;
      return new Step(
        OK,
        left,
        since,
        bucketWhole(left, capacity, bucketSlack),
        t,
        bucketFull(left, since, t, perMs, capacity, bucketSlack),
      );
    }
    return no(
      cost > capacity ? TOO_LARGE : EXHAUSTED,
      bucketWhole(level, capacity, bucketSlack),
      bucketReady(tokens, at, t, cost, perMs, capacity, bucketSlack),
      bucketFull(tokens, at, t, perMs, capacity, bucketSlack),
    );
  }
  function windowReturned(rule: Rule, used: number, end: number, t: number, cost: number): Step {
    const capacity = rule.capacity;
    const count = windowCount(used, end, t);
    if (windowFits(count, cost, capacity)) {
      const until = t < end ? end : windowEnd(t, rule.window, rule.align);
      return new Step(OK, count + cost, until, capacity - count - cost, t, until);
    }
    const left = count < capacity ? capacity - count : 0;
    return cost > capacity
      ? no(TOO_LARGE, left, Infinity, t < end ? end : t)
      : no(EXHAUSTED, left, end, t < end ? end : t);
  }
  function gcraReturned(rule: Rule, ahead: number, at: number, t: number, cost: number): Step {
    const { interval, burst, gcraSlack } = rule;
    const lead = gcraLead(at, ahead, t);
    if (cost <= burst && gcraFits(lead, cost, interval, rule.reach)) {
      const next = lead + cost * interval;
      return new Step(OK, next, t, gcraWhole(next, interval, burst, gcraSlack), t, gcraRest(t, next, t));
    }
    return no(
      cost > burst ? TOO_LARGE : EXHAUSTED,
      gcraWhole(lead, interval, burst, gcraSlack),
      cost > burst ? Infinity : gcraReady(at, ahead, t, cost, interval, rule.tau, rule.reach),
      gcraRest(at, ahead, t),
    );
  }
  const returned = (kind: Kind, rule: Rule, amount: number, instant: number, t: number, cost: number): Step =>
    kind === BUCKET
      ? bucketReturned(rule, amount, instant, t, cost)
      : kind === WINDOW
        ? windowReturned(rule, amount, instant, t, cost)
        : gcraReturned(rule, amount, instant, t, cost);

  // A key's step as the engine's general path takes it, each way.
  function viaShared(slot: number, t: number): Made {
    const kind = kindOf[slot] as Kind;
    const at = 2 * slot;
    const code = decide(kind, rules[kind], data[at], data[at + 1], t, 1);
    if (code === OK) {
      data[at] = step.amount;
      data[at + 1] = step.instant;
    }
    return new Made(code === OK, step.remaining, until(t, t, step.passAt), until(t, t, step.resetAt));
  }
  function viaReturned(slot: number, t: number): Made {
    const kind = kindOf[slot] as Kind;
    const at = 2 * slot;
    const s = returned(kind, rules[kind], data[at], data[at + 1], t, 1);
    if (s.code === OK) {
      data[at] = s.amount;
      data[at + 1] = s.instant;
    }
    return new Made(s.code === OK, s.remaining, until(t, t, s.passAt), until(t, t, s.resetAt));
  }
  // Both sides agree, decision for decision, before anything is timed.
  for (let i = 0; i < 10_000; i++) {
    const slot = order[i];
    const state = data.slice(2 * slot, 2 * slot + 2);
    const a = viaShared(slot, 1 + i * 0.001);
    data.set(state, 2 * slot);
    const b = viaReturned(slot, 1 + i * 0.001);
    if (JSON.stringify(a) !== JSON.stringify(b))
      throw new Error(`the two steps disagree at ${slot}: ${JSON.stringify([a, b])}`);
  }
  await race("one algorithm step on a random key of a million, its results in a shared object or a returned one", [
    sync("the engine's step (results in the shared `step`)", (i, now) => viaShared(i, now).allowed, undefined, 10),
    sync(
      "the same step returning a fresh object of its results",
      (i, now) => viaReturned(i, now).allowed,
      undefined,
      10,
    ),
  ]);
}
