// A small loopback load generator for guard.bench.ts. It drives several servers in slices taken
// in turn — `connections` keep-alive connections sending GET / back to back for `slice` ms to one
// server, then the next, `slices` rounds — so all are measured under the same noise of a shared
// machine. Prints { rates: [[requests/s of each slice to server 0], [… server 1]],
// other } as JSON. Loopback only; bounded in time and in requests.
import { Agent, request } from "node:http";

const { ports, slices, slice, connections } = JSON.parse(process.argv[2]);
const agents = ports.map(() => new Agent({ keepAlive: true, maxSockets: connections }));
let other = 0;
let sent = 0;
const LIMIT = 5_000_000;

function one(target) {
  return new Promise((resolve) => {
    sent++;
    const req = request({ host: "127.0.0.1", port: ports[target], path: "/", agent: agents[target] }, (res) => {
      res.resume();
      res.on("end", () => {
        if (res.statusCode !== 200) other++;
        resolve(res.statusCode === 200);
      });
    });
    req.on("error", () => {
      other++;
      resolve(false);
    });
    req.end();
  });
}

async function run(target, ms) {
  const end = performance.now() + ms;
  let ok = 0;
  const worker = async () => {
    while (performance.now() < end && sent < LIMIT) if (await one(target)) ok++;
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: connections }, worker));
  return (ok / (performance.now() - start)) * 1_000;
}

// With an IPC channel, each slice waits for the parent's word before it starts and after it
// ends, so the parent can read its own CPU time at the edges of every slice.
function edge(message) {
  if (process.send === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    process.once("message", () => resolve());
    process.send(message);
  });
}

// Warm-up, not counted: both servers, a little.
for (const t of ports.keys()) await run(t, 300);
const rates = ports.map(() => []);
for (let i = 0; i < slices; i++) {
  // Each round starts at another server, so none always follows the same neighbour.
  const order = ports.map((_, k) => (i + k) % ports.length);
  for (const t of order) {
    await edge({ start: t });
    rates[t].push(await run(t, slice));
    await edge({ end: t });
  }
}
for (const a of agents) a.destroy();
process.stdout.write(JSON.stringify({ rates, other }));
process.disconnect?.();
