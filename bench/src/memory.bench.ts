// The bytes one breaker, one shedder, one admit key and one quota-engine key hold, beside what the
// peers hold for the same. Method: many instances made and kept in an array made beforehand, the
// heap collected in full before and after (`--expose-gc`, as `pnpm bench` runs every file), and
// the difference in `process.memoryUsage()`'s heapUsed + arrayBuffers divided by the count. An
// instance's bytes include everything it allocates and keeps (its window's ring, its timers, its
// closures), not the array's slot (8 B, made beforehand) nor a key's string (made beforehand: an
// address key of 11 to 25 characters adds 32 to 56 B). A keyed store's figure includes its table
// at that count (a Map or a typed array grows by doubling, so it is between once and twice the
// entries' own). Each case is measured three times in this process; `pnpm bench memory` is to be
// run three times.
import { ConsecutiveBreaker, SamplingBreaker, circuitBreaker, handleAll } from "cockatiel";
import { MemoryStore } from "express-rate-limit";
import CircuitBreaker from "opossum";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { Breaker, client } from "@tideward/breaker";
import { addressKey, admit } from "@tideward/guard";
import type { LimitKind } from "@tideward/guard";
import { QuotaEngine, QuotaKey, charge, perMinute } from "@tideward/quota-engine";
import type { ChargeKind } from "@tideward/quota-engine";
import { Shedder } from "@tideward/shedder";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc (pnpm bench memory does)");

/** The bytes in use once the heap is collected in full: the JS heap and array buffers (a typed array's contents live outside the heap). */
async function settle(): Promise<number> {
  // Collected until it stops shrinking: a large Map freed by the case before may take more than one.
  let last = Infinity;
  for (let i = 0; i < 6; i++) {
    gc!();
    // A turn of the event loop: freed array buffers are given back off the main thread.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const m = process.memoryUsage();
    const used = m.heapUsed + m.arrayBuffers;
    if (i >= 1 && last - used < 4_096) return used;
    last = used;
  }
  return last;
}

/** Bytes a thing that `make` makes holds, over `n` of them kept at once; `use` runs on each once all are made. */
async function bytesPer(
  n: number,
  make: (i: number) => unknown,
  use?: (x: unknown, i: number) => void | Promise<void>,
): Promise<number> {
  const kept: unknown[] = new Array<unknown>(n).fill(undefined);
  const before = await settle();
  for (let i = 0; i < n; i++) kept[i] = make(i);
  if (use !== undefined) for (let i = 0; i < n; i++) await use(kept[i], i);
  const after = await settle();
  const bytes = (after - before) / n;
  for (let i = 0; i < n; i++) {
    const x = kept[i] as { shutdown?: () => void };
    if (typeof x?.shutdown === "function") x.shutdown();
  }
  kept.length = 0;
  return bytes;
}

/** What a keyed store's bench opens: one key added at a time, and the store closed after. */
interface Store {
  add(i: number): void | Promise<void>;
  close?(): void;
}

// The store being measured, held here so that nothing collects it before the second reading.
let alive: Store | undefined;

/** Bytes a keyed store holds a key, over `n` keys added to one store that `open` makes. */
async function bytesPerKey(n: number, open: () => Store): Promise<number> {
  const before = await settle();
  const store = (alive = open());
  for (let i = 0; i < n; i++) await store.add(i);
  const after = await settle();
  alive.close?.();
  alive = undefined;
  return (after - before) / n;
}

const rows: [string, number[]][] = [];
async function measure(name: string, run: () => Promise<number>): Promise<void> {
  const xs: number[] = [];
  for (let r = 0; r < 3; r++) xs.push(await run());
  rows.push([name, xs]);
  console.log(`${name.padEnd(72)} ${xs.map((x) => x.toFixed(0).padStart(7)).join(" ")}  B`);
}

const T0 = 1_700_000_000_000.5;
// One call every 10 ms for `windows` of a breaker's windows, half of them failing: every bucket
// written that many times over.
const traffic = (window: number, windows: number) => (x: unknown) => {
  const b = x as Breaker;
  for (let t = 0; t < windows * window; t += 10) {
    const p = b.allow(T0 + t, 0.5);
    if (p === undefined) continue;
    if (t % 20 === 0) p.pass(T0 + t);
    else p.fail(T0 + t);
  }
};
const load = (windows: number) => (x: unknown) => {
  const s = x as Shedder;
  for (let t = 0; t < windows * 5_000; t += 10) s.allow(T0 + t, 500)?.pass(T0 + t + 5);
};

const N = 10_000;
console.log(`node ${process.version}; bytes an instance holds, three measurements each\n`);
console.log("breakers and shedders");
await measure("@tideward/breaker new Breaker() (sre: 40 buckets over 10 s)", () => bytesPer(N, () => new Breaker()));
for (const windows of [1, 10])
  await measure(`@tideward/breaker the same after ${windows} window(s) of calls (one every 10 ms)`, () =>
    bytesPer(N, () => new Breaker(), traffic(10_000, windows)),
  );
await measure("@tideward/breaker new Breaker(client) (10 buckets over 750 ms)", () =>
  bytesPer(N, () => new Breaker(client)),
);
await measure("@tideward/shedder new Shedder() (50 buckets over 5 s)", () => bytesPer(N, () => new Shedder()));
for (const windows of [1, 10])
  await measure(`@tideward/shedder the same after ${windows} window(s) of calls (one every 10 ms)`, () =>
    bytesPer(N, () => new Shedder(), load(windows)),
  );
await measure("cockatiel 3.2.1 circuitBreaker(handleAll, SamplingBreaker 10 s)", () =>
  bytesPer(N, () =>
    circuitBreaker(handleAll, {
      halfOpenAfter: 10_000,
      breaker: new SamplingBreaker({ threshold: 0.2, duration: 10_000 }),
    }),
  ),
);
await measure("cockatiel 3.2.1 circuitBreaker(handleAll, ConsecutiveBreaker(5))", () =>
  bytesPer(N, () => circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) })),
);
const fn = () => Promise.resolve(1);
await measure("opossum 9.0.0 new CircuitBreaker(fn) (defaults: 10 buckets over 10 s)", () =>
  bytesPer(2_000, () => new CircuitBreaker(fn)),
);
// opossum pushes every call's latency into its current bucket's array (status.js), whether or not
// rollingPercentilesEnabled asks for percentiles: a breaker's bytes grow with the calls in its
// window (10 s by default), where a ring of counters does not.
for (const calls of [1_000, 10_000])
  await measure(`opossum 9.0.0 the same after ${calls} calls in its window`, () =>
    bytesPer(
      200,
      () => new CircuitBreaker(fn),
      async (x) => {
        const b = x as CircuitBreaker;
        for (let i = 0; i < calls; i++) await b.fire();
      },
    ),
  );
await measure("opossum 9.0.0 after 10000 calls, rollingPercentilesEnabled: false", () =>
  bytesPer(
    200,
    () => new CircuitBreaker(fn, { rollingPercentilesEnabled: false }),
    async (x) => {
      const b = x as CircuitBreaker;
      for (let i = 0; i < 10_000; i++) await b.fire();
    },
  ),
);

console.log("\na key, its string not counted");
const K = 100_000;
const keys = Array.from({ length: K }, (_, i) =>
  addressKey(`2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`)!,
);
const at = (i: number) => T0 + i * 0.001;
const kinds: [LimitKind, string][] = [
  ["bucket", "bucket 100/min"],
  ["gcra", "gcra 100/min"],
  ["period", "period 100/min"],
  ["sliding", "sliding 10/min (8 B a unit of quota)"],
];
for (const [kind, label] of kinds)
  await measure(`@tideward/guard admit, one limit, ${label}, at ${K} keys`, () =>
    bytesPerKey(K, () => {
      let now = T0;
      const a = admit({
        clock: () => now,
        maxKeys: K + 1,
        limits: [{ name: "one", quota: kind === "sliding" ? 10 : 100, window: 60_000, kind }],
      });
      return {
        add: (i) => {
          now = at(i);
          void a.check(keys[i]);
        },
      };
    }),
  );
await measure(`@tideward/guard admit, bucket + period, at ${K} keys`, () =>
  bytesPerKey(K, () => {
    let now = T0;
    const a = admit({
      clock: () => now,
      maxKeys: K + 1,
      limits: [
        { name: "burst", quota: 10, window: 10_000 },
        { name: "hourly", quota: 300, window: 3_600_000, kind: "period" },
      ],
    });
    return {
      add: (i) => {
        now = at(i);
        void a.check(keys[i]);
      },
    };
  }),
);
const quotaKeys = keys.map((k) => new QuotaKey("t", k, "api"));
for (const [kind, label] of [
  ["bucket", "token bucket"],
  ["window", "fixed window"],
  ["gcra", "GCRA"],
] as [ChargeKind, string][])
  await measure(`@tideward/quota-engine, one limit 100/min, ${label}, at ${K} keys`, () =>
    bytesPerKey(K, () => {
      const engine = new QuotaEngine({ maxKeys: K + 1 });
      engine.addLimit(perMinute("one", 100));
      return { add: (i) => void engine.checkAtomic([charge(quotaKeys[i], "one", 1, kind)], at(i)) };
    }),
  );
await measure(`express-rate-limit 8.7.5 MemoryStore (1 min), at ${K} keys`, () =>
  bytesPerKey(K, () => {
    const store = new MemoryStore();
    store.init({ windowMs: 60_000 } as Parameters<MemoryStore["init"]>[0]);
    return { add: (i) => store.increment(keys[i]).then(() => undefined), close: () => store.shutdown() };
  }),
);
await measure(`rate-limiter-flexible 11.4.0 RateLimiterMemory (100/min), at ${K} keys`, () =>
  bytesPerKey(K, () => {
    const limiter = new RateLimiterMemory({ points: 100, duration: 60 });
    return { add: (i) => limiter.consume(keys[i]).then(() => undefined) };
  }),
);
