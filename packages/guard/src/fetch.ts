import { retryAfterProperty } from "@tideward/backoff";
import { check } from "@tideward/time/internal";
import type { Attempt } from "./attempt";
import { guardWith } from "./guard";
import { GUARD_OPTIONS, resolveGuard } from "./options";
import type { GuardOptions, Resolved } from "./options";
import { waitHint } from "./retry-after";

/** The shape of `fetch`: Node's global one, a browser's, or any function that answers alike. */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Options of {@link guardFetch}: every {@link GuardOptions} field that does not judge an answer
 * (those are HTTP's here), and three that say how HTTP is judged.
 */
export interface GuardFetchOptions extends Omit<
  GuardOptions<Response, [input: string | URL | Request, init?: RequestInit]>,
  "isFailure" | "retryOn" | "retryAfter" | "discard"
> {
  /**
   * Which responses count as failures on the breaker (network errors and timeouts always do).
   * @defaultValue a status of 500 or more; a 4xx is the caller's problem, not the backend's
   */
  readonly failOn?: (response: Response) => boolean;
  /** Statuses worth another attempt, for requests that may be repeated. @defaultValue 408, 429, 500, 502, 503, 504 */
  readonly retryStatuses?: readonly number[];
  /**
   * Methods that may be repeated (retried or hedged); any other is tried once, unless the
   * request carries an `Idempotency-Key` header. @defaultValue GET, HEAD, OPTIONS, PUT, DELETE, TRACE
   */
  readonly methods?: readonly string[];
}

const METHODS = ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"];
const STATUSES = [408, 429, 500, 502, 503, 504];
const OWN = ["failOn", "retryStatuses", "methods"] as const;
const JUDGES = new Set(["isFailure", "retryOn", "retryAfter", "discard"]);
const KNOWN = [...GUARD_OPTIONS.filter((k) => !JUDGES.has(k)), ...OWN] as (keyof GuardFetchOptions)[];

/** Cancels a response body nobody will read, so its connection goes back to the pool. */
function cancelBody(response: Response): void {
  try {
    void response.body?.cancel().catch(() => undefined);
  } catch {
    // Locked or already read: someone else owns it.
  }
}

function isRequest(input: unknown): input is Request {
  return typeof Request !== "undefined" && input instanceof Request;
}

/**
 * `fetch` behind a guard: network errors, timeouts and 5xx answers count as failures, 4xx do not;
 * requests that may be repeated (idempotent methods, or an `Idempotency-Key` header) are retried
 * and hedged as the options say, any other is tried once; a 429 or 503 is waited out as its
 * `Retry-After` (seconds or an HTTP date), `RateLimit` (`r=0;t=…`) or `X-RateLimit-Reset` asks,
 * within `maxRetryAfter` (capped, or given up on: the response is then returned as it is). The
 * body of every response the caller will not see (retried, lost a hedge, late) is cancelled.
 *
 * The caller's `init.signal` (or a `Request`'s own) stops the whole call. A `Request` is cloned
 * for each attempt (its body held in memory for the retries). An `init.body` fetch cannot read
 * twice (a stream, an async iterable, a Node `Readable`) is sent once, never retried or hedged.
 * One that cannot be sent at all (a `Request` already read) rejects before any policy is asked.
 *
 * @example
 * const origin = async (input: string | URL | Request) => Response.json({ url: String(input) }); // the global fetch, in real code
 * const get = guardFetch(origin, { breaker: {}, timeout: 2_000, deadline: 10_000, retry: { attempts: 3 } });
 * const res = await get("https://api.example/items");
 * res.status; // 200
 * @param fetch - the fetch to guard: the global one, or any function of its signature
 * @param options - the policies; see {@link GuardFetchOptions}
 * @returns a function of fetch's signature
 */
export function guardFetch(fetch: Fetch, options?: GuardFetchOptions): Fetch {
  if (typeof fetch !== "function")
    throw new TypeError(`guardFetch expects a fetch function, got ${typeof fetch} ${check.describe(fetch)}`);
  // The answer-judging options are HTTP's here: say so rather than suggest a near name.
  for (const k of JUDGES)
    if (typeof options === "object" && options !== null && k in options)
      throw new TypeError(`guardFetch has no option "${k}": HTTP judges answers (failOn, retryStatuses, methods)`);
  const given = check.options(options, KNOWN, "guardFetch");
  const { failOn, retryStatuses, methods, ...rest } = given;
  if (failOn !== undefined && typeof failOn !== "function")
    throw new TypeError(`guardFetch failOn must be a function, got ${check.describe(failOn)}`);
  const fails = failOn ?? ((r: Response) => r.status >= 500);
  const statuses = new Set(
    readList(
      retryStatuses,
      "retryStatuses",
      STATUSES,
      (s) => typeof s === "number" && Number.isInteger(s) && s >= 100 && s <= 599,
    ),
  );
  const safe = new Set(
    readList(methods, "methods", METHODS, (m) => typeof m === "string" && m.length > 0).map((m) =>
      String(m).toUpperCase(),
    ),
  );
  let clock: () => number = Date.now;
  const resolved: Resolved<Response> = resolveGuard<Response>(
    {
      ...(rest as GuardOptions<Response>),
      isFailure: (error, response) => error !== undefined || (response !== undefined && fails(response)),
      retryOn: (error, response) => error !== undefined || (response !== undefined && statuses.has(response.status)),
      retryAfter: (error, response) => {
        // The error's own hint as it is: read (and a bad one named) by the guard's rule.
        if (response === undefined) return retryAfterProperty(error) as number | undefined;
        return response.status === 429 || response.status === 503 ? waitHint(response.headers, clock()) : undefined;
      },
      discard: cancelBody,
    },
    "guardFetch",
    "guardFetch init.signal",
  );
  // Its hints are the response's fields (always a number of ms, or none) and an error's own.
  const o: Resolved<Response> = Object.freeze({ ...resolved, hintName: "guardFetch: the error's retryAfter" });
  clock = o.clock;
  // Requests that must not be repeated share every primitive with the rest, but make one attempt.
  const once: Resolved<Response> = Object.freeze({
    ...o,
    attempts: 1,
    backoff: undefined,
    hedgeMax: 0,
    hedgeDelay: Infinity,
  });
  const send = (attempt: Attempt, input: string | URL | Request, init: RequestInit | undefined): Promise<Response> =>
    // A Request is cloned for every attempt (a streamed body is teed, held for the next), so the
    // original's body is never used up.
    fetch(isRequest(input) ? input.clone() : input, { ...init, signal: attempt.signal });
  const repeating = guardWith(send, o);
  const single = guardWith(send, once);

  // Like fetch, it answers a promise whatever it is given: bad input rejects it.
  return (input, init) => {
    try {
      const request = isRequest(input) ? input : undefined;
      unsendable(request, init);
      const signal = init?.signal ?? request?.signal ?? undefined;
      const g = repeatable(request, init, safe) ? repeating : single;
      return signal === undefined ? g(input, init) : g.run({ signal }, input, init);
    } catch (e) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what fetch's input threw, as it is
      return Promise.reject(e);
    }
  };
}

function readList<T>(
  value: readonly T[] | undefined,
  what: string,
  fallback: readonly T[],
  ok: (x: unknown) => boolean,
): T[] {
  if (value === undefined) return [...fallback];
  if (!Array.isArray(value)) throw new TypeError(`guardFetch ${what} must be an array, got ${check.describe(value)}`);
  for (const x of value as unknown[])
    if (!ok(x)) throw new RangeError(`guardFetch ${what} has an invalid entry ${check.describe(x)}`);
  return [...(value as T[])];
}

/**
 * Throws the caller's own mistake before any policy is asked: a body that cannot be sent even
 * once, which fetch would refuse inside the attempt (counted on the breaker, then retried).
 */
function unsendable(request: Request | undefined, init: RequestInit | undefined): void {
  // A Request is cloned for every attempt, and clone() refuses a body already read or locked.
  if (request !== undefined && (request.bodyUsed || request.body?.locked === true))
    throw new TypeError(
      "guardFetch input is a Request whose body has already been read (or is locked by a reader): it cannot be sent; pass a new Request, or clone() it before reading it",
    );
  const body = init?.body as { locked?: unknown } | null | undefined;
  if (typeof body === "object" && body !== null && body.locked === true)
    throw new TypeError(
      "guardFetch init.body is a stream locked by a reader: it cannot be sent; pass a stream nobody reads",
    );
}

/**
 * Whether fetch reads `body` afresh each time it is sent: a string, an `ArrayBuffer` or a view of
 * one, a `Blob`, `URLSearchParams`, `FormData`, or none. Anything else (a stream, an async
 * iterable, a Node `Readable`) is used up by the first attempt; one from another realm is taken
 * for one too, which only costs it its retries.
 */
function replayable(body: unknown): boolean {
  if (body === undefined || body === null || typeof body === "string") return true;
  if (typeof body !== "object") return false;
  return (
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    (typeof Blob !== "undefined" && body instanceof Blob) ||
    (typeof URLSearchParams !== "undefined" && body instanceof URLSearchParams) ||
    (typeof FormData !== "undefined" && body instanceof FormData)
  );
}

/** Whether a request may be sent more than once. */
function repeatable(request: Request | undefined, init: RequestInit | undefined, safe: ReadonlySet<string>): boolean {
  // A Request's own body is cloned for each attempt; a body given in init is sent as it is.
  if (!replayable(init?.body)) return false;
  const method = String(init?.method ?? request?.method ?? "GET").toUpperCase();
  if (safe.has(method)) return true;
  const headers = init?.headers ?? request?.headers;
  return headers !== undefined && new Headers(headers).has("idempotency-key");
}
