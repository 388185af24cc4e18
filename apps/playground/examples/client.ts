// A client guard — a breaker plus a bucket — around a flaky local server. A real node:http
// server on loopback answers 200, then fails every request for a while (an outage), then
// recovers. The client opens with a burst of 20 calls at once (the bucket, holding 10 tokens and
// refilling 100 a second, refuses the excess) and then offers a call every 10 ms; the breaker
// throttles it during the outage, so that most calls never reach the failing server, probes it,
// and lets traffic back once it answers again. The breaker remembers one second, in 10 buckets:
// refusals stop about a window after the outage ends.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Breaker } from "@tideward/breaker";
import { guard, isRefusal } from "@tideward/guard";
import { Bucket } from "@tideward/limiters";
import { systemClock } from "@tideward/time";

/** One phase of the run: what the server does, and for how long (ms). */
interface Phase {
  readonly name: string;
  readonly fail: boolean;
  readonly ms: number;
}

const PHASES: readonly Phase[] = [
  { name: "healthy", fail: false, ms: 400 },
  { name: "outage", fail: true, ms: 1_200 },
  { name: "recovered", fail: false, ms: 2_000 },
];

/** Calls offered at once at the start of the run. */
const BURST = 20;

/** What the client saw in one phase. */
export interface Tally {
  readonly name: string;
  offered: number;
  reached: number;
  ok: number;
  failed: number;
  breaker: number;
  rate: number;
  /** When the phase's last breaker refusal came, in ms from its start; -1 for none. */
  lastBreaker: number;
}

/** Runs the three phases against a real server and counts what happened to every call. */
export async function run(): Promise<Tally[]> {
  let failing = false;
  let reached = 0;
  const server = createServer((_req, res) => {
    reached++;
    res.writeHead(failing ? 500 : 200, { "content-type": "text/plain" });
    res.end(failing ? "down" : "ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const now = systemClock();
  // A breaker with a one-second memory in 10 buckets, probing every 100 ms while throttling.
  const breaker = new Breaker({ window: 1_000, size: 10, probe: 100 }, now);
  const bucket = new Bucket(100, { burst: 10, now });
  const call = guard(
    async ({ signal }) => {
      const res = await fetch(url, { signal });
      const text = await res.text();
      if (res.status >= 500) throw new Error(`HTTP ${res.status}`);
      return text;
    },
    { breaker, bucket, timeout: 1_000 },
  );
  const tallies: Tally[] = [];
  try {
    for (const phase of PHASES) {
      failing = phase.fail;
      const t: Tally = {
        name: phase.name,
        offered: 0,
        reached: 0,
        ok: 0,
        failed: 0,
        breaker: 0,
        rate: 0,
        lastBreaker: -1,
      };
      const before = reached;
      const start = performance.now();
      const pending: Promise<void>[] = [];
      for (let i = 0; performance.now() - start < phase.ms; i++) {
        t.offered++;
        const at = performance.now() - start;
        pending.push(
          call().then(
            () => void t.ok++,
            (e: unknown) => {
              if (!isRefusal(e)) t.failed++;
              else if (e.kind === "breaker") {
                t.breaker++;
                if (at > t.lastBreaker) t.lastBreaker = at;
              } else t.rate++;
            },
          ),
        );
        if (!(phase === PHASES[0] && i < BURST - 1)) await sleep(10);
      }
      await Promise.all(pending);
      t.reached = reached - before;
      tallies.push(t);
    }
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  return tallies;
}

/** Returns the lines this example prints: one row per phase, about three seconds of real traffic. */
export async function main(): Promise<string[]> {
  const tallies = await run();
  const row = (cells: readonly (string | number)[]) =>
    cells
      .map((c, i) =>
        String(c)
          .padStart(i === 0 ? 0 : 9)
          .padEnd(i === 0 ? 10 : 0),
      )
      .join(" ");
  return [
    `${BURST} calls at once, then one every 10 ms, through guard({ breaker, bucket: 100/s, burst 10 }) to a local server that fails, then recovers`,
    row(["phase", "offered", "reached", "ok", "failed", "breaker", "rate"]),
    ...tallies.map((t) => row([t.name, t.offered, t.reached, t.ok, t.failed, t.breaker, t.rate])),
    `the breaker's last refusal came ${Math.round(tallies[2].lastBreaker)} ms into the recovery (its window is 1000 ms)`,
  ];
}
