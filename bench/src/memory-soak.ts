// A day of clients in simulated time, and the memory that holds them. A million distinct clients
// arrive over 24 hours (a Poisson stream, about 11.6 a second), each from an IPv6 /64 of its own;
// each sends 1 to 9 requests 10 to 60 s apart and never returns. Every request goes through
// `addressKey` and `admit`: its keyed limits (a bucket of 10 per 10 s and an hourly window of
// 300), or the same two limits in an in-process quota engine behind `admit`'s `quota`. As a
// control, the same stream is counted in a Map that never forgets a key, in the same harness.
// Every simulated hour the heap is collected in full and its size printed (heapUsed +
// arrayBuffers). The clock is simulated, on Date.now()'s scale: the day takes seconds.
//
//   pnpm bench memory-soak                 three seeds of each store, one child process each
//   pnpm bench memory-soak --store=limits --seed=1 --keys=1000000 --hours=24   one run, one JSON line an hour
import { spawnSync } from "node:child_process";
import { addressKey, admit } from "@tideward/guard";
import type { Admission } from "@tideward/guard";
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import { seededRandom } from "@tideward/time";

type Store = "limits" | "quota" | "map";
const STORES: readonly Store[] = ["limits", "quota", "map"];

const arg = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

const T0 = 1_700_000_000_000.25;
const HOUR = 3_600;

interface Reading {
  hour: number;
  /** Distinct clients seen so far. */
  distinct: number;
  /** Keys the store holds state for. */
  held: number;
  /** heapUsed + arrayBuffers after a full collection, bytes. */
  bytes: number;
}

async function settle(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --expose-gc (pnpm bench memory-soak does)");
  let last = Infinity;
  for (let i = 0; i < 6; i++) {
    gc();
    // A turn of the event loop: freed array buffers are given back off the main thread.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const m = process.memoryUsage();
    const used = m.heapUsed + m.arrayBuffers;
    if (i >= 1 && last - used < 4_096) return used;
    last = used;
  }
  return last;
}

/** What one request does to the store, and how many keys it holds. */
interface Sink {
  request(key: string): void;
  held(): number;
}

function sink(store: Store, clock: () => number): Sink {
  if (store === "limits") {
    const a: Admission = admit({
      clock,
      limits: [
        { name: "burst", quota: 10, window: 10_000 },
        { name: "hourly", quota: 300, window: 3_600_000, kind: "period" },
      ],
    });
    return { request: (key) => void a.check(key), held: () => a.keys };
  }
  if (store === "quota") {
    const engine = new QuotaEngine();
    const burst = limitSpec({ name: "burst", capacity: 10, refill: 10, window: 10_000 });
    const hourly = limitSpec({ name: "hourly", capacity: 300, refill: 300, window: 3_600_000 });
    engine.addLimit(burst);
    engine.addLimit(hourly);
    const a = admit({
      clock,
      quota: {
        store: engine,
        limits: [burst, hourly],
        charges: (key) => {
          const k = new QuotaKey("tenant", key, "api");
          return [charge(k, "burst"), charge(k, "hourly", 1, "window")];
        },
      },
    });
    return { request: (key) => void a.check(key), held: () => engine.stats().keys };
  }
  // The control: a count for every key ever seen, never dropped.
  const map = new Map<string, { count: number; at: number }>();
  return {
    request: (key) => {
      const x = map.get(key);
      if (x === undefined) map.set(key, { count: 1, at: clock() });
      else x.count++;
    },
    held: () => map.size,
  };
}

/** One run: a JSON line per simulated hour on stdout. */
async function run(store: Store, seed: number, keys: number, hours: number): Promise<void> {
  const draw = seededRandom(seed);
  let now = T0;
  const target = sink(store, () => now);
  // Sessions waiting for their next request, by the second it is due (a ring: no wait is past 60 s).
  const slots: { key: string; left: number }[][] = Array.from({ length: 128 }, () => []);
  const seconds = hours * HOUR;
  const rate = keys / (24 * HOUR); // arrivals a second
  let nextArrival = -Math.log(1 - draw()) / rate;
  let distinct = 0;
  const emit = async (hour: number) => {
    const r: Reading = { hour, distinct, held: target.held(), bytes: await settle() };
    console.log(JSON.stringify(r));
  };
  await emit(0);
  for (let sec = 0; sec < seconds; sec++) {
    const slot = slots[sec % slots.length];
    while (nextArrival < sec + 1 && distinct < keys) {
      const i = distinct++;
      // A /64 of its own, and any address in it.
      const low = Array.from({ length: 4 }, () => Math.floor(draw() * 0x10000).toString(16)).join(":");
      const address = `2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}:${low}`;
      slot.push({ key: addressKey(address)!, left: 1 + Math.floor(draw() * 9) });
      nextArrival += -Math.log(1 - draw()) / rate;
    }
    const due = slot.splice(0);
    for (let j = 0; j < due.length; j++) {
      const s = due[j];
      now = T0 + (sec + j / due.length) * 1_000;
      target.request(s.key);
      if (--s.left > 0) slots[(sec + 10 + Math.floor(draw() * 51)) % slots.length].push(s);
    }
    if ((sec + 1) % HOUR === 0) await emit((sec + 1) / HOUR);
  }
}

const store = arg("store") as Store | undefined;
const keys = Number(arg("keys") ?? 1_000_000);
const hours = Number(arg("hours") ?? 24);
if (store !== undefined) {
  if (!STORES.includes(store)) throw new Error(`--store must be one of ${STORES.join(", ")}, got ${store}`);
  await run(store, Number(arg("seed") ?? 1), keys, hours);
} else {
  // Each store and seed in a process of its own, so one run's heap never colours the next.
  const runs = new Map<Store, Reading[][]>();
  for (const s of STORES) {
    const perSeed: Reading[][] = [];
    for (const seed of [1, 2, 3]) {
      const child = spawnSync(
        process.execPath,
        [
          "--expose-gc",
          "--conditions=@tideward/source",
          "--import",
          "tsx",
          import.meta.filename,
          `--store=${s}`,
          `--seed=${seed}`,
          `--keys=${keys}`,
          `--hours=${hours}`,
        ],
        { encoding: "utf8", maxBuffer: 1 << 24 },
      );
      if (child.status !== 0) throw new Error(`${s} seed ${seed} failed: ${child.stderr}`);
      perSeed.push(
        child.stdout
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as Reading),
      );
    }
    runs.set(s, perSeed);
  }
  const mb = (xs: number[]) => {
    const lo = Math.min(...xs) / 2 ** 20;
    const hi = Math.max(...xs) / 2 ** 20;
    return lo.toFixed(1) === hi.toFixed(1) ? lo.toFixed(1) : `${lo.toFixed(1)}–${hi.toFixed(1)}`;
  };
  const span = (xs: number[]) => {
    const lo = Math.min(...xs);
    const hi = Math.max(...xs);
    return lo === hi ? String(lo) : `${lo}–${hi}`;
  };
  console.log(
    `node ${process.version}; ${keys} clients over ${hours} simulated hours; seeds 1–3 (a range where they differ)`,
  );
  console.log(
    "hour | clients so far | admit limits: MB, keys held | admit + quota engine: MB, keys held | control Map: MB",
  );
  const first = runs.get("limits")![0];
  for (let h = 0; h < first.length; h++) {
    const at = (s: Store) => runs.get(s)!.map((r) => r[h]);
    console.log(
      [
        String(first[h].hour).padStart(4),
        span(at("limits").map((r) => r.distinct)).padStart(15),
        `${mb(at("limits").map((r) => r.bytes))}, ${span(at("limits").map((r) => r.held))}`.padStart(28),
        `${mb(at("quota").map((r) => r.bytes))}, ${span(at("quota").map((r) => r.held))}`.padStart(36),
        mb(at("map").map((r) => r.bytes)).padStart(15),
      ].join(" | "),
    );
  }
  // Flat: from the third hour (the working set has filled: an hourly window keeps a client an
  // hour, and the quota engine sweeps its windows as new keys come) to the last, against the control.
  const from = Math.min(3, first.length - 1);
  for (const s of STORES) {
    const later = runs.get(s)!.flatMap((r) => r.slice(from));
    const bytes = later.map((r) => r.bytes);
    const clients = runs.get(s)!.map((r) => r[r.length - 1].distinct - r[from].distinct);
    console.log(
      `${s}: hours ${from} to ${hours}, while ${span(clients)} more clients came: heap ${mb(bytes)} MB, keys held ${span(later.map((r) => r.held))}`,
    );
  }
}
