// The suite's Redis: started per test file on a free loopback port, stopped by its own pid.
// Without redis-server installed the suite skips, saying how to install it; under CI it fails.
import Redis from "ioredis";
import type { RedisOptions } from "ioredis";
import { createClient } from "redis";
import { afterAll, beforeAll, describe } from "vitest";
import { ioredisClient, nodeRedisClient } from "@tideward/redis";
import type { ScriptClient } from "@tideward/redis";
import { INSTALL_HINT, findRedisServer, startRedis } from "@tideward/redis/testing";
import type { RedisServer } from "@tideward/redis/testing";

export const available = findRedisServer() !== undefined;
if (!available) {
  if (process.env.CI === "true") throw new Error(`CI=true and ${INSTALL_HINT} (.ci/apt-packages lists it)`);
  console.warn(`@tideward/redis tests skipped: ${INSTALL_HINT}`);
}

/** `describe` when redis-server is installed, else a skip that says why. */
export const withRedis = available ? describe : describe.skip;

/** Options every ioredis client of the suite is made with: no offline queue, no resend. */
export const safe: RedisOptions = {
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  lazyConnect: true,
};

/** A real ioredis client that never connects (port 1): every call finds the connection down. */
export function disconnected(): Redis {
  const r = new Redis({ host: "127.0.0.1", port: 1, ...safe });
  r.on("error", () => undefined);
  return r;
}

/** A connected ioredis client (disconnected in afterAll by {@link useRedis}). */
export async function connectIoredis(port: number, extra: RedisOptions = {}): Promise<Redis> {
  const redis = new Redis({ host: "127.0.0.1", port, ...safe, ...extra });
  await redis.connect();
  return redis;
}

/** A connected node-redis client. */
export async function connectNodeRedis(port: number) {
  const client = createClient({
    url: `redis://127.0.0.1:${port}`,
    disableOfflineQueue: true,
    socket: { reconnectStrategy: 50 },
  });
  client.on("error", () => undefined);
  await client.connect();
  return client;
}

export type NodeRedis = Awaited<ReturnType<typeof connectNodeRedis>>;

/** Starts a server for the file and gives a way to make clients; all are closed after. */
export function useRedis(): {
  server: () => RedisServer;
  ioredis: (extra?: RedisOptions) => Promise<ScriptClient>;
  raw: (extra?: RedisOptions) => Promise<Redis>;
  nodeRedis: (port?: number) => Promise<ScriptClient>;
} {
  let server: RedisServer | undefined;
  const clients: (Redis | NodeRedis)[] = [];
  beforeAll(async () => {
    server = await startRedis();
  }, 20_000);
  afterAll(async () => {
    for (const c of clients) {
      try {
        if (c instanceof Redis) c.disconnect();
        else await c.close();
      } catch {
        // already closed
      }
    }
    await server?.stop();
  });
  const get = (): RedisServer => {
    if (server === undefined) throw new Error("the server has not started");
    return server;
  };
  const raw = async (extra?: RedisOptions): Promise<Redis> => {
    const r = await connectIoredis(get().port, extra);
    r.on("error", () => undefined);
    clients.push(r);
    return r;
  };
  return {
    server: get,
    raw,
    ioredis: async (extra) => ioredisClient(await raw(extra)),
    nodeRedis: async (port) => {
      const c = await connectNodeRedis(port ?? get().port);
      clients.push(c);
      return nodeRedisClient(c);
    },
  };
}

/** What `act` throws, awaited: its class's name and its message; "no error" when it throws none. */
export async function thrown(act: () => unknown): Promise<unknown> {
  try {
    await act();
    return "no error";
  } catch (error) {
    return [(error as Error).constructor.name, (error as Error).message];
  }
}

/**
 * A per-call timeout for tests that are not about timeouts: on a loaded machine (verify runs
 * every package at once) the default 250 ms can pass, and the outage mode would answer.
 */
export const patient = { timeout: 5_000 } as const;

/**
 * The policy of a test on a simulated clock: {@link patient}, with keys kept an hour past when
 * their state would be a fresh key's. Redis expires a key on its own clock while the state runs on
 * the caller's, and on a loaded machine more real time than the default margin (1 s) can pass
 * between two calls a simulated millisecond apart: Redis forgot a key the caller's clock still
 * held, and a crosscheck read 6 remaining where the in-process engine rightly had 2.
 */
export const simulated = { ...patient, expiryMargin: 3_600_000 } as const;

/**
 * The instant a token bucket of one number's raw value says it is full again (ms): a decimal
 * integer of 2^-12 ms, or "d" and the double's 8 bytes; undefined for any other value.
 */
export function fullAtOf(state: Buffer): number | undefined {
  const text = state.toString("latin1");
  if (/^-?\d+$/.test(text)) return Number(text) / 4096;
  if (state.length === 9 && state[0] === 0x64) return state.readDoubleLE(1);
  return undefined;
}

/**
 * The tokens a quota-engine bucket's raw state holds at `at` (ms), or undefined when the key is
 * absent: a bucket of one number (the instant it is full again) lacks what refills from `at`
 * until then; one of two numbers holds its first double, the tokens as counted (what refilled
 * since is left out: these tests refill a unit an hour).
 */
export function bucketTokens(
  state: Buffer | null,
  spec: { readonly capacity: number; readonly refill: number; readonly window: number },
  at: number,
): number | undefined {
  if (state === null) return undefined;
  const full = fullAtOf(state);
  if (full !== undefined) return spec.capacity - Math.max(full - at, 0) / (spec.window / spec.refill);
  return state.readDoubleLE(0);
}
