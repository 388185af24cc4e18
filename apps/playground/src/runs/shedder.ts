// Shedder under rising load: a server with workers and a queue (load turns into latency and a
// CPU reading), offered a load that ramps past what it can do, with and without the shedder.
import { latency, policy, simulate } from "@tideward/sim";
import type { SimulationOptions } from "@tideward/sim";
import { call, lit } from "../code.ts";
import type { Outcome, Params, Series } from "../model.ts";
import {
  figure,
  latency as latencyOf,
  line,
  n,
  perSecond,
  seconds,
  successPercent,
  summary,
  rowsOf,
  load,
  peakInFlight,
} from "./common.ts";
import type { Named } from "./common.ts";

export function shedder(p: Params): Outcome {
  const ramp = n(p, "ramp") * 1_000;
  const hold = n(p, "hold") * 1_000;
  const after = n(p, "after") * 1_000;
  // A run needs some traffic: with every stretch at zero, hold the start load for a second.
  const duration = Math.max(ramp + hold + after, 1_000);
  const offered = load(n(p, "start"), n(p, "peak"), ramp, hold, after);
  const shared = lit({
    seed: n(p, "seed"),
    duration,
    step: duration >= 60_000 ? 1_000 : 500,
    traffic: offered,
    backend: { latency: call("latency.exponential", latency.exponential, n(p, "service")), workers: n(p, "workers") },
  });
  const shed = {
    cpu: n(p, "shed.cpu"),
    size: n(p, "shed.size"),
    window: n(p, "shed.window"),
    latency: n(p, "shed.latency"),
    beta: n(p, "shed.beta"),
    cool: n(p, "shed.cool"),
    floor: n(p, "shed.floor"),
  };
  const spec = call("policy.shedder", policy.shedder, shed);
  const base: Omit<SimulationOptions, "policies" | "label"> = shared.value;
  const runs: Named[] = [
    { name: "shedding", run: simulate({ ...base, label: "with the shedder", policies: [spec.value] }) },
    { name: "unprotected", run: simulate({ ...base, label: "without a shedder" }) },
  ];
  const [sh, un] = runs as [Named, Named];
  const row = rowsOf(runs);
  const rows = [
    row("calls admitted", "", 0, (r) => summary(r, "admitted"), "admitted"),
    row("calls refused", "", 0, (r) => summary(r, "refused"), "refused"),
    row("calls that succeeded", "%", 2, successPercent, "success"),
    row("latency p50 of admitted calls", "ms", 1, (r) => latencyOf(r, "p50"), "p50"),
    row("latency p95", "ms", 1, (r) => latencyOf(r, "p95"), "p95"),
    row("latency p99", "ms", 1, (r) => latencyOf(r, "p99"), "p99"),
    row("most calls in flight (a bucket's mean)", "", 1, peakInFlight, "peakInFlight"),
  ];
  const x = seconds(sh.run);
  const capacity = (n(p, "workers") * 1_000) / n(p, "service");
  const solid = { side: "tideward" as const };
  const dashed = { side: "baseline" as const };
  const pct = (r: Named, which: "p50" | "p95" | "p99", color: string, extra: Partial<Series>): Series =>
    line(`${which}, ${r.run.label}`, r.run.series[which], { color, ...extra });
  return {
    charts: [
      {
        id: "admitted",
        title: "Calls offered, admitted and refused, per second",
        x: { label: "time (s)", values: x },
        y: { label: "calls/s", min: 0 },
        series: [
          line("offered", perSecond(sh.run, sh.run.series.offered), { color: "#6b7280", dash: true }),
          line(
            "server capacity",
            x.map(() => capacity),
            { color: "#a16207", dash: true },
          ),
          line("admitted, with the shedder", perSecond(sh.run, sh.run.series.admitted), { color: "#0b6e99", ...solid }),
          line("refused by the shedder", perSecond(sh.run, sh.run.series.refused), { color: "#b91c1c", ...solid }),
          line("admitted, without", perSecond(un.run, un.run.series.admitted), { color: "#c2410c", ...dashed }),
        ],
      },
      {
        id: "latency",
        title: "Latency of admitted calls that succeeded: p50, p95, p99 (ms, log scale)",
        x: { label: "time (s)", values: x },
        y: { label: "ms", log: true },
        series: [
          pct(sh, "p50", "#15803d", solid),
          pct(sh, "p95", "#0b6e99", solid),
          pct(sh, "p99", "#7c3aed", solid),
          pct(un, "p50", "#15803d", dashed),
          pct(un, "p95", "#0b6e99", dashed),
          pct(un, "p99", "#7c3aed", dashed),
        ],
      },
      {
        id: "flight",
        title: "Calls in flight (mean over each bucket)",
        x: { label: "time (s)", values: x },
        y: { label: "calls", min: 0 },
        series: [
          line("with the shedder", sh.run.series.inFlight, { color: "#0b6e99", ...solid }),
          line("without", un.run.series.inFlight, { color: "#c2410c", ...dashed }),
        ],
      },
      {
        id: "cpu",
        title: "The server's CPU reading (‰), as the shedder sees it",
        x: { label: "time (s)", values: x },
        y: { label: "‰", min: 0, max: 1_000 },
        series: [
          line(
            "hot at",
            x.map(() => shed.cpu),
            { color: "#6b7280", dash: true },
          ),
          line("with the shedder", sh.run.series.backendCpu, { color: "#0b6e99", ...solid }),
          line("without", un.run.series.backendCpu, { color: "#c2410c", ...dashed }),
        ],
      },
    ],
    figures: [figure("offered", "calls offered (the same to both)", "", 0, summary(sh, "calls"))],
    tables: [
      {
        caption: `The same server (${n(p, "workers")} workers, ${n(p, "service")} ms a call: ${capacity.toFixed(0)} calls/s) with and without the shedder`,
        columns: ["", "with the shedder", "without a shedder"],
        rows,
      },
    ],
    notes: [
      `The server can do about ${capacity.toFixed(0)} calls a second; the load rises from ${n(p, "start")} to ${n(p, "peak")}. Without a shedder every call is queued and the p99 of the admitted calls reaches ${(un.run.summary.latency.p99 ?? 0).toFixed(0)} ms; with it, ${sh.run.summary.refused} calls are refused at the door and the p99 stays at ${(sh.run.summary.latency.p99 ?? 0).toFixed(0)} ms.`,
    ],
    replay: {
      body: [
        `const shared = ${shared.source};`,
        `const shedding = simulate({ ...shared, label: "with the shedder", policies: [${spec.source}] });`,
        `const unprotected = simulate({ ...shared, label: "without a shedder" });`,
      ],
    },
    simulated: { runs: 2, ms: duration, calls: sh.run.summary.calls * 2 },
  };
}
