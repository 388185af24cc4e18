import { check } from "@tideward/time/internal";
import type { Admission, Verdict } from "./admit";
import { identity } from "./identity";
import type { TrustProxy } from "./identity";
import { wholeCost } from "./limits";
import type { Actual } from "./quota-reservation";

/** Options of {@link admitFetch}. */
export interface AdmitFetchOptions<Rest extends unknown[]> {
  /**
   * The client's identity for the per-key limits; where it answers `undefined`, the client's
   * address key stands. @defaultValue the address key: the peer address the runtime hands the
   * handler (Deno's `info.remoteAddr`, Bun's `server.requestIP`, `@hono/node-server`'s socket),
   * through the trusted proxies' header only with `trustProxy`, IPv6 by its `ipv6Prefix` (see
   * `addressKey`); `"unknown"` when there is none
   */
  readonly key?: (request: Request, ...rest: Rest) => string | undefined;
  /**
   * How many proxies in front of the server to trust for `X-Forwarded-For`, or `{ hops, header }`
   * to name the one header they write (`"forwarded"` for RFC 7239's). @defaultValue 0
   */
  readonly trustProxy?: number | TrustProxy;
  /** How many leading bits of an IPv6 address name one client, 1 to 128. @defaultValue 64 */
  readonly ipv6Prefix?: number;
  /** Units the request spends from each limit. @defaultValue 1 */
  readonly cost?: (request: Request, ...rest: Rest) => number;
  /**
   * With admit's `quota.reserve`: the actual units per limit name, read off the handler's
   * response (a header, or the body of `response.clone()`); a promise is awaited. Not asked when
   * the handler threw; `undefined` or a throw settles as reserved. @defaultValue settled as reserved
   */
  readonly actual?: (response: Response, request: Request, ...rest: Rest) => Actual | PromiseLike<Actual>;
  /**
   * How important the request is, to admit's concurrency limit and shedder: a level's number (0
   * the most important) or name; `undefined` for the admission's `priority`. One that is not a
   * level counts as the least important. What it throws rejects the handler's promise, before
   * anything is taken. @defaultValue none
   */
  readonly priority?: (request: Request, ...rest: Rest) => number | string | undefined;
}

/** What is answered to a client that left before admission was decided (nginx's "client closed request"). */
const CLIENT_CLOSED = 499;

/** The peer address a Fetch-API runtime hands its handler, where it hands one. */
function peer(request: Request, rest: readonly unknown[]): string | undefined {
  const extra = rest[0] as
    | {
        remoteAddr?: { hostname?: unknown };
        requestIP?: (r: Request) => { address?: unknown } | null;
        incoming?: { socket?: { remoteAddress?: unknown } };
      }
    | undefined;
  if (extra === undefined || extra === null || typeof extra !== "object") return undefined;
  const deno = extra.remoteAddr?.hostname;
  if (typeof deno === "string") return deno;
  if (typeof extra.requestIP === "function") {
    const bun = extra.requestIP(request)?.address;
    if (typeof bun === "string") return bun;
  }
  const node = extra.incoming?.socket?.remoteAddress;
  return typeof node === "string" ? node : undefined;
}

/** The handler's response with the verdict's fields appended (copied first if its headers are immutable). */
function withFields(response: Response, verdict: Verdict): Response {
  if (verdict.headers.length === 0) return response;
  let out = response;
  try {
    for (const [name, value] of verdict.headers) out.headers.append(name, value);
  } catch {
    // A response from fetch() or Response.error() has immutable headers: answer a copy.
    out = new Response(response.body, response);
    for (const [name, value] of verdict.headers) out.headers.append(name, value);
  }
  return out;
}

/**
 * A Fetch-API handler (`(request) => Response`, as Hono's `app.fetch`, Bun, Deno and workers use)
 * behind an {@link Admission}: a refused request is answered at once with its status, fields and
 * body; an admitted one runs the handler, and its response gets the `RateLimit-Policy` and
 * `RateLimit` members appended (never replacing fields the handler set). The request is released
 * when the handler settles, as a failure when it throws or answers 500 or more, or as soon as the
 * client aborts (`request.signal`), whichever comes first. A client that left before admission
 * was decided (an asynchronous quota store) gets 499 and no handler run.
 *
 * @example
 * const admission = admit({ limits: [{ name: "burst", quota: 100, window: 60_000 }] });
 * const app = { fetch: (request: Request) => new Response(`hello ${new URL(request.url).pathname}`) };
 * const handler = admitFetch(admission, app.fetch); // Bun.serve({ fetch: handler }), Deno.serve(handler), Hono's app.fetch
 * const res = await handler(new Request("http://localhost/items"));
 * res.status; // 200
 * await res.text(); // "hello /items"
 */
export function admitFetch<Rest extends unknown[]>(
  admission: Admission,
  handler: (request: Request, ...rest: Rest) => Response | Promise<Response>,
  options?: AdmitFetchOptions<Rest>,
): (request: Request, ...rest: Rest) => Promise<Response> {
  if (typeof handler !== "function")
    throw new TypeError(`admitFetch expects a handler function, got ${check.describe(handler)}`);
  const o = check.options(options, ["key", "trustProxy", "ipv6Prefix", "cost", "actual", "priority"], "admitFetch");
  const who = identity(o.trustProxy, o.ipv6Prefix, "admitFetch");
  const header = who.header;
  const address = (request: Request, rest: Rest): string =>
    who.key(peer(request, rest), header === undefined ? undefined : request.headers.get(header));
  const own =
    o.key === undefined
      ? undefined
      : check.fn<(r: Request, ...rest: Rest) => string | undefined>(o.key, "admitFetch key");
  const cost =
    o.cost === undefined ? undefined : check.fn<(r: Request, ...rest: Rest) => number>(o.cost, "admitFetch cost");
  const actual =
    o.actual === undefined
      ? undefined
      : check.fn<NonNullable<AdmitFetchOptions<Rest>["actual"]>>(o.actual, "admitFetch actual");
  const priority =
    o.priority === undefined
      ? undefined
      : check.fn<(r: Request, ...rest: Rest) => number | string | undefined>(o.priority, "admitFetch priority");

  const run = async (verdict: Verdict, request: Request, rest: Rest): Promise<Response> => {
    if (!verdict.allowed) {
      const headers = new Headers();
      for (const [name, value] of verdict.headers) headers.append(name, value);
      if (verdict.contentType !== undefined) headers.set("content-type", verdict.contentType);
      return new Response(verdict.body ?? null, { status: verdict.status, headers });
    }
    const signal = request.signal as AbortSignal | undefined;
    if (signal?.aborted === true) {
      // The client left while the store decided: its place back at once, and no handler run
      // for no one (it would run outside the gate); a reservation cancelled, nothing was done.
      verdict.settle("cancel");
      verdict.release(false);
      return new Response(null, { status: CLIENT_CLOSED });
    }
    const onAbort = (): void => verdict.release(false);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await handler(request, ...rest);
      // A client that aborted first had it settled as reserved by the release: this does nothing then.
      if (actual !== undefined && verdict.reservation !== undefined) {
        let units: Actual | PromiseLike<Actual>;
        try {
          units = actual(response, request, ...rest);
        } catch {
          units = undefined; // as reserved
        }
        verdict.settle(units);
      }
      verdict.release(response.status < 500);
      return withFields(response, verdict);
    } catch (e) {
      verdict.release(false);
      throw e;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  };

  return async (request, ...rest) => {
    const signal = request.signal as AbortSignal | undefined;
    let verdict = admission.check(
      (own === undefined ? undefined : own(request, ...rest)) ?? address(request, rest),
      cost === undefined ? 1 : wholeCost(cost(request, ...rest), "admitFetch cost(request)"),
      priority === undefined ? undefined : priority(request, ...rest),
      admission.waits ? signal : undefined,
    );
    if (verdict instanceof Promise) {
      try {
        verdict = await verdict;
      } catch (e) {
        // A wait for a place its client abandoned: nobody reads the answer.
        if (signal?.aborted === true && e === signal.reason) return new Response(null, { status: CLIENT_CLOSED });
        throw e;
      }
    }
    return run(verdict, request, rest);
  };
}
