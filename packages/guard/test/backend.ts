// A real node:http server on a free loopback port that tests tell how to answer, one behaviour
// per path, and that records what it saw. It starts and stops with the test file.
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll } from "vitest";

/** One request the backend saw: its path, when it came (performance.now ms), how it ended. */
export interface Seen {
  readonly path: string;
  readonly method: string;
  readonly at: number;
  /** Whether the client went away before the answer was sent. */
  aborted: boolean;
}

export interface Backend {
  readonly url: string;
  readonly seen: Seen[];
  /** Requests seen on paths starting with `prefix`. */
  count(prefix: string): number;
  /** The bodies `/body/…` and `/body-slow/…` received for a test id (`?id=`), in order, as text. */
  bodies(id: string): readonly string[];
  /** A counter tests may read and set: `/flaky/<n>` fails while it is under n. */
  flaky: number;
  /** A switch tests may read and set: `/switch` answers 500 while it is on, 200 "ok" otherwise. */
  down: boolean;
  /**
   * Or a stretch of `performance.now()` readings, ms, in which `/switch` answers 500: read as
   * each request is handled, so a test's timer running late on a busy machine cannot hold it on.
   */
  downBetween: readonly [number, number] | undefined;
  stop(): Promise<void>;
}

function reply(res: ServerResponse, status: number, headers: Record<string, string> = {}, body = String(status)): void {
  res.writeHead(status, { "content-type": "text/plain", ...headers });
  res.end(body);
}

/**
 * Paths:
 * - `/ok` — 200 "ok"
 * - `/fail` — 500
 * - `/status/<n>` — status n
 * - `/hang` — never answers (until the client goes away)
 * - `/slow/<ms>` — 200 after ms
 * - `/slow-once/<ms>` — the first request of each test id (`?id=`) waits ms, later ones answer at once
 * - `/flaky/<n>` — 503 for the first n requests since `flaky` was last set to 0, then 200
 * - `/switch` — 500 while `down` is set, else 200 "ok"
 * - `/429/seconds/<s>` — 429 with `Retry-After: s`, then 200 once that has passed for the same `?id=`
 * - `/429/date/<s>` — the same with `Retry-After` as an HTTP date s seconds after the `Date` field
 * - `/429/ratelimit/<s>` — 429 with `RateLimit: "default";r=0;t=s`
 * - `/429/x-reset/<s>` — 429 with `X-RateLimit-Reset: s`
 * - `/body/<n>` — reads the whole body, then 503 for the first n requests of each test id, then 200
 * - `/body-slow/<ms>` — reads the whole body, then 200 after ms
 */
export async function startBackend(): Promise<Backend> {
  const seen: Seen[] = [];
  const until = new Map<string, number>();
  const slowDone = new Set<string>();
  const received = new Map<string, string[]>();
  /** Reads the request's body to the end, records it under the test id, then answers. */
  const readBody = (req: IncomingMessage, id: string, then: (count: number) => void): void => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const list = received.get(id) ?? [];
      received.set(id, list);
      list.push(Buffer.concat(chunks).toString("utf8"));
      then(list.length);
    });
  };
  const state: { flaky: number; down: boolean; downBetween: readonly [number, number] | undefined } = {
    flaky: 0,
    down: false,
    downBetween: undefined,
  };
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const entry: Seen = { path: url.pathname, method: req.method ?? "GET", at: performance.now(), aborted: false };
    seen.push(entry);
    res.on("close", () => {
      if (!res.writableFinished) entry.aborted = true;
    });
    const parts = url.pathname.split("/").filter(Boolean);
    const id = url.searchParams.get("id") ?? "";
    const n = Number(parts[parts.length - 1]);
    switch (parts[0]) {
      case "ok":
        return reply(res, 200, {}, "ok");
      case "fail":
        return reply(res, 500);
      case "status":
        return reply(res, n);
      case "hang":
        return;
      case "slow": {
        const t = setTimeout(() => reply(res, 200, {}, "slow"), n);
        res.on("close", () => clearTimeout(t));
        return;
      }
      case "slow-once": {
        if (slowDone.has(id)) return reply(res, 200, {}, "fast");
        slowDone.add(id);
        const t = setTimeout(() => reply(res, 200, {}, "slow"), n);
        res.on("close", () => clearTimeout(t));
        return;
      }
      case "body":
        return readBody(req, id, (count) => (count <= n ? reply(res, 503) : reply(res, 200, {}, "ok")));
      case "body-slow":
        return readBody(req, id, () => {
          const t = setTimeout(() => reply(res, 200, {}, "slow"), n);
          res.on("close", () => clearTimeout(t));
        });
      case "flaky":
        return state.flaky++ < n ? reply(res, 503) : reply(res, 200, {}, "ok");
      case "switch":
        return state.down ||
          (state.downBetween !== undefined && entry.at >= state.downBetween[0] && entry.at < state.downBetween[1])
          ? reply(res, 500)
          : reply(res, 200, {}, "ok");
      case "429": {
        const key = `${parts[1]}:${id}`;
        const free = until.get(key);
        if (free !== undefined && Date.now() >= free) return reply(res, 200, {}, "ok");
        if (free === undefined) until.set(key, Date.now() + n * 1_000);
        const now = new Date();
        if (parts[1] === "seconds") return reply(res, 429, { "retry-after": String(n) });
        if (parts[1] === "date") {
          // Whole seconds: an HTTP date has no fractions, so the date is the next whole second
          // plus n, measured from a Date field of the same whole second.
          const base = Math.floor(now.getTime() / 1_000) * 1_000;
          until.set(key, base + n * 1_000);
          return reply(res, 429, {
            date: new Date(base).toUTCString(),
            "retry-after": new Date(base + n * 1_000).toUTCString(),
          });
        }
        if (parts[1] === "ratelimit")
          return reply(res, 429, { ratelimit: `"default";r=0;t=${n}`, "ratelimit-policy": `"default";q=1;w=${n}` });
        return reply(res, 429, { "x-ratelimit-reset": String(n) });
      }
      default:
        return reply(res, 404);
    }
  };
  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    count: (prefix) => seen.filter((s) => s.path.startsWith(prefix)).length,
    bodies: (id) => received.get(id) ?? [],
    get flaky() {
      return state.flaky;
    },
    set flaky(v: number) {
      state.flaky = v;
    },
    get down() {
      return state.down;
    },
    set down(v: boolean) {
      state.down = v;
    },
    get downBetween() {
      return state.downBetween;
    },
    set downBetween(v: readonly [number, number] | undefined) {
      state.downBetween = v;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Starts a backend for the test file that awaits this at its top level, stopped after the file's tests. */
export async function serveBackend(): Promise<Backend> {
  const backend = await startBackend();
  afterAll(() => backend.stop());
  return backend;
}
