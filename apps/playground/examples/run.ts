// The example programs, one command each: `pnpm example <name>` runs one, `pnpm example all`
// runs every one, and `pnpm example` lists them. A program is a module whose `main()` returns
// the lines it prints, so its test reads exactly what a reader sees.
import { pathToFileURL } from "node:url";

/**
 * One example program: its name on the command line, what it shows, and how to load it. A
 * `live` program is handed a printer and prints as it goes (it still returns its lines).
 */
interface Program {
  readonly name: string;
  readonly what: string;
  readonly live?: boolean;
  readonly load: () => Promise<{ main: (print?: (line: string) => void) => string[] | Promise<string[]> }>;
}

const programs: readonly Program[] = [
  {
    name: "minimal",
    what: "one breaker, one failing backend, four lines of output: the smallest thing that works",
    load: () => import("./minimal.ts"),
  },
  {
    name: "limiters",
    what: "bursts straddling a second boundary through a bucket, a sliding window and a period",
    load: () => import("./limiters.ts"),
  },
  {
    name: "tour",
    what: "a breaker under an outage, a shedder under rising load, one step through each limiter",
    load: () => import("./tour.ts"),
  },
  {
    name: "guide",
    what: "every package in one program, from the simplest question to the composed ones",
    load: () => import("./guide.ts"),
  },
  {
    name: "backoff",
    what: "a herd of clients retrying with and without jitter, and with a retry budget",
    load: () => import("./backoff.ts"),
  },
  {
    name: "quota",
    what: "three budgets charged atomically, next to the same charges one after another",
    load: () => import("./quota.ts"),
  },
  {
    name: "shedder",
    what: "the shedder in front of a simulated one-core server offered more than it can do",
    load: () => import("./shedder.ts"),
  },
  {
    name: "client",
    what: "a breaker plus a bucket in a client, around a real local server that fails and recovers (about 4 s)",
    load: () => import("./client.ts"),
  },
  {
    name: "shedder-http",
    what: "the shedder in front of a real node:http server under a load generator (about 10 s)",
    load: () => import("./shedder-http.ts"),
  },
  {
    name: "concurrency-http",
    what: "adaptive limits with priority in front of a real node:http server, user and prefetch load (about 20 s)",
    load: () => import("./concurrency-http.ts"),
  },
  { name: "time", what: "spans, a manual clock and a deadline running down", load: () => import("./time.ts") },
  {
    name: "metrics",
    what: "a guarded client's OpenTelemetry metrics scraped from Prometheus's /metrics as its breaker opens and closes (about 8 s)",
    live: true,
    load: () => import("./metrics.ts"),
  },
];

/** The names a command line asks for, checked against the programs (`all` is every one). */
export function pick(args: readonly string[]): Program[] {
  const names = args.filter((a) => a !== "--");
  if (names.includes("all")) return [...programs];
  return names.map((name) => {
    const found = programs.find((p) => p.name === name);
    if (found === undefined)
      throw new Error(
        `no example named "${name}"; the examples are ${programs.map((p) => p.name).join(", ")} (or all)`,
      );
    return found;
  });
}

/** What `pnpm example` with no name prints. */
export function listing(): string[] {
  const width = Math.max(...programs.map((p) => p.name.length));
  return [
    "The example programs; run one with `pnpm example <name>`, or every one with `pnpm example all`:",
    ...programs.map((p) => `  ${p.name.padEnd(width)}  ${p.what}`),
  ];
}

async function cli(args: readonly string[]): Promise<void> {
  let chosen: Program[];
  try {
    chosen = pick(args);
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode = 2;
    return;
  }
  if (chosen.length === 0) {
    for (const line of listing()) console.log(line);
    return;
  }
  for (const [i, program] of chosen.entries()) {
    if (chosen.length > 1) console.log(`${i === 0 ? "" : "\n"}── ${program.name}: ${program.what} ──`);
    const { main } = await program.load();
    if (program.live) await main((line) => console.log(line));
    else for (const line of await main()) console.log(line);
  }
}

// Run as a program (not imported by a test): do what the command line asks.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  await cli(process.argv.slice(2));
