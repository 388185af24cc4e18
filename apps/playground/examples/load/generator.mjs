// An open-loop HTTP load generator, run in a child process of its own so that its timing does
// not share an event loop with the server it loads. Call i is due at start + i·1000/rate ms
// and its latency is counted from that instant, not from when it was actually sent: a client
// held up by a slow server does not get to hide the wait (no "coordinated omission").
//
// Bounded twice: it stops sending after `count` calls or `duration` ms, whichever comes first,
// and stops waiting `grace` ms later; what is still unanswered then is counted as such.
//
// Its clients may retry: a call makes up to `attempts` attempts (1 by default: none). An attempt
// answered anything but 200, an error, or no answer within `timeout` ms (the attempt is then
// aborted, as a client's timeout would) is tried again after a full-jitter backoff (a random wait
// up to base·2^k ms, at most cap), unless the call's `deadline` would have passed by then.
//
// Usage: node generator.mjs '{"port":8080,"rate":500,"duration":2000,"count":1000,"grace":3000}'
//   (with retries, also "attempts":3,"timeout":400,"deadline":1000,"base":50,"cap":400)
// Prints one line of JSON: { sent, ok, refused, failed, unanswered, elapsed, attempts, refusals,
// timedOut }, where ok and refused list [due, latency] pairs in milliseconds of the calls answered
// 200 and of those whose last attempt was answered 503, `due` counted from the start of the run
// (call i's is exactly i·1000/rate, so a reader can count the calls due in a stretch); failed
// counts the calls that ended otherwise; attempts, refusals and timedOut count attempts.
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";

const {
  port,
  rate,
  duration,
  count = Infinity,
  grace,
  path = "/",
  sockets = 1_000,
  attempts = 1,
  timeout = Infinity,
  deadline = Infinity,
  base = 0,
  cap = 0,
} = JSON.parse(process.argv[2] ?? "{}");
const agent = new Agent({ keepAlive: true, maxSockets: sockets });
const result = {
  sent: 0,
  ok: [],
  refused: [],
  failed: 0,
  unanswered: 0,
  elapsed: 0,
  attempts: 0,
  refusals: 0,
  timedOut: 0,
};
const start = performance.now();
let open = 0;
let sending = true;

function send(i) {
  const offset = (i * 1000) / rate;
  const due = start + offset;
  result.sent++;
  open++;
  const done = (status) => {
    open--;
    const pair = [offset, performance.now() - due];
    if (status === 200) result.ok.push(pair);
    else if (status === 503) result.refused.push(pair);
    else result.failed++;
    if (!sending && open === 0) finish();
  };
  const attempt = (k) => {
    result.attempts++;
    let over = false;
    let timer;
    const again = (status) => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      const wait = Math.random() * Math.min(cap, base * 2 ** k);
      if (status !== 200 && k + 1 < attempts && performance.now() + wait - due < deadline)
        setTimeout(() => attempt(k + 1), wait);
      else done(status);
    };
    const req = request({ host: "127.0.0.1", port, path, agent }, (res) => {
      res.resume();
      res.on("end", () => {
        if (res.statusCode === 503 && !over) result.refusals++;
        again(res.statusCode);
      });
    });
    if (timeout < Infinity)
      timer = setTimeout(() => {
        result.timedOut++;
        again(0);
        req.destroy();
      }, timeout);
    req.on("error", () => again(0));
    req.end();
  };
  attempt(0);
}

// Every millisecond, send whatever has fallen due: the schedule, not the timer, sets the rate.
const ticker = setInterval(() => {
  const now = performance.now();
  while (sending && result.sent < count && start + (result.sent * 1000) / rate <= now) send(result.sent);
  if (result.sent >= count || now - start >= duration) {
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
  result.elapsed = performance.now() - start;
  agent.destroy();
  process.stdout.write(JSON.stringify(result) + "\n", () => process.exit(0));
}
