import { check } from "@tideward/time/internal";
import { addressOf, keyOf } from "./address";
import { entry, found } from "./forwarded";
import type { ProxyHeader } from "./forwarded";

export type { ProxyHeader } from "./forwarded";

/** The proxies in front of a server that are trusted to name the client, and the one header they write. */
export interface TrustProxy {
  /** How many proxies in front of the server are trusted, a whole number from 0. */
  readonly hops: number;
  /**
   * The one header those proxies write (in any case). The other is never read, even when
   * present: a proxy that writes one passes the other on as the client sent it.
   * @defaultValue "x-forwarded-for"
   */
  readonly header?: ProxyHeader;
}

/** The IPv6 prefix length a client is keyed by when none is given: a /64 is what one subscriber usually holds. */
export const DEFAULT_IPV6_PREFIX = 64;

const HEADERS: readonly ProxyHeader[] = ["x-forwarded-for", "forwarded"];

/**
 * The client's address as a server should trust it: the socket's peer, or, behind trusted
 * proxies, the address the outermost of them saw, read from the one header they write.
 *
 * Each proxy appends the address it received from, so the list ends with the nearest proxy's
 * view and the socket's peer is the nearest proxy. With `hops` trusted proxies the client is the
 * entry `hops` places from the right of `[...entries, socket]` (the leftmost, when there are
 * fewer); the entries further left were written by whoever sent the request and prove nothing,
 * and are never read. With `hops` 0 (the default) no header is read: anyone can send one.
 *
 * `X-Forwarded-For` entries are addresses, with a port or without (`203.0.113.7:41234`,
 * `[2001:db8::1]:443`). A `Forwarded` entry is an element's `for` parameter (RFC 7239:
 * `for=203.0.113.7;proto=https`, `for="[2001:db8::1]:4711"`). An entry that names no address —
 * `unknown`, an obfuscated identifier (`_hidden`), a host name, an octet written with a leading
 * zero, a `Forwarded` element without `for` or with an unclosed quote — is never used: the
 * socket's peer stands instead.
 *
 * @param socket - the connection's peer address, if known
 * @param field - the header's value, one line or several
 * @param trustProxy - how many proxies in front of this server are trusted (a whole number from
 * 0), or `{ hops, header }` to read `Forwarded` instead of `X-Forwarded-For`
 * @returns the address, written one way (`a.b.c.d`, an IPv4-mapped IPv6 address as IPv4, IPv6
 * as RFC 5952 writes it, without its zone), or the socket's peer as given when it is none;
 * `undefined` when none is known
 * @example
 * clientAddress("10.0.0.9", "6.6.6.6, 203.0.113.7:41234", 1); // "203.0.113.7"
 * clientAddress("10.0.0.9", 'for=6.6.6.6, for="[2001:DB8::1]:4711"', { hops: 1, header: "forwarded" }); // "2001:db8::1"
 * clientAddress("10.0.0.9", "unknown", 1); // "10.0.0.9"
 */
export function clientAddress(
  socket: string | undefined,
  field: string | readonly string[] | null | undefined,
  trustProxy: number | TrustProxy,
): string | undefined {
  const trust = readTrust(trustProxy, "clientAddress trustProxy");
  if (trust.hops > 0 && field !== undefined && field !== null && entry(field, trust.hops, trust.header)) {
    const address = addressOf(found.text, found.from, found.to);
    if (address !== undefined) return address;
  }
  if (socket === undefined) return undefined;
  return addressOf(socket, 0, socket.length) ?? socket;
}

/**
 * The key a client's address counts under in per-key limits: an IPv4 address as `a.b.c.d`, an
 * IPv4-mapped IPv6 address (`::ffff:203.0.113.7`, `::ffff:cb00:7107`) as the IPv4 address, and
 * an IPv6 address as its first `ipv6Prefix` bits in RFC 5952's form, `2001:db8:1:2::/64` — so a
 * client holding a whole /64 cannot take a fresh key with every address. Every textual form of
 * one address gives one key: compressed or expanded, in either case, with leading zeros in a
 * group, its last 32 bits as a dotted quad, in brackets, with a port or a zone.
 *
 * For a `key` of your own that keys some requests by something else:
 * `key: (req) => apiKeyOf(req) ?? addressKey(req.socket.remoteAddress ?? "")`, or answer
 * `undefined` there and the adapters key the request by its address, as they do by default.
 *
 * @param address - an address as a socket or a proxy writes it
 * @param ipv6Prefix - how many leading bits of an IPv6 address name one client, 1 to 128 @defaultValue 64
 * @returns the key, or `undefined` when `address` is no address
 * @throws RangeError for an `ipv6Prefix` that is not a whole number from 1 to 128
 * @example
 * addressKey("2001:db8:1:2:aaaa::1"); // "2001:db8:1:2::/64"
 * addressKey("[2001:0DB8:0001:0002::ffff]:443"); // "2001:db8:1:2::/64"
 * addressKey("::ffff:203.0.113.7"); // "203.0.113.7"
 * addressKey("2001:db8:1:2:aaaa::1", 48); // "2001:db8:1::/48"
 * addressKey("unknown"); // undefined
 */
export function addressKey(address: string, ipv6Prefix: number = DEFAULT_IPV6_PREFIX): string | undefined {
  const prefix = readPrefix(ipv6Prefix, "addressKey ipv6Prefix");
  if (typeof address !== "string")
    throw new TypeError(`addressKey address must be a string, got ${check.describe(address)}`);
  return keyOf(address, 0, address.length, prefix);
}

function readPrefix(value: unknown, what: string): number {
  const n = check.integer(value, `${what} (leading bits of an IPv6 address that name one client)`, 1);
  if (n > 128)
    throw new RangeError(
      `${what} (leading bits of an IPv6 address that name one client) must be 128 or less, got ${n}`,
    );
  return n;
}

interface Trust {
  readonly hops: number;
  readonly header: ProxyHeader;
}

function readTrust(value: unknown, what: string): Trust {
  if (typeof value === "number")
    return { hops: check.integer(value, `${what} (trusted proxies)`, 0), header: HEADERS[0] };
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new TypeError(
      `${what} must be a number of trusted proxies or { hops, header }, got ${check.describe(value)}`,
    );
  const o = check.options(value as TrustProxy, ["hops", "header"], what);
  if (o.hops === undefined) throw new TypeError(`${what}.hops (trusted proxies) must be given, a whole number from 0`);
  const hops = check.integer(o.hops, `${what}.hops (trusted proxies)`, 0);
  const given: unknown = o.header ?? HEADERS[0];
  const header = typeof given === "string" ? (given.toLowerCase() as ProxyHeader) : undefined;
  if (header === undefined || !HEADERS.includes(header)) {
    const near = typeof given === "string" ? check.closest(given.toLowerCase(), HEADERS) : undefined;
    throw new TypeError(
      `${what}.header must be "x-forwarded-for" or "forwarded", got ${check.describe(given)}${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}`,
    );
  }
  return { hops, header };
}

/** How an adapter names its client: the header it reads, if any, and the key of a request. */
export interface Identity {
  /** The header to hand {@link Identity.key}, lower case; `undefined` when none is read. */
  readonly header: ProxyHeader | undefined;
  /** The key of a request from `socket` carrying `field` in {@link Identity.header}: `"unknown"` when neither names one. */
  key(socket: string | undefined, field: string | readonly string[] | null | undefined): string;
}

/**
 * Reads an adapter's `trustProxy` and `ipv6Prefix` once, naming them as `owner`'s options, and
 * answers how it keys a request.
 */
export function identity(trustProxy: unknown, ipv6Prefix: unknown, owner: string): Identity {
  const trust =
    trustProxy === undefined ? { hops: 0, header: HEADERS[0] } : readTrust(trustProxy, `${owner} trustProxy`);
  const prefix = ipv6Prefix === undefined ? DEFAULT_IPV6_PREFIX : readPrefix(ipv6Prefix, `${owner} ipv6Prefix`);
  // The last socket address and its key: a connection's requests come from one address.
  let lastSocket: string | undefined;
  let lastKey = "unknown";
  const ofSocket = (socket: string | undefined): string => {
    if (socket === lastSocket) return lastKey;
    const key = socket === undefined ? "unknown" : (keyOf(socket, 0, socket.length, prefix) ?? socket);
    lastSocket = socket;
    lastKey = key;
    return key;
  };
  const hops = trust.hops;
  const header = trust.header;
  return {
    header: hops === 0 ? undefined : header,
    key:
      hops === 0
        ? ofSocket
        : (socket, field) => {
            if (field !== undefined && field !== null && entry(field, hops, header)) {
              const key = keyOf(found.text, found.from, found.to, prefix);
              if (key !== undefined) return key;
            }
            return ofSocket(socket);
          },
  };
}
