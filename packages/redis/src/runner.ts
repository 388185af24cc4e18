// Runs a script on Redis behind a breaker and a per-call timeout: EVALSHA first, EVAL when the
// server answers NOSCRIPT (after a failover, a restart or SCRIPT FLUSH). Says what happened in
// terms a caller can act on: answered, never sent, or sent with no answer (may have run).
import { Breaker } from "@tideward/breaker";
import type { Permit, Sre } from "@tideward/breaker";
import type { ScriptClient } from "./client";
import type { LuaScript } from "./scripts";

/** The script answered. */
export const ANSWERED = 0;
/** Nothing was sent: the breaker refused the call, or the connection was down. */
export const UNSENT = 1;
/** Sent, and no answer in time or the connection dropped: the script may have run. */
export const UNKNOWN = 2;
/** The server answered with an error (busy, loading, read-only, ...): the script did not run. */
export const FAILED = 3;

export type Status = typeof ANSWERED | typeof UNSENT | typeof UNKNOWN | typeof FAILED;

/** What one script call came to. */
export interface Outcome {
  readonly status: Status;
  /** The script's reply when answered. */
  readonly reply: unknown;
  /** The error behind any other status, if there was one (a breaker refusal has none). */
  readonly error: unknown;
}

const REPLY_ERROR =
  /^(NOSCRIPT|ERR|BUSY|LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|OOM|MOVED|ASK|CROSSSLOT|NOPERM|NOAUTH|WRONGTYPE|NOREPLICAS|MISCONF)\b/;

function messageOf(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : String(error);
  } catch {
    return "an error that cannot be read";
  }
}

/** Whether `error` is the server's error reply, so the command did not run (or failed in full). */
export function isReplyError(error: unknown): boolean {
  return REPLY_ERROR.test(messageOf(error));
}

/**
 * A script error: a bug, a bad argument or a key holding another type (WRONGTYPE, a command of
 * the script on someone else's key), never an outage; thrown to the caller.
 */
function isScriptError(error: unknown): boolean {
  const message = messageOf(error);
  return (
    message.startsWith("WRONGTYPE") ||
    (message.startsWith("ERR") &&
      (message.includes("user_script") || message.includes("Error running script") || message.includes("Lua")))
  );
}

/** Thrown when a script fails on the server: a bug or a bad argument, never an outage. */
export class ScriptError extends Error {
  override readonly name = "ScriptError";
  constructor(script: string, cause: unknown) {
    super(`[tideward] [redis] script ${script} failed: ${messageOf(cause)}`, { cause });
  }
}

// One call in flight, and its outcome once settled: settled once, by the reply, the error or the
// timer, whichever is first (the promise resolves with the flight itself: no outcome object).
class Flight implements Outcome {
  done = false;
  status: Status = UNSENT;
  reply: unknown = undefined;
  error: unknown = undefined;
  constructor(
    readonly deadline: number,
    readonly permit: Permit,
    readonly resolve: (outcome: Outcome) => void,
    readonly clock: () => number,
  ) {}

  settle(status: Status, reply: unknown, error: unknown): void {
    if (this.done) return;
    this.done = true;
    this.status = status;
    this.reply = reply;
    this.error = error;
    const at = this.clock();
    if (status === ANSWERED) this.permit.pass(at);
    else this.permit.fail(at);
    this.resolve(this);
  }
}

/** Options of a {@link Runner}. */
export interface RunnerOptions {
  readonly timeout: number;
  readonly breaker: Partial<Sre>;
  readonly clock: () => number;
  readonly roll: () => number;
}

const TIMED_OUT = new Error("timed out");
const REFUSED: Outcome = Object.freeze({ status: UNSENT, reply: undefined, error: undefined });
const DOWN: Outcome = Object.freeze({ status: UNSENT, reply: undefined, error: new Error("connection not ready") });

/**
 * The one place a script call leaves the process. Calls in flight share one timer: they are
 * queued in the order sent, so with one timeout their deadlines are in order too, and a tick
 * settles the expired ones from the head (a timer per call would cost more than the call's
 * own bookkeeping).
 */
export class Runner {
  readonly breaker: Breaker;
  readonly #client: ScriptClient;
  readonly #timeout: number;
  readonly #clock: () => number;
  readonly #roll: () => number;
  readonly #queue: Flight[] = [];
  #head = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(client: ScriptClient, options: RunnerOptions) {
    this.#client = client;
    this.#timeout = options.timeout;
    const clock = options.clock;
    const roll = options.roll;
    // The user's clock and dice, read where a throw would escape (a reply's callback, the timer):
    // a clock that throws or answers other than a number stands still at its last good reading,
    // and a draw that throws counts as 0, as the breaker counts a draw that is not a number.
    let last = 0;
    this.#clock = () => {
      try {
        const t = clock();
        if (typeof t === "number" && t === t) last = t;
      } catch {
        // stands still
      }
      return last;
    };
    this.#roll = () => {
      try {
        return roll();
      } catch {
        return 0;
      }
    };
    this.breaker = new Breaker(options.breaker);
  }

  /** The policy's clock as read here: a reading that throws or is not a number stands still. */
  now(): number {
    return this.#clock();
  }

  /** Runs `script` with `keys` and `args`, never waiting longer than the timeout. */
  run(script: LuaScript, keys: readonly string[], args: readonly string[]): Promise<Outcome> {
    const now = this.#clock();
    const permit = this.breaker.allow(now, this.#roll);
    if (permit === undefined) return Promise.resolve(REFUSED);
    let ready: unknown;
    try {
      ready = this.#client.ready();
    } catch {
      ready = false;
    }
    if (ready !== true) {
      permit.fail(now);
      return Promise.resolve(DOWN);
    }
    let flight: Flight | undefined;
    const promise = new Promise<Outcome>((resolve) => {
      flight = new Flight(now + this.#timeout, permit, resolve, this.#clock);
    });
    const f = flight as unknown as Flight;
    this.#track(f);
    this.#send(f, script, keys, args, false);
    return promise;
  }

  // One send: EVALSHA, or (`again`) the EVAL after a NOSCRIPT, at most once a call: a server or
  // proxy that answers NOSCRIPT to EVAL too would otherwise be asked in a loop of rejections that
  // never yields to the timer.
  #send(f: Flight, script: LuaScript, keys: readonly string[], args: readonly string[], again: boolean): void {
    let reply: unknown;
    try {
      reply = again ? this.#client.eval(script.source, keys, args) : this.#client.evalsha(script.sha, keys, args);
    } catch (error) {
      // Thrown before anything could be written: not sent, the outage mode answers.
      f.settle(UNSENT, undefined, error);
      return;
    }
    if (reply === null || typeof (reply as PromiseLike<unknown> | undefined)?.then !== "function") {
      f.settle(UNSENT, undefined, new TypeError(`a ScriptClient must answer a promise, got ${typeof reply}`));
      return;
    }
    // Anonymous handlers, made once a call: the reply, or the error (NOSCRIPT retried with EVAL).
    (reply as PromiseLike<unknown>).then(
      (r) => f.settle(ANSWERED, r, undefined),
      (error) => this.#failed(f, script, keys, args, error, again),
    );
  }

  #failed(
    flight: Flight,
    script: LuaScript,
    keys: readonly string[],
    args: readonly string[],
    error: unknown,
    again: boolean,
  ): void {
    if (flight.done) return;
    if (!again && messageOf(error).startsWith("NOSCRIPT")) {
      // Not loaded there (a failover, a restart, SCRIPT FLUSH): nothing ran, so EVAL is safe.
      this.#send(flight, script, keys, args, true);
      return;
    }
    if (isScriptError(error)) {
      // A bug must be seen, not answered by the outage mode (nor counted against Redis).
      flight.done = true;
      flight.status = FAILED;
      flight.error = new ScriptError(script.name, error);
      flight.permit.pass(this.#clock());
      flight.resolve(flight);
      return;
    }
    flight.settle(isReplyError(error) ? FAILED : UNKNOWN, undefined, error);
  }

  #track(flight: Flight): void {
    this.#queue.push(flight);
    if (this.#timer === undefined) {
      const every = Math.max(1, Math.min(50, Math.floor(this.#timeout / 8)));
      this.#timer = setInterval(() => this.#tick(), every);
      this.#timer.unref();
    }
  }

  #tick(): void {
    const queue = this.#queue;
    const now = this.#clock();
    while (this.#head < queue.length) {
      const flight = queue[this.#head];
      if (!flight.done && flight.deadline > now) break;
      this.#head++;
      if (!flight.done) flight.settle(UNKNOWN, undefined, TIMED_OUT);
    }
    if (this.#head === queue.length) {
      queue.length = 0;
      this.#head = 0;
      clearInterval(this.#timer);
      this.#timer = undefined;
    } else if (this.#head > 1024 && this.#head * 2 > queue.length) {
      queue.splice(0, this.#head);
      this.#head = 0;
    }
  }
}
