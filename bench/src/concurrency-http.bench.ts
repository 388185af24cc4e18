// Adaptive concurrency limits on a real node:http server, against no policy, a static gate and
// the shedder, and whether the simulator predicted their order. Each request waits 5 ms (a
// database, say) and then burns 10 ms of CPU, so the one event loop serves at most ~100 a second.
// Two load generators in child processes offer user requests and prefetch
// requests at once, 2.4 times what it serves in first attempts alone, and their clients retry: an attempt
// refused (503) or unanswered within its timeout is tried again after a full-jitter backoff,
// within the call's deadline. Goodput is the share of calls answered within the deadline of when
// they were due; p99 is of those answered, from when they were due.
//
//   flock /tmp/tideward-bench.lock npx -y pnpm@12.4.2 bench concurrency-http
//
// The capacity is measured first (what a gate answers a second, offered far more) and the load set
// from it, since a shared machine gives the server less than a core. Then the same setup in the
// simulator (one worker serving the measured capacity, the same rates, timeouts, retries and
// policies) and the two orders by goodput side by side. A bench, not a test: its figures depend
// on the machine and what else it runs (print `uptime` beside them).
//
// The server, the policies' glue and the load generator are the adaptive-limit example's
// (apps/playground/examples/load/busy-server.ts), run here with the benchmark's costs and retries.
import { performance } from "node:perf_hooks";
import { loadavg } from "node:os";
import { Jitter } from "@tideward/backoff";
import { AimdLimit, FixedLimit, Gradient2Limit, Limiter, Priorities, VegasLimit } from "@tideward/concurrency";
import { Shedder } from "@tideward/shedder";
import { LoadSampler } from "@tideward/shedder/node";
import { keys, simulate, traffic } from "@tideward/sim";
import type { PolicySpec } from "@tideward/sim";
import { generate, limited, open, serve, shed } from "../../apps/playground/examples/load/busy-server";
import type { Admit, Level, Seen } from "../../apps/playground/examples/load/busy-server";

/** The policies compared, in the order they run. */
const POLICIES = ["none", "gate", "shedder+priority", "gradient2+priority", "vegas+priority", "aimd+priority"] as const;
type Policy = (typeof POLICIES)[number];

/** Each request's cost: 5 ms waited, then 10 ms of CPU, so the one event loop serves at most ~100 a second. */
const WORK = { wait: 5, burn: 10 } as const;
/** What the offered load is of the capacity measured first: 2.4 times, a quarter of it user calls. */
const OVER = 2.4;
const USER_SHARE = 0.25;
const LOAD = {
  duration: 4_000,
  grace: 1_500,
  /** An attempt's timeout, ms. */
  timeout: 400,
  /** A call's deadline from when it was due, ms: only an answer within it is goodput. */
  deadline: 1_000,
  /** Attempts a call may make, the first included. */
  attempts: 3,
  /** Full-jitter backoff: up to base · 2^k ms, at most cap. */
  base: 50,
  cap: 400,
} as const;
/** The static gate's places: what one loop with a 5 ms wait keeps busy (1.5), and then some. */
const GATE = 4;
/** User first; prefetch may fill at most half the places. */
const LEVELS = new Priorities({ levels: ["user", "prefetch"], shares: [0.5, 0.5], fallback: "user" });
const PRESETS = { min: 1 } as const;

/**
 * The policy `p` in front of a handler: the same code judges the real server's requests and the
 * simulated ones. `load()` is the CPU load the shedder reads (the machine's, or the simulated
 * backend's); `now` is milliseconds on the caller's clock.
 */
function admitter(p: Policy, load: (now: number) => number, start: number): Admit {
  switch (p) {
    case "none":
      return open;
    case "gate":
      return limited(new Limiter(new FixedLimit(GATE), { now: start }));
    case "gradient2+priority":
      return limited(new Limiter(new Gradient2Limit(PRESETS), { priorities: LEVELS, now: start }));
    case "vegas+priority":
      return limited(new Limiter(new VegasLimit(PRESETS), { priorities: LEVELS, now: start }));
    case "aimd+priority":
      return limited(
        new Limiter(new AimdLimit({ ...PRESETS, timeout: LOAD.timeout }), { priorities: LEVELS, now: start }),
      );
    case "shedder+priority":
      return shed(new Shedder({}, start, LEVELS), load);
  }
}

/** `p` as a simulator policy on the server, each call's priority read from its key. */
function simulatedPolicy(p: Policy, levelOf: (key: number) => Level): PolicySpec {
  return {
    name: p,
    create(context) {
      const admit = admitter(p, context.cpu, context.start);
      let held = 0;
      return {
        name: p,
        side: "server",
        reason: p,
        admit: (now, key) => {
          const settle = admit(now, levelOf(key));
          if (settle !== undefined) held++;
          return settle;
        },
        settle: (token, now, ok) => {
          held--;
          (token as (now: number, ok: boolean) => void)(now, ok);
        },
        // Released later than let in: dropped unserved, its caller gone (a timeout). The simulated
        // backend serves every call here, so this is not reached; it is here for completeness.
        release: (token, now) => {
          held--;
          (token as (now: number, ok: boolean) => void)(now, false);
        },
        held: () => held,
      };
    },
  };
}

/** Calls a second offered, per priority: set once the capacity is measured. */
const RATES = { user: 60, prefetch: 180 };

/** Starts the server with `p` in front, drives it with both generators at once, and stops it. */
async function run(p: Policy, duration: number = LOAD.duration): Promise<Record<Level, Seen>> {
  const sampler = p === "shedder+priority" ? new LoadSampler({ interval: 50, beta: 0.3 }) : undefined;
  const server = await serve(
    admitter(p, () => sampler?.load ?? 0, performance.now()),
    WORK,
  );
  const offer = (level: Level) =>
    generate({ port: server.port, path: `/${level}`, rate: RATES[level], sockets: 2_000, ...LOAD, duration });
  try {
    const [user, prefetch] = await Promise.all([offer("user"), offer("prefetch")]);
    return { user, prefetch };
  } finally {
    sampler?.stop();
    await server.close();
  }
}

/** A call's latency (ms) for each answered 200. */
const latencies = (s: Seen) => s.ok.map(([, latency]) => latency);
const inTime = (s: Seen) => (s.sent > 0 ? latencies(s).filter((ms) => ms <= LOAD.deadline).length / s.sent : 0);
function p99(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

/** The same setup in the simulator: goodput per priority and the p99 of successful attempts. */
function simulated(
  p: Policy,
  seed: number,
  service: number,
): { user: number; prefetch: number; all: number; p99: number } {
  const mixed = traffic.merge(
    traffic.priority("user", traffic.constant({ rate: RATES.user, keys: keys.single("user") })),
    traffic.priority("prefetch", traffic.constant({ rate: RATES.prefetch, keys: keys.single("prefetch") })),
  );
  const levelOf = (key: number): Level => (mixed.keys.priority?.(key) === "prefetch" ? "prefetch" : "user");
  const r = simulate({
    seed,
    duration: 30_000,
    traffic: mixed,
    backend: { latency: service, workers: 1, queue: 100_000 },
    client: {
      timeout: LOAD.timeout,
      deadline: LOAD.deadline,
      retry: {
        backoff: { attempts: LOAD.attempts, base: LOAD.base, factor: 2, cap: LOAD.cap, jitter: Jitter.full },
        budget: false,
      },
    },
    policies: p === "none" ? [] : [simulatedPolicy(p, levelOf)],
    drain: 0,
  });
  const by = r.summary.byPriority ?? {};
  return {
    user: by.user?.goodputRate ?? 0,
    prefetch: by.prefetch?.goodputRate ?? 0,
    all: r.summary.goodput / r.summary.calls,
    p99: r.summary.latency.p99 ?? Number.NaN,
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`.padStart(8);
const ms = (x: number) => (Number.isNaN(x) ? "—" : x.toFixed(0)).padStart(6);
const order = (xs: readonly (readonly [Policy, number])[]) =>
  [...xs]
    .sort((a, b) => b[1] - a[1])
    .map(([p]) => p)
    .join(" > ");

console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
// Warm the server's code and the loop's JIT at an easy load first, so the first policy run does not pay for it.
await run("none", 1_000);
// The capacity on this machine now: what the gate answers a second when offered far more. On a
// machine shared with other work it is under the nominal 1000 / WORK.burn; the load is set from it.
const probe = await run("gate", 2_000);
const capacity = ((probe.user.ok.length + probe.prefetch.ok.length) * 1_000) / 2_000;
RATES.user = Math.round(capacity * OVER * USER_SHARE);
RATES.prefetch = Math.round(capacity * OVER * (1 - USER_SHARE));
console.log(
  `measured capacity ${capacity.toFixed(0)}/s (nominal ${1_000 / WORK.burn}/s); offered ${OVER}× that: ${RATES.user} user + ${RATES.prefetch} prefetch calls/s`,
);
console.log(
  `${RATES.user} user + ${RATES.prefetch} prefetch calls/s for ${LOAD.duration / 1_000} s over loopback to a server of ~${capacity.toFixed(0)}/s (${WORK.wait} ms wait + ${WORK.burn} ms CPU each); attempts time out after ${LOAD.timeout} ms, ${LOAD.attempts} attempts at most (full jitter from ${LOAD.base} ms, cap ${LOAD.cap} ms), a ${LOAD.deadline} ms deadline`,
);
const real: [Policy, number][] = [];
console.log(
  `${"policy".padEnd(20)} ${"goodput".padStart(8)} ${"user".padStart(8)} ${"prefetch".padStart(8)} ${"p99 ms".padStart(6)} attempts/call answered`,
);
for (const p of POLICIES) {
  const seen = await run(p);
  const all: Seen = {
    sent: seen.user.sent + seen.prefetch.sent,
    ok: [...seen.user.ok, ...seen.prefetch.ok],
    refused: [...seen.user.refused, ...seen.prefetch.refused],
    failed: seen.user.failed + seen.prefetch.failed,
    unanswered: seen.user.unanswered + seen.prefetch.unanswered,
    elapsed: Math.max(seen.user.elapsed, seen.prefetch.elapsed),
    attempts: seen.user.attempts + seen.prefetch.attempts,
    refusals: seen.user.refusals + seen.prefetch.refusals,
    timedOut: seen.user.timedOut + seen.prefetch.timedOut,
  };
  real.push([p, inTime(all)]);
  console.log(
    `${p.padEnd(20)} ${pct(inTime(all))} ${pct(inTime(seen.user))} ${pct(inTime(seen.prefetch))} ${ms(p99(latencies(all)))} ${(all.attempts / all.sent).toFixed(2)}     ${((all.ok.length * 1_000) / LOAD.duration).toFixed(0)}/s`,
  );
}
const service = 1_000 / capacity;
console.log(
  `simulated (one worker of ${service.toFixed(1)} ms: the measured capacity; 30 s, seeds 1-3: goodput, user, prefetch; p99 of successful attempts):`,
);
const sim: [Policy, number][] = [];
for (const p of POLICIES) {
  const runs = [1, 2, 3].map((seed) => simulated(p, seed, service));
  const mean = (f: (x: (typeof runs)[number]) => number) => runs.reduce((a, x) => a + f(x), 0) / runs.length;
  sim.push([p, mean((x) => x.all)]);
  console.log(
    `${p.padEnd(20)} ${pct(mean((x) => x.all))} ${pct(mean((x) => x.user))} ${pct(mean((x) => x.prefetch))} ${ms(mean((x) => x.p99))}`,
  );
}
console.log(`order by goodput, real:      ${order(real)}`);
console.log(`order by goodput, simulated: ${order(sim)}`);
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
