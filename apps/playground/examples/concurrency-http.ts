// Adaptive concurrency limits with priority in front of a real node:http server. Each request
// waits 2 ms on a (simulated) database and then burns 4 ms of CPU synchronously, so one core
// serves at most ~250 requests a second. Two load generators in child processes offer user
// requests (`/user`, at half that) and prefetch requests (`/prefetch`, twice that) at once, over
// loopback: about 2.5 times what the server can do. Each run puts one policy in front of the
// handler — none, a static gate of 8 places, the shedder, AIMD and Gradient2 — the last three
// judging calls by priority, prefetch allowed at most half the places. The lines printed give,
// per run and per kind of request, the share answered within the deadline, and the p99 of the
// answers.
//
// The generators do not retry: a refused request is counted as refused. Latency is counted from
// when each request was due, so time spent queued in the kernel counts. The server and the
// generators are load/busy-server.ts's, which bench/src/concurrency-http.bench.ts measures too.
import { performance } from "node:perf_hooks";
import { AimdLimit, FixedLimit, Gradient2Limit, Limiter, Priorities } from "@tideward/concurrency";
import { Shedder } from "@tideward/shedder";
import { LoadSampler } from "@tideward/shedder/node";
import { generate, limited, open, serve, shed } from "./load/busy-server";
import type { Admit, Level, Seen } from "./load/busy-server";
import { percentile } from "./shedder-http";

/** The policies compared. */
export type Policy = "none" | "gate" | "shedder" | "aimd" | "gradient2";
export const POLICIES: readonly Policy[] = ["none", "gate", "shedder", "aimd", "gradient2"];

/** What one run is offered. */
export interface Load {
  /** User requests a second, and prefetch requests a second. */
  readonly user: number;
  readonly prefetch: number;
  /** How long the generators send, ms. */
  readonly duration: number;
  /** How long they wait for answers after, ms. */
  readonly grace: number;
  /** An answer later than this after the request was due is not goodput, ms. */
  readonly deadline: number;
}

/** One run: each kind's requests. */
export interface HttpRun {
  readonly policy: Policy;
  readonly user: Seen;
  readonly prefetch: Seen;
}

const LEVELS = new Priorities({ levels: ["user", "prefetch"], shares: [0.5, 0.5], fallback: "user" });
/** Each request's cost: 2 ms waited, then 4 ms of CPU. */
const WORK = { wait: 2, burn: 4 } as const;

function admitter(policy: Policy, deadline: number): { admit: Admit; stop: () => void } {
  switch (policy) {
    case "none":
      return { admit: open, stop: () => {} };
    case "gate":
      return { admit: limited(new Limiter(new FixedLimit(8))), stop: () => {} };
    case "aimd":
      return {
        admit: limited(new Limiter(new AimdLimit({ min: 1, timeout: deadline }), { priorities: LEVELS })),
        stop: () => {},
      };
    case "gradient2":
      return { admit: limited(new Limiter(new Gradient2Limit({ min: 1 }), { priorities: LEVELS })), stop: () => {} };
    case "shedder": {
      const sampler = new LoadSampler({ interval: 50, beta: 0.3 });
      const shedder = new Shedder({}, performance.now(), LEVELS);
      return { admit: shed(shedder, () => sampler.load), stop: () => sampler.stop() };
    }
  }
}

/** Starts the server with `policy` in front, drives it with both generators at once, and stops it. */
export async function runHttp(policy: Policy, load: Load): Promise<HttpRun> {
  const { admit, stop } = admitter(policy, load.deadline);
  const server = await serve(admit, WORK);
  const offer = (level: Level, rate: number) =>
    generate({
      port: server.port,
      path: `/${level}`,
      rate,
      duration: load.duration,
      count: Math.ceil((rate * load.duration) / 1_000),
      grace: load.grace,
    });
  try {
    const [user, prefetch] = await Promise.all([offer("user", load.user), offer("prefetch", load.prefetch)]);
    return { policy, user, prefetch };
  } finally {
    stop();
    await server.close();
  }
}

/** The share of `seen`'s requests answered within `deadline` ms of being due. */
export function inTime(seen: Seen, deadline: number): number {
  return seen.sent > 0 ? seen.ok.filter(([, latency]) => latency <= deadline).length / seen.sent : 0;
}

/** The table of a set of runs. */
export function report(load: Load, runs: readonly HttpRun[]): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`.padStart(9);
  const ms = (s: Seen) => {
    const v = percentile(s.ok, 99);
    return (Number.isNaN(v) ? "—" : v.toFixed(0)).padStart(8);
  };
  return [
    `${load.user} user + ${load.prefetch} prefetch requests/s for ${load.duration / 1_000} s over loopback to a server of ~${1_000 / WORK.burn}/s (${WORK.wait} ms wait + ${WORK.burn} ms CPU each); a ${load.deadline} ms deadline`,
    `${"policy".padEnd(12)} user in time  prefetch in time  user p99  prefetch p99`,
    ...runs.map(
      (r) =>
        `${r.policy.padEnd(12)}    ${pct(inTime(r.user, load.deadline))}         ${pct(inTime(r.prefetch, load.deadline))}  ${ms(r.user)}      ${ms(r.prefetch)}`,
    ),
    "in time: answered 200 within the deadline of when it was due, over requests sent; p99 of the 200s, ms",
    "gate: 8 places, no priority; shedder, aimd, gradient2: priority, prefetch at most half the places",
  ];
}

/** The default load: about 2.5 times what one core serves. */
export const LOAD: Load = { user: 125, prefetch: 500, duration: 2_000, grace: 1_500, deadline: 500 };

/** Returns the lines this example prints: about twenty seconds of real traffic. */
export async function main(): Promise<string[]> {
  const runs: HttpRun[] = [];
  for (const p of POLICIES) runs.push(await runHttp(p, LOAD));
  return report(LOAD, runs);
}
