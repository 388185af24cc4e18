// Real Redis servers for tests: started on free loopback ports with no persistence in a temp dir,
// stopped by their own process ids. For this package's tests and for yours.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

// Servers this process started and has not stopped: killed when it exits, so a test or an example
// that throws before its stop() leaves no redis-server behind.
const running = new Map<ChildProcess, string>();
let reaping = false;
function reapOnExit(): void {
  if (reaping) return;
  reaping = true;
  process.once("exit", () => {
    for (const [child, dir] of running) {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** Where `redis-server` is on the PATH, or undefined when it is not installed. */
export function findRedisServer(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const file = join(dir, "redis-server");
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** How to get `redis-server`, for a skip message. */
export const INSTALL_HINT =
  "redis-server is not installed: `apt-get install -y redis-server` (Debian/Ubuntu) or `brew install redis`";

/** A free TCP port on 127.0.0.1 (asked of the OS, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Sends one command to a Redis on `port` over a fresh connection and resolves with its reply as
 * text (an error reply rejects). Enough for administration in tests: PING, INFO, CONFIG SET,
 * CLIENT PAUSE, SCRIPT FLUSH, REPLICAOF, DEBUG SLEEP.
 */
export function command(port: number, ...args: readonly (string | number)[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let data = "";
    const fail = (error: Error): void => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(30_000, () => fail(new Error(`redis on port ${port} did not answer ${String(args[0])}`)));
    socket.on("error", fail);
    socket.on("connect", () => {
      socket.write(
        `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(String(a))}\r\n${String(a)}\r\n`).join("")}`,
      );
    });
    socket.on("data", (chunk) => {
      data += chunk.toString("utf8");
      const reply = parse(data);
      if (reply === undefined) return;
      socket.end();
      if (reply.error) reject(new Error(reply.text));
      else resolve(reply.text);
    });
  });
}

// A single RESP reply (simple, error, integer, bulk, or an array flattened to lines), or undefined if incomplete.
function parse(data: string): { text: string; error: boolean } | undefined {
  const end = data.indexOf("\r\n");
  if (end < 0) return undefined;
  const type = data[0];
  const head = data.slice(1, end);
  if (type === "+" || type === ":") return { text: head, error: false };
  if (type === "-") return { text: head, error: true };
  if (type === "$") {
    const length = Number(head);
    if (length < 0) return { text: "", error: false };
    const body = Buffer.from(data.slice(end + 2), "utf8");
    if (body.length < length + 2) return undefined;
    return { text: body.subarray(0, length).toString("utf8"), error: false };
  }
  if (type === "*") {
    const count = Number(head);
    const lines: string[] = [];
    let rest = data.slice(end + 2);
    for (let i = 0; i < count; i++) {
      const item = parse(rest);
      if (item === undefined) return undefined;
      lines.push(item.text);
      const size =
        rest[0] === "$" ? rest.indexOf("\r\n") + 2 + Buffer.byteLength(item.text) + 2 : rest.indexOf("\r\n") + 2;
      rest = rest.slice(size);
    }
    return { text: lines.join("\n"), error: false };
  }
  return { text: data, error: true };
}

async function until(what: string, ok: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await ok().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A `redis-server` this process started. */
export interface RedisServer {
  /** Its loopback port. */
  readonly port: number;
  /** `redis://127.0.0.1:port`. */
  readonly url: string;
  /** The process id of the running server (changes on {@link RedisServer.restart}). */
  readonly pid: number | undefined;
  /** Sends one command (see {@link command}). */
  command(...args: readonly (string | number)[]): Promise<string>;
  /** Kills it with SIGKILL (a crash) and waits for it to be gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port (after {@link RedisServer.kill}) and waits until it answers. */
  restart(): Promise<void>;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

/** Options of {@link startRedis}. */
export interface StartOptions {
  /** Extra `redis-server` arguments, such as `["--cluster-enabled", "yes"]`. */
  readonly args?: readonly string[];
  /** The port; a free one by default. */
  readonly port?: number;
}

/**
 * The `redis-server` arguments {@link startRedis} starts it with: on `port` of 127.0.0.1, with no
 * persistence (`--save ''`, no AOF), in `dir`, in the foreground, logging warnings only. For a
 * server started another way (under valgrind, say) as the tests start theirs.
 */
export function serverArgs(port: number, dir: string): string[] {
  return [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
    "--daemonize",
    "no",
    "--loglevel",
    "warning",
  ];
}

/**
 * Starts `redis-server` on a free loopback port with no persistence (`--save ''`, no AOF) in a
 * temporary directory, and resolves once it answers PING.
 *
 * @throws Error when `redis-server` is not installed (see {@link findRedisServer}) or does not start
 */
export async function startRedis(options: StartOptions = {}): Promise<RedisServer> {
  const binary = findRedisServer();
  if (binary === undefined) throw new Error(INSTALL_HINT);
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "tideward-redis-"));
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    const started = spawn(binary, [...serverArgs(port, dir), ...(options.args ?? [])], { stdio: "ignore" });
    child = started;
    reapOnExit();
    running.set(started, dir);
    const exited = new Promise<never>((_, reject) =>
      started.once("exit", (code) => {
        running.delete(started);
        reject(new Error(`redis-server on port ${port} exited with ${code}`));
      }),
    );
    exited.catch(() => undefined);
    try {
      await Promise.race([
        until(`redis-server on port ${port}`, async () => (await command(port, "PING")) === "PONG", 10_000),
        exited,
      ]);
    } catch (error) {
      // A server that never answered is not left running.
      await gone("SIGKILL");
      throw error;
    }
  };
  const gone = async (signal: NodeJS.Signals): Promise<void> => {
    const c = child;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once("exit", () => resolve());
      c.kill(signal);
    });
  };
  try {
    await launch();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return child?.pid;
    },
    command: (...args) => command(port, ...args),
    kill: () => gone("SIGKILL"),
    restart: launch,
    stop: async () => {
      await gone("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Redis Cluster of three masters this process started. */
export interface RedisCluster {
  /** The nodes, each a {@link RedisServer}. */
  readonly nodes: readonly RedisServer[];
  /** Stops every node. */
  stop(): Promise<void>;
}

/**
 * Starts a three-master Redis Cluster on free loopback ports (`redis-cli --cluster create`) and
 * resolves once it reports `cluster_state:ok`.
 */
export async function startCluster(size = 3): Promise<RedisCluster> {
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < size; i++) {
      const port = await freePort();
      nodes.push(
        await startRedis({
          port,
          args: [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            `nodes-${port}.conf`,
            "--cluster-node-timeout",
            "2000",
          ],
        }),
      );
    }
    const created = spawnSync(
      "redis-cli",
      ["--cluster", "create", ...nodes.map((n) => `127.0.0.1:${n.port}`), "--cluster-yes"],
      { encoding: "utf8", timeout: 30_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    for (const node of nodes)
      await until(
        "cluster_state:ok",
        async () => (await node.command("CLUSTER", "INFO")).includes("cluster_state:ok"),
        20_000,
      );
  } catch (error) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw error;
  }
  return { nodes, stop: async () => void (await Promise.all(nodes.map((n) => n.stop()))) };
}

/** A loopback TCP proxy in front of a Redis, whose replies can be delayed or held back. */
export interface SlowProxy {
  /** The proxy's loopback port: point a client here. */
  readonly port: number;
  /** Milliseconds every reply from Redis waits before it is passed on (0 by default). */
  delay: number;
  /** Holds every reply from now on (commands still reach Redis and run) until {@link SlowProxy.release}. */
  hold(): void;
  /** Passes on the replies held back, and every later one. */
  release(): void;
  /** Closes the proxy and every connection through it. */
  stop(): Promise<void>;
}

/**
 * Starts a proxy on a free loopback port that forwards to the Redis on `target`: commands pass
 * at once, replies after {@link SlowProxy.delay} ms, or not at all while held. This is how the
 * tests make a script commit and its answer come too late (a lost reply), and how the bench
 * measures a slow Redis.
 */
export async function startProxy(target: number): Promise<SlowProxy> {
  const sockets = new Set<Socket>();
  let held = false;
  const waiting: (() => void)[] = [];
  const server = createServer((client) => {
    const upstream = createConnection({ host: "127.0.0.1", port: target });
    sockets.add(client);
    sockets.add(upstream);
    client.on("data", (chunk) => upstream.write(chunk));
    upstream.on("data", (chunk) => {
      const pass = (): void => {
        if (!client.destroyed) client.write(chunk);
      };
      const later = (): void => {
        if (proxy.delay > 0) setTimeout(pass, proxy.delay);
        else pass();
      };
      if (held) waiting.push(later);
      else later();
    });
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", close);
    upstream.on("close", close);
    client.on("error", close);
    upstream.on("error", close);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const proxy: SlowProxy = {
    port: typeof address === "object" && address !== null ? address.port : 0,
    delay: 0,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      for (const f of waiting.splice(0)) f();
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  return proxy;
}
