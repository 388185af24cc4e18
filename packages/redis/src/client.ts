// The narrow client interface tideward needs from Redis, and adapters for ioredis and node-redis.
// The client is the user's (a peer dependency); nothing here imports either library, so the
// structural types below are all a caller's bundle pays for.
import { check } from "@tideward/time/internal";

/**
 * The three things tideward asks of a Redis connection: run a loaded script, run a script by its
 * text, and say whether a command sent now would go out at once. Any client fits; use
 * {@link ioredisClient} or {@link nodeRedisClient} for the two common ones.
 *
 * Both `evalsha` and `eval` resolve with the script's reply, a bulk string **as bytes** (a
 * `Buffer` or `Uint8Array`: the scripts answer state as binary doubles, which decoding as UTF-8
 * would corrupt), and reject with the server's error (a message starting `NOSCRIPT` when the SHA
 * is not loaded) or a connection error.
 */
export interface ScriptClient {
  /** `EVALSHA sha numkeys ...keys ...args`. */
  evalsha(sha: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /** `EVAL source numkeys ...keys ...args`. */
  eval(source: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /**
   * Whether the connection is up and a command sent now is written at once. While it is false
   * tideward sends nothing (so a client's offline queue can never replay a charge later) and
   * answers from the outage mode.
   */
  ready(): boolean;
}

/** The part of an ioredis `Redis` or `Cluster` an adapter uses. */
export interface IoredisLike {
  readonly status: string;
  /** A `Redis` connection's socket (a `Cluster` has none). */
  readonly stream?: unknown;
  readonly options: {
    readonly enableOfflineQueue?: boolean;
    readonly autoResendUnfulfilledCommands?: boolean;
    readonly redisOptions?: { readonly autoResendUnfulfilledCommands?: boolean };
  };
  evalsha(sha: string, numkeys: number, ...args: string[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: string[]): Promise<unknown>;
}

// ioredis makes a `…Buffer` twin of every command (replies as bytes, not decoded as UTF-8); its
// types declare only some of them, so the adapter reaches these two through this shape.
// Arrays among a command's arguments are flattened by ioredis (one level), so keys and arguments
// go as they are, with no spread into a copy.
interface IoredisBuffers {
  evalshaBuffer(sha: string, numkeys: number, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  evalBuffer(script: string, numkeys: number, keys: readonly string[], args: readonly string[]): Promise<unknown>;
}

/** The part of a node-redis (`redis` 5 or 6) client an adapter uses. */
export interface NodeRedisLike {
  readonly isReady: boolean;
  readonly options?: { readonly disableOfflineQueue?: boolean } | undefined;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** node-redis 5 and 6: the same client answering bulk strings as the types mapped (36, `$`, to Buffer). */
  withTypeMapping(mapping: Record<number, unknown>): Pick<NodeRedisLike, "evalSha" | "eval">;
}

/** RESP's bulk-string type, `$`, as node-redis's type mappings name it. */
const BLOB_STRING = 36;

/** Options of {@link ioredisClient}. */
export interface IoredisClientOptions {
  /**
   * Script calls made in one turn of the event loop leave together, eight to a write: the
   * connection's socket is corked at the first, uncorked after every eighth and once the turn's
   * callbacks have run (`process.nextTick`), much as node-redis does for every command. Each call
   * is still its own command and reply; what is saved is a system call per command, about a
   * third of a call's client-side cost here. (A whole turn in one write measured slower: Redis
   * then idles until the client has answered every reply of the last one.) The socket is the
   * connection's, so other commands sent in that turn leave with them. A `Cluster` writes per
   * node and is never corked. @defaultValue true
   */
  readonly coalesce?: boolean;
}

interface Corkable {
  cork(): void;
  uncork(): void;
}

/** Script calls a corked socket holds before it is flushed (measured: 4 to 16 alike, 50 worse). */
const CHUNK = 8;

/**
 * Adapts an ioredis `Redis` (or `Cluster`) to {@link ScriptClient}.
 *
 * The client must not replay a command on its own: create it with
 * `{ enableOfflineQueue: false, autoResendUnfulfilledCommands: false }` (for a `Cluster`, the
 * first in its options and the second in `redisOptions`). A command that was written before a
 * connection dropped may have run; resent after a reconnect it would charge twice. Leave
 * `enableAutoPipelining` off unless you measured it (it halved script throughput here: it keeps
 * one pipeline in flight at a time); {@link IoredisClientOptions.coalesce} saves the writes
 * without waiting on replies.
 *
 * @param options - read once; an unknown option is a `TypeError` naming the closest known one
 * @throws TypeError when the client would queue or resend commands, naming the option
 */
export function ioredisClient(redis: IoredisLike, options?: IoredisClientOptions): ScriptClient {
  const given = check.options(options, ["coalesce"], "ioredisClient");
  const coalesce = given.coalesce ?? true;
  if (typeof coalesce !== "boolean")
    throw new TypeError(`ioredisClient coalesce must be a boolean, got ${typeof coalesce} ${check.describe(coalesce)}`);
  const buffers = redis as unknown as IoredisBuffers;
  if (
    redis === null ||
    typeof redis !== "object" ||
    typeof buffers.evalshaBuffer !== "function" ||
    typeof buffers.evalBuffer !== "function"
  ) {
    throw new TypeError(`ioredisClient needs an ioredis Redis or Cluster, got ${describe(redis)}`);
  }
  const settings = redis.options;
  if (settings.enableOfflineQueue !== false) {
    throw new TypeError(
      "ioredisClient needs a client created with enableOfflineQueue: false (a queued charge could run after tideward has already answered without it)",
    );
  }
  const resend =
    settings.redisOptions === undefined
      ? settings.autoResendUnfulfilledCommands
      : settings.redisOptions.autoResendUnfulfilledCommands;
  if (resend !== false) {
    throw new TypeError(
      "ioredisClient needs a client created with autoResendUnfulfilledCommands: false (a charge in flight when the connection dropped would run twice)",
    );
  }
  // The socket corked in this turn, uncorked (that one, even if the connection has changed since)
  // once the turn's callbacks have run: process.nextTick runs after every promise continuation
  // queued so far, so the calls those continuations make leave in the same write.
  let corked: Corkable | undefined;
  let held = 0;
  const flush = (): void => {
    const socket = corked;
    corked = undefined;
    held = 0;
    socket?.uncork();
  };
  const cork = (): void => {
    const socket = redis.stream as Partial<Corkable> | undefined;
    if (socket === undefined || socket === null || typeof socket.cork !== "function") return;
    socket.cork();
    corked = socket as Corkable;
    process.nextTick(flush);
  };
  return {
    // The Buffer forms: bulk strings come back as bytes, not decoded as UTF-8.
    evalsha: (sha, keys, args) => {
      if (coalesce && corked === undefined) cork();
      const reply = buffers.evalshaBuffer(sha, keys.length, keys, args);
      if (corked !== undefined && ++held === CHUNK) {
        // Out with these eight now, so Redis starts on them while this turn goes on.
        held = 0;
        corked.uncork();
        corked.cork();
      }
      return reply;
    },
    eval: (source, keys, args) => buffers.evalBuffer(source, keys.length, keys, args),
    ready: () => redis.status === "ready",
  };
}

/**
 * Adapts a node-redis client (`createClient` of `redis` 5 or 6) to {@link ScriptClient}.
 *
 * Create it with `{ disableOfflineQueue: true }`, so that nothing sent while the connection is
 * down waits to be replayed after tideward has answered without it.
 *
 * @throws TypeError when the client keeps an offline queue
 */
export function nodeRedisClient(client: NodeRedisLike): ScriptClient {
  if (
    client === null ||
    typeof client !== "object" ||
    typeof client.evalSha !== "function" ||
    typeof client.withTypeMapping !== "function"
  ) {
    throw new TypeError(`nodeRedisClient needs a node-redis client (redis 5 or 6), got ${describe(client)}`);
  }
  if (client.options?.disableOfflineQueue !== true) {
    throw new TypeError(
      "nodeRedisClient needs a client created with disableOfflineQueue: true (a queued charge could run after tideward has already answered without it)",
    );
  }
  // The same connection, answering bulk strings as Buffers rather than decoding them as UTF-8.
  const bytes = client.withTypeMapping({ [BLOB_STRING]: Buffer });
  return {
    evalsha: (sha, keys, args) => bytes.evalSha(sha, { keys: keys as string[], arguments: args as string[] }),
    eval: (source, keys, args) => bytes.eval(source, { keys: keys as string[], arguments: args as string[] }),
    ready: () => client.isReady,
  };
}

function describe(value: unknown): string {
  return value === null ? "null" : typeof value === "object" ? "an object without the script commands" : typeof value;
}
