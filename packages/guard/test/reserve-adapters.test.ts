// Reserve, then settle after the response, through real servers — node:http, Express 5 and
// Hono 4 (admitFetch on @hono/node-server) — against the in-process engine and a real
// redis-server through @tideward/redis: the estimate (the request's max tokens) reserved at
// admission, the actual read once the response is done — off a header (node:http), the body's usage
// field left in res.locals (Express) or read from the response's clone (Hono) — and every other ending
// (a settle function that throws, a handler that fails, a client that leaves) settled as
// reserved, no reservation left open.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import express from "express";
import { Hono } from "hono";
import Redis from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admit, admitFetch } from "@tideward/guard";
import type { Actual, Admission } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import type { ActualCost, ReservationStore, SettleResult } from "@tideward/quota-engine";
import { RedisQuotaEngine, ioredisClient } from "@tideward/redis";
import { INSTALL_HINT, findRedisServer, startRedis } from "@tideward/redis/testing";
import type { RedisServer } from "@tideward/redis/testing";
import { until } from "./support/promises";
import { listening, serveFetch } from "./support/servers";
import type { Listening } from "./support/servers";

const tenant = new QuotaKey("acme", "*", "chat");
const tokens = limitSpec({ name: "tokens", capacity: 1_000, refill: 1, window: 3_600_000 });

/** A store whose reservations are watched: the ids it made, and the settles and cancels answered. */
function watched(store: ReservationStore) {
  const ids: string[] = [];
  const answered: SettleResult[] = [];
  const s = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  const record = (r: unknown): unknown => {
    if (r instanceof Promise) return r.then((x: SettleResult) => (answered.push(x), x));
    answered.push(r as SettleResult);
    return r;
  };
  const wrapped = {
    limit: (name: string) => store.limit(name),
    checkAtomic: (...a: unknown[]) => s.checkAtomic.apply(store, a),
    reserve: (...a: unknown[]) => {
      const r = s.reserve.apply(store, a);
      const keep = (x: { id: string; code: string }) => {
        if (x.code === "reserved") ids.push(x.id);
        return x;
      };
      return r instanceof Promise ? r.then(keep) : keep(r as { id: string; code: string });
    },
    settle: (...a: unknown[]) => record(s.settle.apply(store, a)),
    cancel: (...a: unknown[]) => record(s.cancel.apply(store, a)),
  } as unknown as ReservationStore;
  return { store: wrapped, ids, answered };
}

type Serve = (admission: Admission) => Promise<Listening>;

const maxTokens = (value: string | string[] | null | undefined) => Number(value ?? 1);
const usage = (value: unknown): Actual =>
  value === undefined || value === null ? undefined : { tokens: Number(value) };

/** The actual units off the response's header; throws for a request that asks it to. */
function nodeActual(req: IncomingMessage, res: ServerResponse): ActualCost | undefined {
  if (req.headers["x-throw"] !== undefined) throw new Error("the usage could not be read");
  return usage(res.getHeader("x-usage-tokens"));
}

const servers: readonly (readonly [string, Serve])[] = [
  [
    "node:http",
    (a) => {
      const middleware = admitNode(a, {
        cost: (req) => maxTokens(req.headers["x-max-tokens"]),
        actual: nodeActual,
      });
      return listening(
        createServer((req, res) =>
          middleware(req, res, () => {
            if (req.url === "/hang") return;
            if (req.url === "/boom") {
              res.statusCode = 500;
              res.end("boom");
              return;
            }
            res.setHeader("x-usage-tokens", "300");
            res.end("ok");
          }),
        ),
      );
    },
  ],
  [
    "Express 5",
    (a) => {
      const app = express();
      app.set("env", "test");
      // The body's usage field, left in res.locals by the handler that sent it.
      const fromLocals = (req: IncomingMessage, res: ServerResponse): Actual => {
        if (req.headers["x-throw"] !== undefined) throw new Error("the usage could not be read");
        return usage((res as unknown as express.Response).locals.usage);
      };
      app.use(admitNode(a, { cost: (req) => maxTokens(req.headers["x-max-tokens"]), actual: fromLocals }));
      app.get("/ok", (_req, res) => {
        const body = { text: "ok", usage: { total_tokens: 300 } };
        res.locals.usage = body.usage.total_tokens;
        res.json(body);
      });
      app.get("/boom", () => {
        throw new Error("handler failed");
      });
      app.get("/hang", () => undefined);
      return listening(createServer(app));
    },
  ],
  [
    "Hono 4",
    async (a) => {
      const app = new Hono();
      app.onError((_e, c) => c.text("handler failed", 500));
      app.get("/ok", (c) => c.json({ text: "ok", usage: { total_tokens: 300 } }));
      app.get("/boom", () => {
        throw new Error("handler failed");
      });
      app.get("/hang", () => new Promise<Response>(() => undefined));
      const handler = admitFetch(a, app.fetch, {
        cost: (request) => maxTokens(request.headers.get("x-max-tokens")),
        // The body's usage field, read from a clone: the response itself goes to the client.
        actual: async (response, request) => {
          if (request.headers.has("x-throw")) throw new Error("the usage could not be read");
          if (response.status >= 400) return undefined;
          const body = (await response.clone().json()) as { usage: { total_tokens: number } };
          return usage(body.usage.total_tokens);
        },
      });
      return listening(await serveFetch(handler));
    },
  ],
];

/** What the engines hold, read the same way for both: units left for the tenant now. */
type Engine = { store: ReservationStore; left: () => Promise<number> };

function suite(engine: () => Promise<Engine>): void {
  it.each(servers)(
    "%s: the actual settles the estimate; a throwing settle function, a failed handler and a client that leaves settle as reserved",
    async (_name, start) => {
      const { store, left } = await engine();
      const w = watched(store);
      const admission = admit({
        gate: 8,
        quota: { store: w.store, charges: (_key, cost) => [charge(tenant, "tokens", cost)], reserve: { ttl: 60_000 } },
      });
      const { url, close } = await start(admission);
      try {
        const ask = async (path: string, headers: Record<string, string>) => {
          const res = await fetch(`${url}${path}`, { headers: { "x-max-tokens": "200", ...headers } });
          await res.text();
          return res.status;
        };
        expect(await ask("/ok", {})).toBe(200);
        await until(() => w.answered.length === 1);
        expect(await left()).toBe(700); // 200 reserved, 300 used: topped up by 100
        expect(await ask("/ok", { "x-throw": "1" })).toBe(200);
        await until(() => w.answered.length === 2);
        expect(await left()).toBe(500);
        expect(await ask("/boom", {})).toBe(500);
        await until(() => w.answered.length === 3);
        expect(await left()).toBe(300);
        const leaving = new AbortController();
        const hung = fetch(`${url}/hang`, { headers: { "x-max-tokens": "100" }, signal: leaving.signal }).catch(
          () => "aborted",
        );
        // Admitted, its reservation made, before the client leaves: a client that leaves while the
        // store has not answered cancels it instead (a busy machine's Redis can take that long).
        await until(() => admission.gate?.held === 1 && w.ids.length === 4);
        leaving.abort();
        expect(await hung).toBe("aborted");
        await until(() => w.answered.length === 4);
        expect(await left()).toBe(200);
        await until(() => admission.gate?.held === 0);
        // Every reservation was settled, once: a settle now finds each closed.
        expect(w.ids).toHaveLength(4);
        expect(w.answered.map((r) => r.ok)).toEqual([true, true, true, true]);
        for (const id of w.ids) {
          const again = await store.settle(id, {}, Date.now());
          expect(again.ok ? "open" : again.code).toBe("already_settled");
        }
      } finally {
        await close();
      }
    },
  );
}

describe("reserve and settle through the adapters, in process", () => {
  suite(() => {
    const engine = new QuotaEngine();
    engine.addLimit(tokens);
    return Promise.resolve({
      store: engine,
      left: () =>
        Promise.resolve(engine.peekAtomic([charge(tenant, "tokens", 1)], Date.now()).decisions[0].remaining + 1),
    });
  });
});

const available = findRedisServer() !== undefined;
if (!available && process.env.CI === "true") throw new Error(`CI=true and ${INSTALL_HINT}`);

(available ? describe : describe.skip)("reserve and settle through the adapters, on a real Redis", () => {
  let server: RedisServer | undefined;
  let redis: Redis | undefined;
  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis({
      host: "127.0.0.1",
      port: server.port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
    });
    await redis.connect();
  }, 20_000);
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });
  let n = 0;
  suite(async () => {
    const engine = new RedisQuotaEngine(ioredisClient(redis as Redis), { prefix: `admit${n++}:`, timeout: 5_000 });
    await engine.addLimit(tokens);
    return {
      store: engine,
      left: async () => (await engine.peekAtomic([charge(tenant, "tokens", 1)], Date.now())).decisions[0].remaining + 1,
    };
  });
});
