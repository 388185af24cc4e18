// Real servers for the adapter tests: node:http, Express and Hono (on @hono/node-server) listening
// on free loopback ports, each closed, connections and all, by the test that started it.
import type { Server, ServerOptions } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";

/** A server listening on loopback: its URL (`http://127.0.0.1:<port>`) and how to stop it. */
export interface Listening {
  readonly url: string;
  /** Drops every connection (kept-alive and hung ones too) and stops listening. */
  readonly close: () => Promise<void>;
}

/** Starts `server` on a free loopback port, unless it listens already. */
export async function listening(server: Server): Promise<Listening> {
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const open: Listening[] = [];

/** Starts `server` as {@link listening} does, to be closed by {@link closeServers}: its URL. */
export async function listen(server: Server): Promise<string> {
  const started = await listening(server);
  open.push(started);
  return started.url;
}

/** Closes every server {@link listen} started (a test file's `afterEach(closeServers)`). */
export async function closeServers(): Promise<void> {
  for (const s of open.splice(0)) await s.close();
}

/** A Fetch-API handler (Hono's `app.fetch`, or `admitFetch` around it) served by @hono/node-server, listening. */
export async function serveFetch(
  fetch: (request: Request) => Response | Promise<Response>,
  serverOptions?: ServerOptions,
): Promise<Server> {
  const server = serve({ fetch, port: 0, hostname: "127.0.0.1", serverOptions }) as Server;
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once("listening", () => resolve())));
  return server;
}
