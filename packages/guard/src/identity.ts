/**
 * The client's address as a server should trust it: the socket's peer, or, behind `hops` proxies
 * you run, the address the outermost of them saw, read from `X-Forwarded-For`.
 *
 * Each proxy appends the address it received from, so the list ends with the nearest proxy's
 * view and the socket's peer is the nearest proxy. With `hops` trusted proxies the client is the
 * entry `hops` places from the right of `[...forwarded, socket]`; the entries further left were
 * written by whoever sent the request and prove nothing. With `hops` 0 (the default) the header
 * is never read: anyone can send one.
 *
 * @param socket - the connection's peer address, if known
 * @param forwarded - the `X-Forwarded-For` field (one or more lines)
 * @param hops - how many proxies in front of this server are trusted, a whole number from 0
 * @returns the address, or `undefined` when none is known
 */
export function clientAddress(
  socket: string | undefined,
  forwarded: string | readonly string[] | null | undefined,
  hops: number,
): string | undefined {
  if (!(hops > 0) || forwarded === undefined || forwarded === null) return socket;
  const text = typeof forwarded === "string" ? forwarded : forwarded.join(",");
  const chain = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (socket !== undefined) chain.push(socket);
  if (chain.length === 0) return undefined;
  const i = chain.length - 1 - hops;
  return chain[i < 0 ? 0 : i];
}
