// An open-loop HTTP load generator whose clients retry, for concurrency-http.bench.ts, run in a
// child process of its own so that its timing does not share an event loop with the server.
// Call i is due at start + i·1000/rate ms; its latency is counted from that instant (no
// coordinated omission). Each call makes up to `attempts` attempts: an attempt answered 503, an
// error, or no answer within `timeout` ms (the attempt is then aborted, as a client's timeout
// would) is retried after a full-jitter backoff (a random wait up to base·2^k ms, at most cap),
// unless the call's `deadline` would have passed by then.
//
// Usage: node concurrency-load.mjs '{"port":8080,"path":"/user","rate":150,"duration":4000,
//   "grace":1500,"timeout":300,"deadline":1000,"attempts":3,"base":50,"cap":400}'
// Prints one line of JSON: { calls, ok: [latency, …] (ms, calls answered 200, any attempt),
// attempts, refused (attempts answered 503), timedOut (attempts aborted), failed (calls that
// gave up), unanswered (calls still open when the grace ran out) }.
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";

const o = JSON.parse(process.argv[2] ?? "{}");
const { port, path, rate, duration, grace, timeout, deadline, attempts, base, cap } = o;
const agent = new Agent({ keepAlive: true, maxSockets: 2_000 });
const result = { calls: 0, ok: [], attempts: 0, refused: 0, timedOut: 0, failed: 0, unanswered: 0 };
const start = performance.now();
let open = 0;
let sending = true;

function call(i) {
  const due = start + (i * 1000) / rate;
  result.calls++;
  open++;
  const done = (ok) => {
    open--;
    if (ok) result.ok.push(performance.now() - due);
    else result.failed++;
    if (!sending && open === 0) finish();
  };
  const attempt = (k) => {
    result.attempts++;
    let over = false;
    const again = () => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      const wait = Math.random() * Math.min(cap, base * 2 ** k);
      if (k + 1 < attempts && performance.now() + wait - due < deadline) setTimeout(() => attempt(k + 1), wait);
      else done(false);
    };
    const req = request({ host: "127.0.0.1", port, path, agent }, (res) => {
      res.resume();
      res.on("end", () => {
        if (over) return;
        if (res.statusCode === 200) {
          over = true;
          clearTimeout(timer);
          done(true);
          return;
        }
        if (res.statusCode === 503) result.refused++;
        again();
      });
    });
    const timer = setTimeout(() => {
      result.timedOut++;
      req.destroy();
      again();
    }, timeout);
    req.on("error", again);
    req.end();
  };
  attempt(0);
}

// Every millisecond, start whatever has fallen due: the schedule, not the timer, sets the rate.
const ticker = setInterval(() => {
  const now = performance.now();
  while (sending && start + (result.calls * 1000) / rate <= now) call(result.calls);
  if (now - start >= duration) {
    sending = false;
    clearInterval(ticker);
    if (open === 0) finish();
    else setTimeout(finish, grace).unref();
  }
}, 1);

let finished = false;
function finish() {
  if (finished) return;
  finished = true;
  result.unanswered = open;
  agent.destroy();
  process.stdout.write(JSON.stringify(result) + "\n", () => process.exit(0));
}
