// Backoff and the herd: clients that failed together retry with each of the five jitters
// against a backend that is down until `recovery` and then serves at most `capacity` a second.
import { Jitter } from "@tideward/backoff";
import type { Jitter as JitterType } from "@tideward/backoff";
import { failures, latency, simulate, traffic } from "@tideward/sim";
import type { SimulationOptions } from "@tideward/sim";
import { call, lit, raw } from "../code.ts";
import type { Code } from "../code.ts";
import type { Outcome, Params } from "../model.ts";
import { figure, line, n, perSecond, s, summary, rowsOf } from "./common.ts";
import type { Measure, Named } from "./common.ts";

/** What a backend call takes, ms: the capacity is workers over this. */
const SERVICE = 10;

/** Seconds from the start until the last call that ended in a success ended. */
function lastServed(r: Named): Measure {
  const { t, completed } = r.run.series;
  let last = -1;
  completed.forEach((c, i) => {
    if (c > 0) last = i;
  });
  return { value: last < 0 ? 0 : ((t[last] ?? 0) + r.run.step) / 1_000, expr: `lastServed(${r.name})` };
}

/** The busiest bucket at the backend from bucket `from` on, in calls per second. */
function peakAfter(r: Named, from: number): Measure {
  const busiest = Math.max(0, ...r.run.series.backendLoad.slice(from));
  return {
    value: (busiest * 1_000) / r.run.step,
    expr: `(Math.max(0, ...${r.name}.series.backendLoad.slice(${from})) * 1000) / ${r.name}.step`,
  };
}

const lastServedHelper = [
  "// Seconds from the start to the end of the last bucket in which a client's call succeeded.",
  "const lastServed = (run: ReturnType<typeof simulate>): number => {",
  "  const last = run.series.completed.findLastIndex((c) => c > 0);",
  "  return last < 0 ? 0 : (run.series.t[last] + run.step) / 1000;",
  "};",
];

export function herd(p: Params): Outcome {
  const clients = n(p, "clients");
  const recovery = n(p, "recovery");
  const workers = Math.max(1, Math.round((n(p, "capacity") * SERVICE) / 1_000));
  const capacity = (workers * 1_000) / SERVICE;
  const base = n(p, "base");
  const factor = n(p, "factor");
  const cap = Math.max(n(p, "cap"), base);
  const attempts = n(p, "attempts");
  const f = n(p, "spread");
  const jitters: [id: string, label: string, jitter: Code<JitterType>][] = [
    ["rigid", "rigid", raw("Jitter.rigid", Jitter.rigid)],
    ["full", "full", raw("Jitter.full", Jitter.full)],
    ["equal", "equal", raw("Jitter.equal", Jitter.equal)],
    ["decorrelated", "decorrelated", raw("Jitter.decorrelated", Jitter.decorrelated)],
    ["spread", `spread(${f})`, call("Jitter.spread", Jitter.spread, f)],
  ];
  // Long enough for every client's last retry: each wait is at most three ceilings (decorrelated)
  // or the cap, whichever is less, or the ceiling spread by f.
  let longest = 0;
  for (let r = 1; r < attempts; r++) {
    const ceiling = Math.min(base * factor ** (r - 1), cap);
    longest += Math.max(Math.min(3 * ceiling, cap), ceiling * (1 + f));
  }
  const bin = n(p, "bin");
  const duration = Math.ceil((n(p, "within") + recovery + longest + attempts * SERVICE + 1_000) / bin) * bin;
  const shared = lit({
    seed: n(p, "seed"),
    duration,
    step: bin,
    traffic: call("traffic.herd", traffic.herd, { clients, spread: n(p, "within") }),
    backend: {
      latency: call("latency.fixed", latency.fixed, SERVICE),
      failures: call("failures.schedule", failures.schedule, [{ from: 0, to: recovery, rate: 1 }]),
      workers,
      queue: 0,
    },
  });
  const options: Omit<SimulationOptions, "client" | "label"> = shared.value;
  const clientFor = (jitter: Code<JitterType>) => lit({ retry: { backoff: { base, factor, cap, attempts, jitter } } });
  const runs: Named[] = jitters.map(([id, label, jitter]) => ({
    name: id,
    run: simulate({ ...options, label, client: clientFor(jitter).value }),
  }));
  const byId = new Map(runs.map((r) => [r.name, r]));
  const chosen = byId.get(s(p, "jitter")) ?? runs[1];
  const rigid = runs[0];
  const back = Math.floor(recovery / bin);
  const row = rowsOf(runs);
  const rows = [
    row("retries", "", 0, (r) => summary(r, "retries"), "retries"),
    row("calls that reached the backend", "", 0, (r) => summary(r, "backendLoad"), "backendLoad"),
    row(`busiest ${bin} ms at the backend once it is back`, "calls/s", 0, (r) => peakAfter(r, back), "peak"),
    row("clients served", "", 0, (r) => summary(r, "completed"), "served"),
    row("clients that gave up", "", 0, (r) => summary(r, "gaveUp"), "gaveUp"),
    row("the last client served by", "s", 2, lastServed, "last"),
  ];
  // The charts end a little after the last attempt of any run shown; the load chart starts when
  // the backend is back, since the first failures at 0 ms would dwarf what follows.
  let end = 0;
  for (const r of runs) r.run.series.attempts.forEach((a, i) => (end = a > 0 ? Math.max(end, i + 1) : end));
  end = Math.min(rigid.run.series.t.length, Math.ceil(end * 1.05) + 1);
  const cut = <T>(xs: readonly T[], from = 0): T[] => xs.slice(from, end);
  const x = cut(rigid.run.series.t.map((t) => t / 1_000));
  const sides = (r: Named) =>
    r === rigid ? { side: "baseline" as const, color: "#c2410c" } : { side: "tideward" as const, color: "#0b6e99" };
  const shown = chosen === rigid ? [rigid] : [chosen, rigid];
  return {
    charts: [
      {
        id: "retries",
        title: `When the retries land: retries started per ${bin} ms`,
        kind: "bars",
        x: { label: "time (s)", values: x },
        y: { label: `retries per ${bin} ms`, min: 0 },
        series: shown.map((r) => line(`${r.run.label} jitter`, cut(r.run.series.retries), sides(r))),
      },
      {
        id: "load",
        title: "Load on the backend once it is back (calls/s)",
        x: { label: "time (s)", values: x.slice(back) },
        y: { label: "calls/s", min: 0 },
        series: [
          line(
            "what it can serve",
            x.slice(back).map(() => capacity),
            { color: "#6b7280", dash: true },
          ),
          ...shown.map((r) =>
            line(`${r.run.label} jitter`, cut(perSecond(r.run, r.run.series.backendLoad), back), sides(r)),
          ),
        ],
      },
    ],
    figures: [figure("clients", "clients failing together", "", 0, summary(rigid, "calls"))],
    tables: [
      {
        caption: `${clients} clients, the backend down until ${recovery} ms and then serving ${capacity} calls/s; each jitter on the same clients`,
        columns: ["", ...jitters.map(([, label]) => label)],
        rows,
      },
    ],
    notes: [
      `Rigid waits put every client's retry in the same instant: once the backend is back, its busiest ${bin} ms takes ${peakAfter(rigid, back).value.toFixed(0)} calls/s, against the ${capacity} it can serve. ${chosen.run.label} jitter spreads them (busiest: ${peakAfter(chosen, back).value.toFixed(0)} calls/s), and ${chosen.run.summary.completed} of ${clients} clients ${chosen.run.summary.completed === 1 ? "is" : "are"} served, against ${rigid.run.summary.completed} with rigid waits.`,
    ],
    replay: {
      body: [
        ...lastServedHelper,
        `const shared = ${shared.source};`,
        ...jitters.map(
          ([id, label, jitter]) =>
            `const ${id} = simulate({ ...shared, label: ${JSON.stringify(label)}, client: ${clientFor(jitter).source} });`,
        ),
      ],
    },
    simulated: { runs: runs.length, ms: duration, calls: clients * runs.length },
  };
}
