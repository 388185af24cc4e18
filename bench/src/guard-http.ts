// The server under load, for guard.bench.ts: admitNode (a gate and a per-key bucket) in front of
// a trivial node:http handler and in front of Express, against the bare servers and Express with
// express-rate-limit. Each server runs in a process of its own (http-server.ts) and reports its
// own CPU time; one load generator in another child (load.mjs, autocannon 9) drives them in
// rounds taken in turn, so that all see the same noise of a shared machine.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { median } from "./harness";
import type { ServerKind } from "./http-server";

interface Served {
  readonly port: number;
  /** This server's CPU time so far (µs) and the requests it has served. */
  readonly mark: () => Promise<{ cpu: number; served: number }>;
  readonly stop: () => Promise<void>;
}

/** Starts the server of `kind` in a child process and waits for its port. */
async function start(kind: ServerKind): Promise<Served> {
  const args = ["--conditions=@tideward/source", "--import", "tsx", join(import.meta.dirname, "http-server.ts"), kind];
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (m: { port: number }) => resolve(m.port));
    child.once("exit", (code) => reject(new Error(`server ${kind} exited with ${code} before listening`)));
  });
  return {
    port,
    mark: () =>
      new Promise((resolve) => {
        child.once("message", resolve);
        child.send("mark");
      }),
    stop: async () => {
      if (child.connected) child.send("stop");
      const backstop = setTimeout(() => child.kill(), 5_000);
      await exited;
      clearTimeout(backstop);
    },
  };
}

interface Load {
  /** Requests per second of each round, per server. */
  readonly rates: number[][];
  /** The server's CPU time per request served in each round, per server, in microseconds. */
  readonly cpu: number[][];
  readonly other: number;
}

/**
 * Drives the servers in rounds taken in turn from one child process running autocannon. At the
 * edges of each round the child waits while the round's server reports its CPU time and the
 * requests served, which gives its CPU per request beside its throughput.
 */
async function load(servers: readonly Served[], rounds: number, seconds: number): Promise<Load> {
  const args = [
    join(import.meta.dirname, "load.mjs"),
    JSON.stringify({ ports: servers.map((s) => s.port), rounds, seconds, connections: 32 }),
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit", "ipc"] });
  const cpu: number[][] = servers.map(() => []);
  let at = { cpu: 0, served: 0 };
  child.on("message", (m: { start?: number; end?: number }) => {
    const which = m.start ?? m.end ?? 0;
    void servers[which].mark().then((now) => {
      if (m.start !== undefined) at = now;
      else cpu[which].push((now.cpu - at.cpu) / (now.served - at.served));
      child.send("go");
    });
  });
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (c: string) => (out += c));
  const backstop = setTimeout(() => child.kill(), (rounds + 1) * servers.length * seconds * 4_000 + 60_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(backstop);
  if (code !== 0) throw new Error(`load generator exited with ${code}`);
  const { rates, other } = JSON.parse(out) as { rates: number[][]; other: number };
  return { rates, cpu, other };
}

/**
 * The issue's method: autocannon 9 in a child process, 32 connections, rounds of 2 s to each
 * server in turn (6 unless GUARD_BENCH_HTTP_ROUNDS says); a gate and a per-key bucket. node:http
 * with admitNode against the bare server, and Express with admitNode against Express with
 * express-rate-limit 8.7.5.
 */
export async function http(): Promise<void> {
  const ROUNDS = Number(process.env.GUARD_BENCH_HTTP_ROUNDS ?? 6);
  const SECONDS = 2;
  const kinds: readonly (readonly [string, ServerKind])[] = [
    ["node:http, bare", "bare"],
    ["node:http, the handler writing the fields", "fields"],
    ["node:http + admitNode", "admitNode"],
    ["Express 5, bare", "express"],
    ["Express 5 + admitNode", "express-admit"],
    ["Express 5 + express-rate-limit 8.7.5", "express-rate-limit"],
  ] as const;
  const servers = await Promise.all(kinds.map(([, k]) => start(k)));
  try {
    const { rates, cpu, other } = await load(servers, ROUNDS, SECONDS);
    if (other > 0) throw new Error(`${other} requests did not answer 200`);
    console.log(
      `\nserver: autocannon 9 in a child process, 32 connections, ${ROUNDS} rounds of ${SECONDS} s to each server in turn, each server in a process of its own`,
    );
    console.log(
      `  ${"".padEnd(38)} ${"requests/s".padStart(11)} ${"(range)".padEnd(16)} ${"CPU µs/request".padStart(15)}`,
    );
    for (const [i, [name]] of kinds.entries())
      console.log(
        `  ${name.padEnd(38)} ${Math.round(median(rates[i])).toLocaleString("en").padStart(11)} ${`${Math.round(Math.min(...rates[i]))}–${Math.round(Math.max(...rates[i]))}`.padEnd(16)} ${median(cpu[i]).toFixed(2).padStart(15)}`,
      );
    // Each round's ratio against the same round's reference, so a burst of the machine's other
    // work that lands on both moves neither.
    const per = (a: number, b: number, xs: number[][]) => xs[a].map((x, k) => x / xs[b][k]);
    const show = (xs: number[]) =>
      `${median(xs).toFixed(3)}× (rounds ${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)})`;
    console.log(
      `  node:http + admitNode over bare: requests/s ${show(per(2, 0, rates))}, CPU a request ${show(per(2, 0, cpu))} (no target of its own: read it beside the floor's, next)`,
    );
    console.log(
      `  the floor: the handler writing admitNode's two fields itself, over bare (what the fields' bytes cost): requests/s ${show(per(1, 0, rates))}, CPU a request ${show(per(1, 0, cpu))}`,
    );
    console.log(
      `  node:http + admitNode over that handler (the admission's own cost): requests/s ${show(per(2, 1, rates))}, CPU a request ${show(per(2, 1, cpu))}`,
    );
    console.log(
      `  Express + admitNode over Express + express-rate-limit: requests/s ${show(per(4, 5, rates))} (target at least 1.2×), CPU a request ${show(per(5, 4, cpu))} the other way`,
    );
    console.log(
      `  Express + admitNode over bare Express: requests/s ${show(per(4, 3, rates))}, CPU a request ${show(per(4, 3, cpu))}`,
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}
