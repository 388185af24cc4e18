// Sweeps: one knob (the backend's failure rate, or the client count) across its range, a whole
// run at each value, clients retrying with backoff through tideward's breaker next to the same
// clients with no breaker.
import { keys, latency, policy, simulate, traffic } from "@tideward/sim";
import type { SimulationOptions } from "@tideward/sim";
import { call, lit, raw, sym } from "../code.ts";
import type { Code } from "../code.ts";
import type { Figure, Outcome, Params } from "../model.ts";
import { counted } from "../units.ts";
import { figure, line, n, s } from "./common.ts";
import type { Measure } from "./common.ts";

/** The backend every point runs against: 20 ms a call on ten workers (500 calls/s), a queue of a hundred. */
const WORKERS = 10;
const QUEUE = 100;
const SERVICE = 20;

/** What the sweep shows, read off its table: the point where retries cost the unprotected backend most. */
function note(rows: readonly { cells: readonly Figure[] }[], labels: readonly string[]): string {
  let worst = 0;
  rows.forEach((r, i) => {
    if ((r.cells[5]?.value ?? 0) > (rows[worst]?.cells[5]?.value ?? 0)) worst = i;
  });
  const c = rows[worst]?.cells.map((f) => f.value) ?? [];
  const [twSuccess, plSuccess, twLoad, plLoad, twAmp, plAmp] = c.map((v, i) => v.toFixed(i >= 4 ? 2 : 1));
  return `At ${labels[worst]}, clients with no breaker retry every failure: each call costs the backend ${plAmp} calls (${plLoad} calls/s) and ${plSuccess} % of calls succeed. Through tideward's breaker it is ${twAmp} calls a call (${twLoad} calls/s), and ${twSuccess} % succeed: the breaker spares the backend what the retries would have cost, and refuses calls that a retry might have carried.`;
}

export function sweep(p: Params): Outcome {
  const knob = s(p, "knob") === "clients" ? "clients" : "failure";
  const points = n(p, "points");
  const rate = n(p, "rate");
  const duration = n(p, "duration") * 1_000;
  const values = Array.from({ length: points }, (_, i) => {
    const f = points === 1 ? 0 : i / (points - 1);
    return knob === "failure"
      ? Math.round(f * n(p, "failureMax")) / 100
      : Math.round(10 + f * (n(p, "clientsMax") - 10));
  });
  /** The options of one run, the swept value given as code (a number, or the name `v` for the replay). */
  const options = (failure: Code<number>, clients: Code<number>, offered: Code<number>, breaker: boolean) =>
    lit({
      seed: n(p, "seed"),
      duration,
      traffic: call("traffic.poisson", traffic.poisson, {
        rate: offered,
        keys: call("keys.uniform", keys.uniform, { count: clients, prefix: "client-" }),
      }),
      backend: {
        latency: call("latency.exponential", latency.exponential, SERVICE),
        failures: failure,
        workers: WORKERS,
        queue: QUEUE,
      },
      client: { retry: { backoff: { attempts: n(p, "attempts") } } },
      policies: breaker ? [call("policy.breaker", policy.breaker)] : [],
    });
  const fixedFailure = n(p, "failure") / 100;
  const fixedClients = n(p, "clients");
  const at = (v: number, breaker: boolean): Code<SimulationOptions> => {
    const clients = knob === "clients" ? v : fixedClients;
    return options(lit(knob === "failure" ? v : fixedFailure), lit(clients), lit(clients * rate), breaker);
  };
  const tideward = values.map((v) => simulate(at(v, true).value));
  const plain = values.map((v) => simulate(at(v, false).value));
  const v = sym("v");
  const symbolic = (breaker: boolean) =>
    knob === "failure"
      ? options(v, lit(fixedClients), lit(fixedClients * rate), breaker)
      : options(lit(fixedFailure), v, raw(`v * ${rate}`, 0), breaker);

  const success = (name: string, i: number, r = name === "tideward" ? tideward : plain): Measure => ({
    value: (r[i]?.summary.successRate ?? 0) * 100,
    expr: `(${name}[${i}].summary.successRate ?? 0) * 100`,
  });
  const amplification = (name: string, i: number, r = name === "tideward" ? tideward : plain): Measure => ({
    value: r[i]?.summary.amplification ?? 0,
    expr: `${name}[${i}].summary.amplification ?? 0`,
  });
  const load = (name: string, i: number, r = name === "tideward" ? tideward : plain): Measure => ({
    value: ((r[i]?.summary.backendLoad ?? 0) * 1_000) / duration,
    expr: `(${name}[${i}].summary.backendLoad * 1000) / ${duration}`,
  });
  const shown = (x: number) => (knob === "failure" ? `${Math.round(x * 100)} %` : `${x} clients`);
  const rows = values.map((x, i): { label: string; cells: Figure[] } => ({
    label: knob === "failure" ? `failing ${shown(x)}` : shown(x),
    cells: [
      figure(
        `p${i}.tideward.success`,
        `${shown(x)}, tideward breaker: calls that succeeded`,
        "%",
        1,
        success("tideward", i),
      ),
      figure(`p${i}.plain.success`, `${shown(x)}, no breaker: calls that succeeded`, "%", 1, success("plain", i)),
      figure(`p${i}.tideward.load`, `${shown(x)}, tideward breaker: backend load`, "calls/s", 1, load("tideward", i)),
      figure(`p${i}.plain.load`, `${shown(x)}, no breaker: backend load`, "calls/s", 1, load("plain", i)),
      figure(
        `p${i}.tideward.amplification`,
        `${shown(x)}, tideward breaker: backend calls per call`,
        "",
        2,
        amplification("tideward", i),
      ),
      figure(
        `p${i}.plain.amplification`,
        `${shown(x)}, no breaker: backend calls per call`,
        "",
        2,
        amplification("plain", i),
      ),
    ],
  }));
  const xs = values.map((x) => (knob === "failure" ? x * 100 : x));
  const xLabel = knob === "failure" ? "backend failure rate (%)" : "clients";
  const tw = { side: "tideward" as const, color: "#0b6e99" };
  const bl = { side: "baseline" as const, color: "#c2410c" };
  const column = (col: number) => rows.map((r) => r.cells[col]?.value ?? null);
  return {
    charts: [
      {
        id: "success",
        title: "Calls that succeeded (%)",
        x: { label: xLabel, values: xs },
        y: { label: "%", min: 0, max: 100 },
        series: [line("tideward breaker", column(0), tw), line("no breaker", column(1), bl)],
      },
      {
        id: "load",
        title: "Load on the backend (calls/s), against the 500 it can serve",
        x: { label: xLabel, values: xs },
        y: { label: "calls/s", min: 0 },
        series: [line("tideward breaker", column(2), tw), line("no breaker", column(3), bl)],
      },
      {
        id: "amplification",
        title: "Retry amplification: backend calls per call offered",
        x: { label: xLabel, values: xs },
        y: { label: "backend calls per call", min: 0 },
        series: [line("tideward breaker", column(4), tw), line("no breaker", column(5), bl)],
      },
    ],
    figures: [],
    tables: [
      {
        caption: `A run of ${duration / 1_000} s at each point, ${counted(n(p, "attempts"), "attempts")} a call, through tideward's breaker and through none`,
        columns: [
          xLabel,
          "succeeded, breaker (%)",
          "succeeded, none (%)",
          "backend load, breaker (calls/s)",
          "backend load, none (calls/s)",
          "amplification, breaker",
          "amplification, none",
        ],
        rows,
      },
    ],
    notes: [note(rows, values.map(shown))],
    replay: {
      body: [
        `const values = ${lit(values).source};`,
        `const tideward = values.map((v) => simulate(${symbolic(true).source}));`,
        `const plain = values.map((v) => simulate(${symbolic(false).source}));`,
      ],
    },
    simulated: {
      runs: values.length * 2,
      ms: duration,
      calls: [...tideward, ...plain].reduce((sum, r) => sum + r.summary.calls, 0),
    },
  };
}
