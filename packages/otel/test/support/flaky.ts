// A flaky backend on loopback: a real node:http server whose every reply follows a script, and
// that counts what it did, so a test can compare the telemetry with what really happened.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the server does with one request: answer a status (after `delay` ms), or drop the connection. */
export type Reply = { readonly status: number; readonly delay?: number } | "reset";

/** What the server did, as counted on its side. */
export interface Served {
  /** Requests received, resets included. */
  requests: number;
  /** Replies by status; `reset` for dropped connections. */
  readonly by: Map<number | "reset", number>;
  /** Requests received, by path. */
  readonly paths: Map<string, number>;
}

export interface Flaky {
  readonly url: string;
  readonly served: Served;
  close(): Promise<void>;
}

/**
 * Starts the server on a free loopback port. `script(n, path, attempt)` decides the reply to the
 * `n`th request (from 1) overall: `attempt` is the guard's attempt number the request carries in
 * `x-attempt` (see {@link get}), or else the request's place among those on `path`. Scripting by
 * attempt keeps a hedge's reply its own even when, on a loaded machine, the hedge's request
 * reaches the server before the attempt it hedges.
 */
export async function startFlaky(script: (n: number, path: string, attempt: number) => Reply): Promise<Flaky> {
  const served: Served = { requests: 0, by: new Map(), paths: new Map() };
  const count = (k: number | "reset") => served.by.set(k, (served.by.get(k) ?? 0) + 1);
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const n = ++served.requests;
    const path = req.url ?? "/";
    const onPath = (served.paths.get(path) ?? 0) + 1;
    served.paths.set(path, onPath);
    const attempt = Number(req.headers["x-attempt"] ?? onPath);
    const reply = script(n, path, Number.isInteger(attempt) && attempt > 0 ? attempt : onPath);
    if (reply === "reset") {
      count("reset");
      req.socket.destroy();
      return;
    }
    count(reply.status);
    const answer = () => {
      if (res.destroyed) return;
      res.writeHead(reply.status, { "content-type": "text/plain" });
      res.end(reply.status < 500 ? "ok" : "down");
    };
    if (reply.delay === undefined) answer();
    else {
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer();
      }, reply.delay);
      timers.add(timer);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a failed HTTP answer throws in these tests: its status is what `error.type` reports. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  readonly status: number;
  constructor(status: number) {
    super(`HTTP ${status}`);
    this.status = status;
  }
}

/**
 * GETs `url` with the attempt's signal, saying which attempt it is; a 5xx throws an
 * {@link HttpError}, a dropped connection fetch's TypeError.
 */
export async function get(url: string, signal?: AbortSignal, attempt?: number): Promise<string> {
  const headers: Record<string, string> = attempt === undefined ? {} : { "x-attempt": String(attempt) };
  const res = await fetch(url, { signal, headers });
  const text = await res.text();
  if (res.status >= 500) throw new HttpError(res.status);
  return text;
}
