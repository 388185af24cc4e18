// admit's concurrency limit, priority and wait in front of real servers — plain node:http,
// Express 5 and Hono 4 (on @hono/node-server) — driven by real fetch over loopback.
import { createServer } from "node:http";
import type { IncomingMessage } from "node:http";
import express from "express";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { FixedLimit, Limiter, Queue, criticality } from "@tideward/concurrency";
import { admit, admitFetch } from "@tideward/guard";
import type { Admission } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import { deferred, until } from "./support/promises";
import type { Deferred } from "./support/promises";
import { closeServers, listen, serveFetch } from "./support/servers";

afterEach(closeServers);

/** A door the /hang route waits at until the test opens it (`resolve`). */
type Door = Deferred<void>;

type Priority = (header: string | undefined) => number | string | undefined;

/** The priority a request names in its `x-priority` field; `boom` throws. */
const fromHeader: Priority = (value) => {
  if (value === "boom") throw new Error("priority failed");
  return value === undefined ? undefined : /^\d+$/.test(value) ? Number(value) : value;
};

async function nodeHttp(a: Admission, door: Door): Promise<string> {
  const middleware = admitNode(a, {
    priority: (req: IncomingMessage) => fromHeader(req.headers["x-priority"] as string),
  });
  return listen(
    createServer((req, res) =>
      middleware(req, res, (error?: unknown) => {
        if (error !== undefined) return void res.writeHead(500).end((error as Error).message);
        if (req.url === "/hang") void door.promise.then(() => res.end("late"));
        else res.end("ok");
      }),
    ),
  );
}

async function express5(a: Admission, door: Door): Promise<string> {
  const app = express();
  app.set("env", "test");
  app.use(admitNode(a, { priority: (req) => fromHeader(req.headers["x-priority"] as string) }));
  app.get("/ok", (_req, res) => void res.send("ok"));
  app.get("/hang", async (_req, res) => {
    await door.promise;
    res.send("late");
  });
  return listen(createServer(app));
}

async function hono(a: Admission, door: Door): Promise<string> {
  const app = new Hono();
  app.get("/ok", (c) => c.text("ok"));
  app.get("/hang", async (c) => {
    await door.promise;
    return c.text("late");
  });
  const handler = admitFetch(a, app.fetch, {
    priority: (request) => fromHeader(request.headers.get("x-priority") ?? undefined),
  });
  return listen(await serveFetch(handler));
}

describe.each([
  ["node:http", nodeHttp],
  ["Express 5", express5],
  ["Hono 4", hono],
] as const)("%s", (_name, start) => {
  it("a request the limit refuses waits for a place, is served when one frees, and leaves the line when its client aborts", async () => {
    const limiter = new Limiter(new FixedLimit(1));
    const a = admit({ limit: limiter, wait: new Queue({ interval: 5_000, target: 5_000 }) });
    const door = deferred<void>();
    const url = await start(a, door);
    const hanging = fetch(`${url}/hang`);
    await until(() => limiter.flying === 1);
    const waiting = fetch(`${url}/ok`);
    await until(() => a.waiting === 1);
    // A second waiter whose client gives up: out of line, nothing held.
    const controller = new AbortController();
    const abandoned = fetch(`${url}/ok`, { signal: controller.signal }).catch((e: unknown) => e);
    await until(() => a.waiting === 2);
    controller.abort();
    await abandoned;
    await until(() => a.waiting === 1);
    expect(limiter.flying).toBe(1);
    door.resolve();
    expect(await (await hanging).text()).toBe("late");
    const served = await waiting;
    expect([served.status, await served.text()]).toEqual([200, "ok"]);
    await until(() => limiter.flying === 0 && a.waiting === 0);
  });

  it("a request the queue gives up on is answered 503 with Retry-After", async () => {
    const limiter = new Limiter(new FixedLimit(1));
    const a = admit({ limit: limiter, wait: new Queue({ interval: 30, target: 5 }), busyRetryAfter: 3_000 });
    const door = deferred<void>();
    const url = await start(a, door);
    const hanging = fetch(`${url}/hang`);
    await until(() => limiter.flying === 1);
    const refused = await fetch(`${url}/ok`);
    expect([refused.status, refused.headers.get("retry-after")]).toEqual([503, "3"]);
    expect(a.waiting).toBe(0);
    door.resolve();
    await (await hanging).text();
    await until(() => limiter.flying === 0);
  });

  it("priority(req): sheddable requests stop at their share (503), critical ones go on; a throwing priority takes nothing", async () => {
    const limiter = new Limiter(new FixedLimit(2), { priorities: criticality });
    const a = admit({ limit: limiter });
    const door = deferred<void>();
    const url = await start(a, door);
    const first = fetch(`${url}/hang`, { headers: { "x-priority": "sheddable" } });
    await until(() => limiter.flying === 1);
    const refused = await fetch(`${url}/ok`, { headers: { "x-priority": "sheddable" } });
    expect(refused.status).toBe(503);
    const critical = await fetch(`${url}/ok`, { headers: { "x-priority": "0" } });
    expect([critical.status, await critical.text()]).toEqual([200, "ok"]);
    const boom = await fetch(`${url}/ok`, { headers: { "x-priority": "boom" } });
    expect(boom.status).toBe(500);
    await boom.text();
    expect(limiter.flying).toBe(1);
    door.resolve();
    await (await first).text();
    await until(() => limiter.flying === 0);
  });
});
