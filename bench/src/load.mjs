// A small loopback load generator for guard.bench.ts: `connections` keep-alive connections, each
// sending GET / and the next one as soon as an answer ends, for `seconds` or `limit` requests,
// whichever comes first. Prints { rps, ok, other } as JSON. Loopback only; bounded.
import { Agent, request } from "node:http";

const { port, seconds, connections, limit } = JSON.parse(process.argv[2]);
const agent = new Agent({ keepAlive: true, maxSockets: connections });
let sent = 0;
let ok = 0;
let other = 0;
let last = 0;
const deadline = performance.now() + seconds * 1_000;

function one() {
  return new Promise((resolve) => {
    sent++;
    const req = request({ host: "127.0.0.1", port, path: "/", agent }, (res) => {
      res.resume();
      res.on("end", () => {
        if (res.statusCode === 200) ok++;
        else other++;
        last = performance.now();
        resolve();
      });
    });
    req.on("error", () => {
      other++;
      resolve();
    });
    req.end();
  });
}

async function worker() {
  while (performance.now() < deadline && sent < limit) await one();
}

// A short warm-up that is not counted.
const warm = performance.now() + 300;
while (performance.now() < warm) await Promise.all(Array.from({ length: connections }, one));
ok = other = 0;
const first = performance.now();
await Promise.all(Array.from({ length: connections }, worker));
agent.destroy();
process.stdout.write(JSON.stringify({ rps: (ok / (last - first)) * 1_000, ok, other }));
