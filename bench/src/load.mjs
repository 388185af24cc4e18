// The load generator for guard.bench.ts: autocannon 9 in this child process (so it never shares
// the servers' event loop), driving several servers in rounds taken in turn — `connections`
// keep-alive connections for `seconds` to one server, then the next, `rounds` rounds, each round
// starting at another server — so all see the same noise of a shared machine. Prints
// { rates: [[requests/s of each round to server 0], [… server 1]], other } as JSON. Loopback only.
import autocannon from "autocannon";

const { ports, rounds, seconds, connections } = JSON.parse(process.argv[2]);
let other = 0;

function run(target, duration) {
  return new Promise((resolve, reject) => {
    autocannon({ url: `http://127.0.0.1:${ports[target]}/`, connections, duration, pipelining: 1 }, (error, result) => {
      if (error) return reject(error);
      other += result.non2xx + result.errors + result.timeouts;
      resolve(result.requests.total / duration);
    });
  });
}

// With an IPC channel, each round waits for the parent's word before it starts and after it
// ends, so the parent can read its own CPU time at the edges of every round.
function edge(message) {
  if (process.send === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    process.once("message", () => resolve());
    process.send(message);
  });
}

// Warm-up, not counted: every server, a second.
for (const t of ports.keys()) await run(t, 1);
other = 0;
const rates = ports.map(() => []);
for (let i = 0; i < rounds; i++) {
  const order = ports.map((_, k) => (i + k) % ports.length);
  for (const t of order) {
    await edge({ start: t });
    rates[t].push(await run(t, seconds));
    await edge({ end: t });
  }
}
process.stdout.write(JSON.stringify({ rates, other }));
process.disconnect?.();
