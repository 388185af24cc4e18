// An open-loop HTTP load generator, run in a child process of its own so that its timing does
// not share an event loop with the server it loads. Request i is due at start + i·1000/rate ms
// and its latency is counted from that instant, not from when it was actually sent: a client
// held up by a slow server does not get to hide the wait (no "coordinated omission").
//
// Bounded twice: it stops sending after `count` requests or `duration` ms, whichever comes
// first, and stops waiting `grace` ms later; what is still unanswered then is counted as such.
//
// Usage: node generator.mjs '{"port":8080,"rate":500,"duration":2000,"count":1000,"grace":3000}'
// Prints one line of JSON: { sent, ok, refused, failed, unanswered, elapsed }, where ok and
// refused list [due, latency] pairs in milliseconds, `due` counted from the start of the run
// (request i's is exactly i·1000/rate, so a reader can count the requests due in a stretch).
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";

const { port, rate, duration, count, grace, path = "/", sockets = 1_000 } = JSON.parse(process.argv[2] ?? "{}");
const agent = new Agent({ keepAlive: true, maxSockets: sockets });
const result = { sent: 0, ok: [], refused: [], failed: 0, unanswered: 0, elapsed: 0 };
const start = performance.now();
let open = 0;
let sending = true;

function send(i) {
  const offset = (i * 1000) / rate;
  const due = start + offset;
  result.sent++;
  open++;
  let settled = false;
  const settle = (status) => {
    if (settled) return;
    settled = true;
    open--;
    const pair = [offset, performance.now() - due];
    if (status === 200) result.ok.push(pair);
    else if (status === 503) result.refused.push(pair);
    else result.failed++;
    if (!sending && open === 0) finish();
  };
  const req = request({ host: "127.0.0.1", port, path, agent }, (res) => {
    res.resume();
    res.on("end", () => settle(res.statusCode));
  });
  req.on("error", () => settle(0));
  req.end();
}

// Every millisecond, send whatever has fallen due: the schedule, not the timer, sets the rate.
const timer = setInterval(() => {
  const now = performance.now();
  while (sending && result.sent < count && start + (result.sent * 1000) / rate <= now) send(result.sent);
  if (result.sent >= count || now - start >= duration) {
    sending = false;
    clearInterval(timer);
    if (open === 0) finish();
    else setTimeout(finish, grace).unref();
  }
}, 1);

let finished = false;
function finish() {
  if (finished) return;
  finished = true;
  result.unanswered = open;
  result.elapsed = performance.now() - start;
  agent.destroy();
  process.stdout.write(JSON.stringify(result) + "\n", () => process.exit(0));
}
