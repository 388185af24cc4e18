// Breaker under an outage: tideward's adaptive breaker next to a classic open / half-open one,
// on the same Poisson traffic to the same failing backend.
import { failures, latency, policy, simulate, traffic } from "@tideward/sim";
import type { SimulationOptions } from "@tideward/sim";
import { call, lit } from "../code.ts";
import type { Outcome, Params } from "../model.ts";
import { counted } from "../units.ts";
import {
  figure,
  line,
  minus,
  n,
  percentOf,
  perSecond,
  seconds,
  share,
  successPercent,
  sumHelper,
  summary,
  total,
  rowsOf,
} from "./common.ts";
import type { Measure, Named } from "./common.ts";

/** Seconds after `to` (ms) until the first one-second bucket where 90 % of the calls offered succeeded; the rest of the run when none did. */
function recovered(r: Named, to: number): Measure {
  const { t, offered, completed } = r.run.series;
  const i = t.findIndex((at, j) => at >= to && (offered[j] ?? 0) > 0 && (completed[j] ?? 0) >= 0.9 * (offered[j] ?? 0));
  const value = ((i < 0 ? r.run.duration : (t[i] ?? 0)) - to) / 1_000;
  return { value, expr: `recovered(${r.name}, ${to})` };
}

const recoveredHelper = [
  "// Seconds after `to` until 90 % of a second's calls succeed again (the rest of the run if never).",
  "const recovered = (run: ReturnType<typeof simulate>, to: number): number => {",
  "  const { t, offered, completed } = run.series;",
  "  const i = t.findIndex((at, j) => at >= to && offered[j] > 0 && completed[j] >= 0.9 * offered[j]);",
  "  return ((i < 0 ? run.duration : t[i]) - to) / 1000;",
  "};",
];

export function breaker(p: Params): Outcome {
  const duration = n(p, "duration") * 1_000;
  const from = Math.min(n(p, "from") * 1_000, duration);
  const to = Math.min(from + n(p, "length") * 1_000, duration);
  const k = n(p, "sre.k");
  // The breaker requires k ≥ floor: a floor above k is held to it (and said so below).
  const floor = Math.min(n(p, "sre.floor"), k);
  const shared = lit({
    seed: n(p, "seed"),
    duration,
    step: 1_000,
    traffic: call("traffic.poisson", traffic.poisson, { rate: n(p, "rate") }),
    backend: {
      latency: call("latency.exponential", latency.exponential, n(p, "latency")),
      failures: call(
        "failures.schedule",
        failures.schedule,
        [{ from, to, rate: n(p, "down") / 100 }],
        n(p, "brown") / 100,
      ),
    },
  });
  const sre = {
    k,
    floor,
    protection: n(p, "sre.protection"),
    probe: n(p, "sre.probe"),
    size: n(p, "sre.size"),
    window: n(p, "sre.window"),
  };
  const adaptive = call("policy.breaker", policy.breaker, sre);
  const classicSpec = call("policy.classicBreaker", policy.classicBreaker, {
    threshold: n(p, "threshold"),
    openFor: n(p, "open"),
    probes: n(p, "probes"),
  });
  const base: Omit<SimulationOptions, "policies" | "label"> = shared.value;
  const runs: Named[] = [
    { name: "tideward", run: simulate({ ...base, label: "tideward breaker", policies: [adaptive.value] }) },
    { name: "classic", run: simulate({ ...base, label: "classic breaker", policies: [classicSpec.value] }) },
  ];
  const [tw, cl] = runs as [Named, Named];
  const fromIdx = Math.floor(from / 1_000);
  const toIdx = Math.ceil(to / 1_000);
  const row = rowsOf(runs);
  const rows = [
    row("calls let through", "", 0, (r) => summary(r, "admitted"), "admitted"),
    row("calls refused", "", 0, (r) => summary(r, "refused"), "refused"),
    row("calls that succeeded", "", 0, (r) => summary(r, "succeeded"), "succeeded"),
    row("failed calls sent to the backend", "", 0, (r) => summary(r, "failed"), "failed"),
    row(
      "calls refused while the backend was up",
      "",
      0,
      (r) => minus(summary(r, "refused"), total(r, "refused", fromIdx, toIdx)),
      "refusedUp",
    ),
    row(
      "outage calls that reached the backend",
      "%",
      1,
      (r) => percentOf(total(r, "backendLoad", fromIdx, toIdx), total(r, "attempts", fromIdx, toIdx)),
      "reachedOutage",
    ),
    row("back to 90 % success after the outage", "s", 0, (r) => recovered(r, to), "recovered"),
    row("calls that ended in a success", "%", 2, successPercent, "success"),
  ];
  const x = seconds(tw.run);
  const failing = tw.run.series.t.map((t) => (t >= from && t < to ? n(p, "down") : n(p, "brown")));
  const tideward = { side: "tideward" as const, color: "#0b6e99" };
  const baseline = { side: "baseline" as const, color: "#c2410c" };
  const body = [
    sumHelper,
    ...recoveredHelper,
    `const shared = ${shared.source};`,
    `const tideward = simulate({ ...shared, label: "tideward breaker", policies: [${adaptive.source}] });`,
    `const classic = simulate({ ...shared, label: "classic breaker", policies: [${classicSpec.source}] });`,
  ];
  const notes = [
    `The backend fails ${n(p, "down")} % of calls from ${from / 1_000} s to ${to / 1_000} s and ${n(p, "brown")} % otherwise. tideward's breaker refused ${counted(rows[1]?.cells[0]?.value ?? 0, "calls")} and let ${rows[5]?.cells[0]?.value.toFixed(1)} % of the outage's calls reach the backend; the classic breaker refused ${rows[1]?.cells[1]?.value} and let ${rows[5]?.cells[1]?.value.toFixed(1)} % through.`,
  ];
  if (floor !== n(p, "sre.floor"))
    notes.push(
      `floor ${n(p, "sre.floor")} is above k ${k}; the breaker requires k ≥ floor, so floor ${floor} was used.`,
    );
  return {
    charts: [
      {
        id: "through",
        title: "Calls let through to the backend, per second",
        x: { label: "time (s)", values: x },
        y: { label: "calls/s", min: 0 },
        series: [
          line("offered", perSecond(tw.run, tw.run.series.offered), { color: "#6b7280", dash: true }),
          line("tideward breaker", perSecond(tw.run, tw.run.series.admitted), tideward),
          line("classic breaker", perSecond(cl.run, cl.run.series.admitted), baseline),
        ],
      },
      {
        id: "success",
        title: "Backend successes, per second",
        x: { label: "time (s)", values: x },
        y: { label: "calls/s", min: 0 },
        series: [
          line("tideward breaker", perSecond(tw.run, tw.run.series.succeeded), tideward),
          line("classic breaker", perSecond(cl.run, cl.run.series.succeeded), baseline),
        ],
      },
      {
        id: "refusals",
        title: "Calls refused, and the backend's failure rate (%)",
        x: { label: "time (s)", values: x },
        y: { label: "%", min: 0, max: 100 },
        series: [
          line("backend failing", failing, { color: "#6b7280", dash: true }),
          line("tideward breaker", share(tw.run.series.refused, tw.run.series.attempts), tideward),
          line("classic breaker", share(cl.run.series.refused, cl.run.series.attempts), baseline),
        ],
      },
    ],
    figures: [figure("offered", "calls offered (the same to both)", "", 0, summary(tw, "calls"))],
    tables: [
      { caption: "The two breakers on the same calls", columns: ["", "tideward breaker", "classic breaker"], rows },
    ],
    notes,
    replay: { body },
    simulated: { runs: 2, ms: duration, calls: tw.run.summary.calls * 2 },
  };
}
