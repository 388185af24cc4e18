// Express 5 in process, with no socket: each case in a process of its own (one app a process,
// as a server has), taken in turn for a few rounds. A request is made, handed to the app, and
// awaited until its route has sent the answer (express-rate-limit's store answers a promise, so
// its route runs a microtask later); each figure is the process's CPU time over its requests.
// Express gives every request and response a prototype of its own, so each has a V8 map of its
// own and every property a middleware reads or adds on them takes V8's slow path: this is what a
// middleware costs behind Express apart from the socket's noise. Beside them, a middleware that
// only calls next(): what Express charges for any middleware at all, before it does anything.
// `pnpm bench guard-express`.
import { spawnSync } from "node:child_process";
import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import express from "express";
import { rateLimit } from "express-rate-limit";
import { admit } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";

type Kind = "bare" | "next" | "admitNode" | "express-rate-limit";
const KINDS: readonly Kind[] = ["bare", "next", "admitNode", "express-rate-limit"];
const [BARE, NEXT, ADMIT, ERL] = [0, 1, 2, 3];
const REQUESTS = 30_000;

/** One case in this process: CPU µs a request over REQUESTS requests, after a warm-up. */
async function measure(kind: Kind): Promise<number> {
  const socket = new Socket();
  Object.defineProperty(socket, "remoteAddress", { value: "127.0.0.1" });
  let sent: () => void = () => undefined;
  const app = express();
  app.set("etag", false);
  app.set("x-powered-by", false);
  if (kind === "next") app.use((_req, _res, next) => next());
  if (kind === "admitNode")
    app.use(admitNode(admit({ gate: 100_000, limits: [{ name: "burst", quota: 1e9, window: 1_000 }] })));
  if (kind === "express-rate-limit")
    app.use(rateLimit({ windowMs: 1_000, limit: 1e9, standardHeaders: "draft-8", legacyHeaders: false }));
  app.get("/", (_req, res) => {
    res.type("text/plain").send("ok");
    sent();
  });
  const one = (): Promise<void> =>
    new Promise<void>((resolve) => {
      sent = resolve;
      const req = new IncomingMessage(socket);
      req.method = "GET";
      req.url = "/";
      req.headers = { host: "127.0.0.1" };
      const res = new ServerResponse(req);
      app(req, res);
      res.emit("close");
    });
  for (let k = 0; k < 5_000; k++) await one();
  const start = process.cpuUsage();
  for (let k = 0; k < REQUESTS; k++) await one();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / REQUESTS;
}

const kind = process.argv[2] as Kind | undefined;
if (kind !== undefined) {
  process.stdout.write(String(await measure(kind)));
} else {
  const ROUNDS = Number(process.env.GUARD_EXPRESS_ROUNDS ?? 3);
  const us: number[][] = KINDS.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? KINDS.map((_, i) => i) : KINDS.map((_, i) => KINDS.length - 1 - i);
    for (const i of order) {
      const run = spawnSync(process.execPath, [...process.execArgv, import.meta.filename, KINDS[i]], {
        encoding: "utf8",
      });
      if (run.status !== 0) throw new Error(`${KINDS[i]} failed: ${run.stderr}`);
      us[i].push(Number(run.stdout));
    }
  }
  console.log(`Express 5 in process, no socket: CPU µs a request, ${ROUNDS} rounds of a process a case`);
  for (const [i, k] of KINDS.entries())
    console.log(`  ${k.padEnd(20)} ${us[i].map((x) => x.toFixed(1).padStart(7)).join(" ")}`);
  const ratios = us[ERL].map((x, r) => x / us[ADMIT][r]);
  const range = (xs: number[]) => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;
  const added = us[ADMIT].map((x, r) => x - us[BARE][r]);
  const layer = us[NEXT].map((x, r) => x - us[BARE][r]);
  console.log(
    `  admitNode adds ${range(added)} µs to Express alone, a middleware calling next() ${range(layer)}; Express + express-rate-limit over Express + admitNode, round by round: ${ratios.map((x) => `${x.toFixed(2)}×`).join(", ")} (target at least 1.2×)`,
  );
}
