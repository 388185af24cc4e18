// The busy node:http server and its load, for the adaptive-limit example (concurrency-http.ts)
// and its benchmark (bench/src/concurrency-http.bench.ts), so that both measure one server: each
// request is judged by a policy (its level read from its path), then waits `wait` ms (a database,
// say) and burns `burn` ms of CPU synchronously. The load comes from generator.mjs in a child
// process of its own, open loop, its clients retrying when asked to.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { Limiter, Token } from "@tideward/concurrency";
import type { Shedder, Ticket } from "@tideward/shedder";

/** The two kinds of request, as their paths name them: `/user` and `/prefetch`. */
export type Level = "user" | "prefetch";

/** Ends a request's place at `now` (ms): `ok` when it was served, not when its caller had gone. */
export type Settle = (now: number, ok: boolean) => void;

/** A policy's decision on one request at `now` (ms): its place, or `undefined` for a refusal (503). */
export type Admit = (now: number, level: Level) => Settle | undefined;

/** No policy: every request is served. */
export const open: Admit = () => () => {};

/** A concurrency limit: a success passes (a round-trip sample), a caller gone drops. */
export function limited(limiter: Limiter): Admit {
  return (now, level) => {
    const t: Token | { ok: false } = limiter.acquire(now, level);
    if (!t.ok) return undefined;
    return (end, ok) => (ok ? t.pass(end) : t.drop(end));
  };
}

/** A shedder reading the CPU load `load(now)` (thousandths). */
export function shed(shedder: Shedder, load: (now: number) => number): Admit {
  return (now, level) => {
    const t: Ticket | undefined = shedder.allow(now, load(now), level);
    return t === undefined ? undefined : (end, ok) => (ok ? t.pass(end) : t.fail());
  };
}

/** Burns `ms` milliseconds of CPU on the event loop. */
export function burn(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** What each request costs the server, ms. */
export interface Work {
  /** Waited without the CPU (a database, say). */
  readonly wait: number;
  /** Then burnt on the event loop. */
  readonly burn: number;
}

/** A running server. */
export interface Busy {
  readonly port: number;
  /** Cuts every connection and stops listening. */
  close(): Promise<void>;
}

/** Starts the server on a free loopback port with `admit` in front of each request. */
export async function serve(admit: Admit, work: Work): Promise<Busy> {
  const server = createServer((req, res) => {
    const settle = admit(performance.now(), req.url === "/prefetch" ? "prefetch" : "user");
    if (settle === undefined) {
      res.writeHead(503).end();
      return;
    }
    void sleep(work.wait).then(() => {
      // The caller gave up while this waited: a timeout, which a limit learns of.
      if (res.destroyed) {
        settle(performance.now(), false);
        return;
      }
      burn(work.burn);
      res.end("ok");
      settle(performance.now(), true);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A request's due time from the run's start and its latency from then, ms. */
export type Answer = readonly [due: number, latency: number];

/** What one generator offers: see generator.mjs. */
export interface Offer {
  readonly port: number;
  readonly path: string;
  /** Calls a second. */
  readonly rate: number;
  /** How long it sends, ms; and at most `count` calls. */
  readonly duration: number;
  readonly count?: number;
  /** How long it waits for answers after, ms. */
  readonly grace: number;
  /** Connections it may open at once. @defaultValue 1000 */
  readonly sockets?: number;
  /** Attempts a call may make, the first included (1: no retry). @defaultValue 1 */
  readonly attempts?: number;
  /** An attempt unanswered this long is aborted (and retried), ms. @defaultValue none */
  readonly timeout?: number;
  /** No retry that would start this long after the call was due, ms. @defaultValue none */
  readonly deadline?: number;
  /** Full-jitter backoff before a retry: up to `base · 2^k` ms, at most `cap`. */
  readonly base?: number;
  readonly cap?: number;
}

/** What one generator saw. */
export interface Seen {
  /** Calls sent. */
  readonly sent: number;
  /** Calls answered 200, by any attempt. */
  readonly ok: Answer[];
  /** Calls whose last attempt was answered 503. */
  readonly refused: Answer[];
  /** Calls that ended otherwise (an error, a timeout, another status). */
  readonly failed: number;
  /** Calls still open when the grace ran out. */
  readonly unanswered: number;
  /** How long the run took, ms. */
  readonly elapsed: number;
  /** Attempts made, attempts answered 503, and attempts aborted by their timeout. */
  readonly attempts: number;
  readonly refusals: number;
  readonly timedOut: number;
}

/** Runs generator.mjs with `offer` in a child process and reads what it saw. */
export function generate(offer: Offer): Promise<Seen> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "generator.mjs"), JSON.stringify(offer)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  // The generator bounds itself; this is the backstop should it hang (generous: on a busy host,
  // starting a Node.js process alone can take seconds).
  const backstop = setTimeout(() => child.kill(), offer.duration + offer.grace + 15_000);
  return new Promise((resolve, reject) =>
    child.on("close", (code) => {
      clearTimeout(backstop);
      if (code === 0) resolve(JSON.parse(out) as Seen);
      else reject(new Error(`load generator exited with ${code}`));
    }),
  );
}
