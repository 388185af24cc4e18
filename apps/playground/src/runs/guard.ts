// Guard in front of a server: many clients with Zipf key popularity offer a load that ramps past
// what a server of workers can do, through @tideward/guard's admission (shedder, gate, per-key
// limit), through the same admission without its per-key limit, and with no policy at all.
import { keys, policy, simulate } from "@tideward/sim";
import type { KeyTotals, SimulationOptions } from "@tideward/sim";
import { call } from "../code.ts";
import { palette, reference } from "../colours.ts";
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
  refusedBy,
  risingLoad,
  s,
  seconds,
  shedOf,
  solid,
  successPercent,
  summary,
  rowsOf,
  peakInFlight,
} from "./common.ts";
import type { Measure, Named } from "./common.ts";

/**
 * The replay's helpers, written out as the snippet prints them; `perName` and `shareOf` below
 * are the same code for the page. A merged traffic model numbers its parts' keys apart, so keys
 * are summed by name, as admission keys its limits.
 */
const helpers = [
  `type Keys = { readonly names: readonly string[]; readonly offered: readonly number[]; readonly admitted: readonly number[] };`,
  `const perName = (k: Keys | undefined, field: "offered" | "admitted"): Map<string, number> => { const m = new Map<string, number>(); k?.names.forEach((name, i) => m.set(name, (m.get(name) ?? 0) + (k[field][i] ?? 0))); return m; };`,
  `const heaviest = (k: Keys | undefined): string => [...perName(k, "offered")].reduce((a, b) => (b[1] > a[1] ? b : a), ["", -1])[0];`,
  `const shareOf = (r: { readonly summary: { readonly admitted: number }; readonly keys?: Keys }, name: string): number => r.summary.admitted === 0 ? 0 : ((perName(r.keys, "admitted").get(name) ?? 0) / r.summary.admitted) * 100;`,
];

function perName(k: KeyTotals | undefined, field: "offered" | "admitted"): Map<string, number> {
  const m = new Map<string, number>();
  k?.names.forEach((name, i) => m.set(name, (m.get(name) ?? 0) + (k[field][i] ?? 0)));
  return m;
}

function heaviest(k: KeyTotals | undefined): string {
  return [...perName(k, "offered")].reduce<[string, number]>((a, b) => (b[1] > a[1] ? b : a), ["", -1])[0];
}

/** The heaviest key's share of the run's admissions, %. */
function shareOf(r: Named, top: Named): Measure {
  const name = heaviest(top.run.keys);
  const admitted = r.run.summary.admitted;
  return {
    value: admitted === 0 ? 0 : ((perName(r.run.keys, "admitted").get(name) ?? 0) / admitted) * 100,
    expr: `shareOf(${r.name}, heaviest(${top.name}.keys))`,
  };
}

/** The heaviest key's share of the calls offered, %: the same in every run. */
function offeredShare(r: Named): Measure {
  const name = heaviest(r.run.keys);
  const offered = r.run.summary.calls;
  return {
    value: offered === 0 ? 0 : ((perName(r.run.keys, "offered").get(name) ?? 0) / offered) * 100,
    expr: `(${r.name}.summary.calls === 0 ? 0 : ((perName(${r.name}.keys, "offered").get(heaviest(${r.name}.keys)) ?? 0) / ${r.name}.summary.calls) * 100)`,
  };
}

/** The highest CPU reading at a bucket's end, ‰. */
function peakCpu(r: Named): Measure {
  return { value: Math.max(0, ...r.run.series.backendCpu), expr: `Math.max(0, ...${r.name}.series.backendCpu)` };
}

/** A level for a log scale: `null` where it is 0 (nothing in flight), which a log axis cannot place. */
function positive(xs: readonly number[]): (number | null)[] {
  return xs.map((v) => (v > 0 ? v : null));
}

const REASONS = ["shed", "gate", "rate"] as const;

/**
 * The guard scenario's three runs. `check.invariants` has the simulator check the gate and the
 * per-key limits at every step (the tests do; the page does not pay for it).
 */
export function guard(p: Params, check: { readonly invariants?: boolean } = {}): Outcome {
  const who = call("keys.zipf", keys.zipf, { count: n(p, "keys"), exponent: n(p, "exponent"), prefix: "client-" });
  const shared = risingLoad(p, who);
  const shedder = shedOf(p);
  const limit = {
    name: "per-client",
    quota: n(p, "limit.quota"),
    window: n(p, "limit.window"),
    kind: s(p, "limit.kind"),
  };
  const maxKeys = n(p, "limit.maxKeys");
  const gate = n(p, "gate");
  const full = call("policy.admission", policy.admission, { shedder, gate, limits: [limit], maxKeys });
  const loose = call("policy.admission", policy.admission, { shedder, gate });
  const base: Omit<SimulationOptions, "policies" | "label"> = {
    ...shared.value,
    invariants: check.invariants === true,
  };
  const duration = base.duration;
  const runs: Named[] = [
    { name: "guarded", run: simulate({ ...base, label: "guard", policies: [full.value] }) },
    {
      name: "unlimited",
      run: simulate({ ...base, label: "guard without the per-key limit", policies: [loose.value] }),
    },
    { name: "unprotected", run: simulate({ ...base, label: "no policy" }) },
  ];
  const [gd, ul, un] = runs as [Named, Named, Named];
  const row = rowsOf(runs);
  const rows = [
    row("calls admitted", "", 0, (r) => summary(r, "admitted"), "admitted"),
    row("refused by the shedder (shed)", "", 0, (r) => refusedBy(r, "admission/shed"), "shed"),
    row("refused by the gate (gate)", "", 0, (r) => refusedBy(r, "admission/gate"), "gate"),
    row("refused by the per-key limit (rate)", "", 0, (r) => refusedBy(r, "admission/rate"), "rate"),
    row("the heaviest key's share of admissions", "%", 2, (r) => shareOf(r, un), "topShare"),
    row("calls that succeeded, however late", "%", 2, successPercent, "success"),
    ...latencyRows(row),
    row("most calls in flight (a bucket's mean)", "", 1, peakInFlight, "peakInFlight"),
    row("highest CPU reading", "‰", 0, peakCpu, "peakCpu"),
  ];
  const x = seconds(gd.run);
  const capacity = capacityOf(p);
  // The guard without its limit is tideward's too, dotted to tell it from the guard.
  const dotted = { ...solid, dash: true };
  const zeros = x.map(() => 0);
  const reasonColors: Record<(typeof REASONS)[number], string> = {
    shed: palette[1],
    gate: palette[4],
    rate: palette[7],
  };
  const top = heaviest(un.run.keys);
  const topOffered = offeredShare(un);
  const topShare = shareOf(gd, un);
  const looseShare = shareOf(ul, un);
  const p99 = (r: Named): string => (r.run.summary.latency.p99 ?? 0).toFixed(0);
  return {
    charts: [
      {
        id: "admitted",
        title: "Calls offered and admitted, per second",
        x: { label: "time (s)", values: x },
        y: { label: "calls/s", min: 0 },
        series: [
          ...offeredLines(gd, x, capacity),
          line("admitted by the guard", perSecond(gd.run, gd.run.series.admitted), { color: palette[0], ...solid }),
          line("admitted, guard without the per-key limit", perSecond(ul.run, ul.run.series.admitted), {
            color: palette[2],
            ...dotted,
          }),
          line("admitted, no policy", perSecond(un.run, un.run.series.admitted), { color: palette[1], ...dashed }),
        ],
      },
      {
        id: "refused",
        title: "Calls the guard refused, by reason, per second",
        x: { label: "time (s)", values: x },
        y: { label: "calls/s", min: 0 },
        series: REASONS.map((reason) =>
          line(`refused: ${reason}`, perSecond(gd.run, gd.run.series.refusedBy[`admission/${reason}`] ?? zeros), {
            color: reasonColors[reason],
            ...solid,
          }),
        ),
      },
      {
        id: "flight",
        // Log scale: with no policy the queue reaches thousands, and the gate's few would be a flat line.
        title: "Calls in flight (mean over each bucket, log scale)",
        x: { label: "time (s)", values: x },
        y: { label: "calls", log: true },
        series: [
          line(
            "gate",
            x.map(() => gate),
            { color: reference, dash: true },
          ),
          line("guard", positive(gd.run.series.inFlight), { color: palette[0], ...solid }),
          line("guard without the per-key limit", positive(ul.run.series.inFlight), { color: palette[2], ...dotted }),
          line("no policy", positive(un.run.series.inFlight), { color: palette[1], ...dashed }),
        ],
      },
      latencyChart("Latency of admitted calls: p50, p95, p99 (ms, log scale)", x, gd, un),
      cpuChart(
        "The server's CPU reading (‰), as the guard's shedder sees it",
        x,
        shedder.cpu,
        ["guard", gd],
        ["no policy", un],
      ),
    ],
    figures: [
      figure("offered", "calls offered (the same to all three)", "", 0, summary(gd, "calls")),
      figure("topOffered", "the heaviest key's share of the calls offered", "%", 2, topOffered),
    ],
    tables: [
      {
        caption: `The same server (${counted(n(p, "workers"), "workers")}, ${n(p, "service")} ms a call: ${capacity.toFixed(0)} calls/s) and the same ${counted(n(p, "keys"), "clients")} behind the guard, the guard without its per-key limit, and no policy`,
        columns: ["", "guard", "guard without the per-key limit", "no policy"],
        rows,
      },
    ],
    notes: [
      `The heaviest client, ${top}, offers ${topOffered.value.toFixed(1)} % of the calls. With the per-key limit (${limit.quota} every ${limit.window} ms, ${limit.kind}) it has ${topShare.value.toFixed(1)} % of the admissions; without it, ${looseShare.value.toFixed(1)} %.`,
      `The server can do about ${capacity.toFixed(0)} calls a second; the load rises from ${n(p, "start")} to ${n(p, "peak")}. With no policy every call is queued and the p99 of the admitted calls reaches ${p99(un)} ms; behind the guard it is ${p99(gd)} ms, with ${counted(gd.run.summary.refused, "calls")} refused at the door.`,
    ],
    replay: {
      body: [
        ...helpers,
        `const shared = ${shared.source};`,
        `const guarded = simulate({ ...shared, label: "guard", policies: [${full.source}] });`,
        `const unlimited = simulate({ ...shared, label: "guard without the per-key limit", policies: [${loose.source}] });`,
        `const unprotected = simulate({ ...shared, label: "no policy" });`,
      ],
    },
    simulated: { runs: 3, ms: duration, calls: gd.run.summary.calls * 3 },
  };
}
