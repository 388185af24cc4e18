import type { IncomingMessage, ServerResponse } from "node:http";
import { check } from "@tideward/time/internal";
import { clientAddress } from "../identity";
import type { Admission, Verdict } from "../admit";

/** Options of {@link admitNode}. */
export interface AdmitNodeOptions {
  /**
   * The client's identity for the per-key limits. @defaultValue the socket's peer address,
   * through `X-Forwarded-For` only with `trustProxy`; `"unknown"` when there is none
   */
  readonly key?: (req: IncomingMessage) => string | undefined;
  /** How many proxies in front of the server to trust for `X-Forwarded-For`. @defaultValue 0 */
  readonly trustProxy?: number;
  /** Units the request spends from each limit. @defaultValue 1 */
  readonly cost?: (req: IncomingMessage) => number;
}

/** The shape of a node:http and Express middleware. */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/**
 * A node:http / Express middleware `(req, res, next)` in front of an {@link Admission}: a refused
 * request is answered at once (status, `Retry-After`, the RateLimit fields, a body); an admitted
 * one gets the `RateLimit-Policy` and `RateLimit` members appended to its response (after any a
 * previous middleware set, never replacing them) and goes on to `next()`.
 *
 * The request is released exactly once, when the response closes: after it finished (a success
 * under 500, else a failure), or when the client went away first (a failure) — so the gate is
 * given back on a handler's error and on an aborted request alike. A `next` that throws
 * synchronously releases it at once, then the error goes on.
 *
 * @example
 * import { once } from "node:events";
 * import { createServer } from "node:http";
 * import type { AddressInfo } from "node:net";
 * import { admit } from "@tideward/guard";
 * const middleware = admitNode(admit({ gate: 256, limits: [{ name: "burst", quota: 100, window: 60_000 }] }), { trustProxy: 1 });
 * // With Express: app.use(middleware). With node:http, run it before the handler:
 * const server = createServer((req, res) => middleware(req, res, () => res.end("ok")));
 * await once(server.listen(0, "127.0.0.1"), "listening");
 * const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
 * res.status; // 200
 * res.headers.has("ratelimit"); // true
 * server.close();
 */
export function admitNode(admission: Admission, options?: AdmitNodeOptions): Middleware {
  const o = check.options(options, ["key", "trustProxy", "cost"], "admitNode");
  const hops = o.trustProxy === undefined ? 0 : check.integer(o.trustProxy, "admitNode trustProxy", 0);
  // `req.headers` is built on first read (Node parses the raw headers lazily): without trusted
  // hops the default key never reads it.
  const key = o.key ?? (hops === 0 ? (req: IncomingMessage) => req.socket.remoteAddress : (req: IncomingMessage) => clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], hops));
  const cost = o.cost;

  const apply = (verdict: Verdict, res: ServerResponse, next: (error?: unknown) => void): void => {
    // appendHeader checks the field and then calls setHeader, which checks it again: a field no
    // earlier middleware set goes to setHeader directly.
    for (const [name, value] of verdict.headers) {
      if (res.hasHeader(name)) res.appendHeader(name, value);
      else res.setHeader(name, value);
    }
    if (!verdict.allowed) {
      res.statusCode = verdict.status;
      if (verdict.contentType !== undefined) res.setHeader("content-type", verdict.contentType);
      res.end(verdict.body);
      return;
    }
    // A response closes once, finished or not: `on` spares `once`'s wrapper.
    res.on("close", () => verdict.release(res.writableFinished && res.statusCode < 500));
    try {
      next();
    } catch (e) {
      verdict.release(false);
      throw e;
    }
  };

  return (req, res, next) => {
    let verdict: Verdict | Promise<Verdict>;
    try {
      verdict = admission.check(key(req) ?? "unknown", cost === undefined ? 1 : cost(req));
    } catch (e) {
      next(e);
      return;
    }
    if (verdict instanceof Promise) {
      verdict.then(
        (v) => apply(v, res, next),
        (e: unknown) => next(e),
      );
    } else apply(verdict, res, next);
  };
}
