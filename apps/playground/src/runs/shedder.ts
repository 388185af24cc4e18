// Shedder under rising load: a server with workers and a queue (load turns into latency and a
// CPU reading), offered a load that ramps past what it can do, with and without the shedder.
import { policy, simulate } from "@tideward/sim";
import type { SimulationOptions } from "@tideward/sim";
import { call } from "../code.ts";
import type { Outcome, Params } from "../model.ts";
import { counted } from "../units.ts";
import {
  capacityOf,
  cpuChart,
  dashed,
  figure,
  latencyChart,
  latencyRows,
  line,
  n,
  offeredLines,
  perSecond,
  risingLoad,
  seconds,
  shedOf,
  solid,
  successPercent,
  summary,
  rowsOf,
  peakInFlight,
} from "./common.ts";
import type { Named } from "./common.ts";

export function shedder(p: Params): Outcome {
  const shared = risingLoad(p);
  const shed = shedOf(p);
  const spec = call("policy.shedder", policy.shedder, shed);
  const base: Omit<SimulationOptions, "policies" | "label"> = shared.value;
  const duration = base.duration;
  const runs: Named[] = [
    { name: "shedding", run: simulate({ ...base, label: "with the shedder", policies: [spec.value] }) },
    { name: "unprotected", run: simulate({ ...base, label: "without a shedder" }) },
  ];
  const [sh, un] = runs as [Named, Named];
  const row = rowsOf(runs);
  const rows = [
    row("calls admitted", "", 0, (r) => summary(r, "admitted"), "admitted"),
    row("calls refused", "", 0, (r) => summary(r, "refused"), "refused"),
    row("calls that succeeded, however late", "%", 2, successPercent, "success"),
    ...latencyRows(row),
    row("most calls in flight (a bucket's mean)", "", 1, peakInFlight, "peakInFlight"),
  ];
  const x = seconds(sh.run);
  const capacity = capacityOf(p);
  return {
    charts: [
      {
        id: "admitted",
        title: "Calls offered, admitted and refused, per second",
        x: { label: "time (s)", values: x },
        y: { label: "calls/s", min: 0 },
        series: [
          ...offeredLines(sh, x, capacity),
          line("admitted, with the shedder", perSecond(sh.run, sh.run.series.admitted), { color: "#0b6e99", ...solid }),
          line("refused by the shedder", perSecond(sh.run, sh.run.series.refused), { color: "#b91c1c", ...solid }),
          line("admitted, without", perSecond(un.run, un.run.series.admitted), { color: "#c2410c", ...dashed }),
        ],
      },
      latencyChart("Latency of admitted calls that succeeded: p50, p95, p99 (ms, log scale)", x, sh, un),
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
      cpuChart(
        "The server's CPU reading (‰), as the shedder sees it",
        x,
        shed.cpu,
        ["with the shedder", sh],
        ["without", un],
      ),
    ],
    figures: [figure("offered", "calls offered (the same to both)", "", 0, summary(sh, "calls"))],
    tables: [
      {
        caption: `The same server (${counted(n(p, "workers"), "workers")}, ${n(p, "service")} ms a call: ${capacity.toFixed(0)} calls/s) with and without the shedder`,
        columns: ["", "with the shedder", "without a shedder"],
        rows,
      },
    ],
    notes: [
      `The server can do about ${capacity.toFixed(0)} calls a second; the load rises from ${n(p, "start")} to ${n(p, "peak")}. Without a shedder every call is queued and the p99 of the admitted calls reaches ${(un.run.summary.latency.p99 ?? 0).toFixed(0)} ms; with it, ${counted(sh.run.summary.refused, "calls")} ${sh.run.summary.refused === 1 ? "is" : "are"} refused at the door and the p99 stays at ${(sh.run.summary.latency.p99 ?? 0).toFixed(0)} ms.`,
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
