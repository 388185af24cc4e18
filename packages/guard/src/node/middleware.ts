import { ServerResponse } from "node:http";
import type { IncomingMessage } from "node:http";
import { check } from "@tideward/time/internal";
import { identity } from "../identity";
import type { TrustProxy } from "../identity";
import { wholeCost } from "../limits";
import type { Admission, Field, Verdict } from "../admit";
import type { Actual } from "../quota-reservation";

/** Options of {@link admitNode}. */
export interface AdmitNodeOptions {
  /**
   * The client's identity for the per-key limits; where it answers `undefined`, the client's
   * address key stands. @defaultValue the address key: the socket's peer address, through the
   * trusted proxies' header only with `trustProxy`, IPv6 by its `ipv6Prefix` (see
   * `addressKey`); `"unknown"` when there is none
   */
  readonly key?: (req: IncomingMessage) => string | undefined;
  /**
   * How many proxies in front of the server to trust for `X-Forwarded-For`, or `{ hops, header }`
   * to name the one header they write (`"forwarded"` for RFC 7239's). @defaultValue 0
   */
  readonly trustProxy?: number | TrustProxy;
  /** How many leading bits of an IPv6 address name one client, 1 to 128. @defaultValue 64 */
  readonly ipv6Prefix?: number;
  /** Units the request spends from each limit. @defaultValue 1 */
  readonly cost?: (req: IncomingMessage) => number;
  /**
   * With admit's `quota.reserve`: the actual units per limit name, read off a finished response
   * (a header; `res.locals` in Express); a promise is awaited. Not asked when the client left;
   * `undefined` or a throw settles as reserved. @defaultValue settled as reserved
   */
  readonly actual?: (req: IncomingMessage, res: ServerResponse) => Actual | PromiseLike<Actual>;
  /**
   * How important the request is, to admit's concurrency limit and shedder: a level's number (0
   * the most important) or name (`"critical"`, `"sheddable"` with `criticality`); `undefined` for
   * the admission's `priority`. One that is not a level counts as the least important. What it
   * throws goes to `next`, as `key`'s does, before anything is taken. @defaultValue none
   */
  readonly priority?: (req: IncomingMessage) => number | string | undefined;
}

/** The shape of a node:http and Express middleware. */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

// The fields an admitted response is to carry are added when its head is written, by a
// `writeHead` put on the response in front of the one it had, and written in one array with the
// handler's own. Set with `setHeader` instead, each would be checked and kept in the response's
// header table, and node would then merge the handler's `writeHead` fields into that table one
// by one: three times the cost of the same fields written with the handler's (see the README).
//
// The list waiting for the head is kept on that writeHead (a function made for the response),
// not on the response: a property added to a response costs microseconds where Express has
// given it a prototype of its own (every response then has a map of its own, and each property
// added copies it), and the writeHead is the one property the fields need. A later admission
// on the same response finds the list on the writeHead in front, or, behind another wrapper of
// writeHead, through the close listener the first one left (`HOOK`). The key is a registered
// symbol, so that two copies of this package on one response add to the same list rather than
// each hooking `writeHead`.
const FIELDS = Symbol.for("@tideward/guard: fields to write with the head");
const HOOK = Symbol.for("@tideward/guard: the writeHead holding the fields");

type WriteHead = (this: ServerResponse, statusCode: number, ...rest: unknown[]) => ServerResponse;

/** The fields waiting for a response's head, shared by every admission on it. */
interface Pending {
  fields: readonly Field[] | undefined;
}

/** A writeHead put in front of a response's own, holding the fields to add to its head. */
interface Hook extends WriteHead {
  readonly [FIELDS]: Pending;
}

/** A response's writeHead, as the function it is (a method read off its object). */
function writeHeadOf(res: ServerResponse): WriteHead {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called back with the response as `this`
  return res.writeHead as WriteHead;
}

function isHook(f: unknown): f is Hook {
  return typeof f === "function" && FIELDS in f;
}

// node:http's own, to tell when nothing else has wrapped it.
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with the response as `this`
const nodeWriteHead = ServerResponse.prototype.writeHead as WriteHead;

/**
 * The hook an earlier admission put on this response, if any: the writeHead in front, or, when
 * another wrapper stands in front of it, the one its close listener names.
 */
function hookOf(res: ServerResponse): Hook | undefined {
  const current = writeHeadOf(res);
  if (isHook(current)) return current;
  if (current === nodeWriteHead) return undefined;
  for (const listener of res.rawListeners("close")) {
    const hook = (listener as { [HOOK]?: unknown })[HOOK];
    if (isHook(hook)) return hook;
  }
  return undefined;
}

// The last fields seen and their flat form ([name, value, name, value]), which node writes in
// one pass: admitted requests in the same state share one verdict's fields.
let flatOf: readonly Field[] | undefined;
let flatFields: readonly string[] = [];

function flat(fields: readonly Field[]): readonly string[] {
  if (fields !== flatOf) {
    const out: string[] = [];
    for (const [name, value] of fields) out.push(name, value);
    flatFields = out;
    flatOf = fields;
  }
  return flatFields;
}

/** The handler's header fields (an object, a flat or a paired array, or none) with ours after them, as one array. */
function merged(given: unknown, fields: readonly Field[]): unknown[] | readonly string[] {
  if (given === undefined || given === null) return flat(fields);
  if (Array.isArray(given)) {
    if (given.length === 0) return flat(fields);
    return Array.isArray(given[0]) ? [...(given as unknown[]), ...fields] : [...(given as unknown[]), ...flat(fields)];
  }
  // Object.keys is node's for-in over own properties, at a third of the cost.
  const object = given as Record<string, unknown>;
  const names = Object.keys(object);
  const ours = flat(fields);
  const n = names.length;
  const out = new Array<unknown>(2 * n + ours.length);
  for (let i = 0; i < n; i++) {
    out[2 * i] = names[i];
    out[2 * i + 1] = object[names[i]];
  }
  for (let i = 0; i < ours.length; i++) out[2 * n + i] = ours[i];
  return out;
}

/** Adds fields to the response's table, after any of the same name. */
function append(res: ServerResponse, fields: readonly Field[]): void {
  // appendHeader checks a field and then calls setHeader, which checks it again: a field no one
  // set yet goes to setHeader directly.
  for (const [name, value] of fields) {
    if (res.hasHeader(name)) res.appendHeader(name, value);
    else res.setHeader(name, value);
  }
}

/** Moves the fields waiting for the head into the response's table now. */
function flush(res: ServerResponse): void {
  const hook = hookOf(res);
  if (hook === undefined) return;
  const pending = hook[FIELDS];
  const fields = pending.fields;
  pending.fields = undefined;
  if (fields !== undefined) append(res, fields);
}

/** A writeHead in front of `before` that adds the pending fields to the head it writes. */
function hookOver(before: WriteHead, pending: Pending): Hook {
  // Returned as it is made, so that no name is given to it at run time on every response.
  const hook = writeHeadOver(before, pending) as WriteHead & { [FIELDS]?: Pending };
  hook[FIELDS] = pending;
  return hook as Hook;
}

function writeHeadOver(before: WriteHead, pending: Pending): WriteHead {
  return function (this: ServerResponse, statusCode: number, reason?: unknown, headers?: unknown): ServerResponse {
    const fields = pending.fields;
    pending.fields = undefined;
    if (fields === undefined || fields.length === 0 || before !== nodeWriteHead || this.getHeaderNames().length > 0) {
      // Fields set one by one (as Express does), or another wrapper of writeHead in between: ours
      // join the response's table, after any of the same name, and the call goes on unchanged.
      if (fields !== undefined) append(this, fields);
      // eslint-disable-next-line prefer-rest-params -- passed on as they came, however many
      return before.apply(this, arguments as unknown as [number, ...unknown[]]);
    }
    // writeHead(status, reason, headers) or writeHead(status, headers), as node reads them.
    if (typeof reason === "string") return before.call(this, statusCode, reason, merged(headers, fields));
    return before.call(this, statusCode, merged(headers ?? reason, fields));
  };
}

/**
 * Puts `fields` on the response, to be written with its head after the handler's own fields;
 * answers the hook that holds them.
 */
function addFields(res: ServerResponse, fields: readonly Field[]): Hook {
  const hook = hookOf(res);
  if (hook !== undefined) {
    const pending = hook[FIELDS];
    pending.fields = pending.fields === undefined ? fields : [...pending.fields, ...fields];
    return hook;
  }
  const made = hookOver(writeHeadOf(res), { fields });
  res.writeHead = made;
  return made;
}

/**
 * Releases the verdict when the response closes: a success when it finished under 500. A
 * reservation is settled first, at what `actual` reads off a finished response.
 */
function closer(
  verdict: Verdict,
  req: IncomingMessage,
  res: ServerResponse,
  actual: AdmitNodeOptions["actual"],
): () => void {
  return () => {
    if (actual !== undefined && verdict.reservation !== undefined && res.writableFinished) {
      let units: Actual | PromiseLike<Actual>;
      try {
        units = actual(req, res);
      } catch {
        units = undefined; // as reserved
      }
      verdict.settle(units);
    }
    try {
      verdict.release(res.writableFinished && res.statusCode < 500);
    } catch {
      // Only the admission's clock can throw here, after everything was given back: thrown from a
      // close event it would end the process, and there is no caller left to tell.
    }
  };
}

/**
 * A node:http / Express middleware `(req, res, next)` in front of an {@link Admission}: a refused
 * request is answered at once (status, `Retry-After`, the RateLimit fields, a body); an admitted
 * one goes on to `next()`, and its response carries the `RateLimit-Policy` and `RateLimit`
 * members, added when its head is written: after any the handler or another middleware set or
 * wrote, never replacing them (so they are not seen by `res.getHeader` before then).
 *
 * The request is released exactly once, when the response closes: after it finished (a success
 * under 500, else a failure), or when the client went away first (a failure) — so the gate is
 * given back on a handler's error and on an aborted request alike. A `next` that throws
 * synchronously releases it at once, then the error goes on. A client that leaves while an
 * asynchronous quota store decides is released once the store answers, and `next` is not called.
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
  const o = check.options(options, ["key", "trustProxy", "ipv6Prefix", "cost", "actual", "priority"], "admitNode");
  const who = identity(o.trustProxy, o.ipv6Prefix, "admitNode");
  const header = who.header;
  // `req.headers` is built on first read (Node parses the raw headers lazily): without trusted
  // hops the address key never reads it.
  const address =
    header === undefined
      ? (req: IncomingMessage) => who.key(req.socket.remoteAddress, undefined)
      : (req: IncomingMessage) => who.key(req.socket.remoteAddress, req.headers[header]);
  const own =
    o.key === undefined ? undefined : check.fn<(req: IncomingMessage) => string | undefined>(o.key, "admitNode key");
  const key = own === undefined ? address : (req: IncomingMessage) => own(req) ?? address(req);
  const cost = o.cost === undefined ? undefined : check.fn<(req: IncomingMessage) => number>(o.cost, "admitNode cost");
  const actual =
    o.actual === undefined
      ? undefined
      : check.fn<NonNullable<AdmitNodeOptions["actual"]>>(o.actual, "admitNode actual");
  const priority =
    o.priority === undefined
      ? undefined
      : check.fn<(req: IncomingMessage) => number | string | undefined>(o.priority, "admitNode priority");

  const apply = (
    verdict: Verdict,
    req: IncomingMessage,
    res: ServerResponse,
    next: (error?: unknown) => void,
  ): void => {
    let hook: Hook | undefined;
    if (verdict.allowed) {
      if (verdict.headers.length > 0) hook = addFields(res, verdict.headers);
    } else {
      // A refusal is answered here, once: its fields go straight into the response's table,
      // after those an earlier admission left waiting for the head.
      flush(res);
      append(res, verdict.headers);
      res.statusCode = verdict.status;
      if (verdict.contentType !== undefined) res.setHeader("content-type", verdict.contentType);
      res.end(verdict.body);
      return;
    }
    // A response closes once, finished or not: `on` spares `once`'s wrapper. The listener names
    // the hook, for a later admission that finds another wrapper in front of it.
    const closed = closer(verdict, req, res, actual);
    if (hook !== undefined) (closed as { [HOOK]?: Hook })[HOOK] = hook;
    res.on("close", closed);
    try {
      next();
    } catch (e) {
      verdict.release(false);
      throw e;
    }
  };

  return (req, res, next) => {
    let verdict: Verdict | Promise<Verdict>;
    // A request that may wait for a place leaves the line when its client goes away.
    const waiting = admission.waits ? new AbortController() : undefined;
    try {
      verdict = admission.check(
        key(req),
        cost === undefined ? 1 : wholeCost(cost(req), "admitNode cost(req)"),
        priority === undefined ? undefined : priority(req),
        waiting?.signal,
      );
    } catch (e) {
      next(e);
      return;
    }
    if (verdict instanceof Promise) {
      // A client may leave while the store decides: its response closes before there is a
      // verdict to release. Then the place is given back as soon as it is known, and the handler
      // is not run for no one (it would run outside the gate).
      let gone = false;
      const leave = (): void => {
        gone = true;
        waiting?.abort();
      };
      res.on("close", leave);
      verdict.then(
        (v) => {
          res.removeListener("close", leave);
          if (gone) {
            v.settle("cancel"); // no handler ran: nothing was done
            v.release(false);
          } else apply(v, req, res, next);
        },
        (e: unknown) => {
          res.removeListener("close", leave);
          // A wait its client abandoned has no one to answer.
          if (!gone) next(e);
        },
      );
    } else apply(verdict, req, res, next);
  };
}
