// One server of guard-http.ts's load test, in a process of its own (`http-server.ts KIND`), so
// that its CPU time is its own: no other server's garbage collected in its round, no load
// generator on its event loop. It answers its port over IPC once listening, then each "mark"
// with its CPU time so far (µs) and the requests it has served; "stop" closes it.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { rateLimit } from "express-rate-limit";
import { admit } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";

export type ServerKind = "bare" | "fields" | "admitNode" | "express" | "express-admit" | "express-rate-limit";

const kind = process.argv[2] as ServerKind;
let served = 0;
const handler = (_req: unknown, res: ServerResponse): void => {
  served++;
  res.writeHead(200, { "content-type": "text/plain" });
  res.end("ok");
};
// A gate and a per-key bucket, generous enough that nothing is refused: what is measured is
// the admission's cost, with the RateLimit fields on every response.
const admission = () => admit({ gate: 100_000, limits: [{ name: "burst", quota: 1e9, window: 1_000 }] });
let listener: (req: IncomingMessage, res: ServerResponse) => void;
if (kind === "bare") listener = handler;
else if (kind === "fields") {
  // The bare handler writing, itself, the two fields admitNode adds (the same bytes, the remaining
  // count moving): what any server sending them pays, admission or not.
  let remaining = 999_999_999;
  listener = (_req, res) => {
    served++;
    res.writeHead(200, [
      "content-type",
      "text/plain",
      "RateLimit-Policy",
      '"burst";q=1000000000;w=1',
      "RateLimit",
      `"burst";r=${remaining--};t=1`,
    ]);
    res.end("ok");
  };
} else if (kind === "admitNode") {
  const middleware = admitNode(admission());
  listener = (req, res) => middleware(req, res, () => handler(req, res));
} else if (kind === "express" || kind === "express-admit" || kind === "express-rate-limit") {
  const app = express();
  app.set("etag", false);
  app.set("x-powered-by", false);
  if (kind === "express-admit") app.use(admitNode(admission()));
  // express-rate-limit 8.7.5 with its memory store, the draft's two fields as admit writes them.
  if (kind === "express-rate-limit")
    app.use(rateLimit({ windowMs: 1_000, limit: 1e9, standardHeaders: "draft-8", legacyHeaders: false }));
  app.get("/", (_req, res) => {
    served++;
    res.type("text/plain").send("ok");
  });
  listener = app;
} else {
  throw new TypeError(`http-server.ts: unknown server kind ${JSON.stringify(kind)}`);
}
const server = createServer(listener);
server.keepAliveTimeout = 10_000;
server.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on("message", (m: string) => {
  if (m === "mark") {
    const used = process.cpuUsage();
    process.send?.({ cpu: used.user + used.system, served });
  } else if (m === "stop") {
    server.closeAllConnections();
    server.close(() => process.disconnect());
  }
});
