// The quota engine: each request charged to a user's requests, the tenant's tokens and the
// model's tokens, as one atomic set next to the same three charges made one after another.
import { QuotaKey } from "@tideward/quota-engine";
import { keys, latency, policy, simulate, traffic } from "@tideward/sim";
import type { PolicySpec, SimulationOptions } from "@tideward/sim";
import { call, lit, raw } from "../code.ts";
import type { Code } from "../code.ts";
import type { Outcome, Params } from "../model.ts";
import { counted } from "../units.ts";
import {
  figure,
  line,
  n,
  plus,
  perSecond,
  refusedBy,
  seconds,
  stat,
  successPercent,
  summary,
  rowsOf,
} from "./common.ts";
import type { Measure, Named } from "./common.ts";

const tenantKey = new QuotaKey("acme", "*", "chat");
const modelKey = new QuotaKey("*", "*", "model-l");

export function quota(p: Params): Outcome {
  const duration = n(p, "duration") * 1_000;
  const lo = Math.min(n(p, "tokensMin"), n(p, "tokensMax"));
  const hi = Math.max(n(p, "tokensMin"), n(p, "tokensMax"));
  const shared = lit({
    seed: n(p, "seed"),
    duration,
    step: 1_000,
    traffic: call("traffic.poisson", traffic.poisson, {
      rate: n(p, "rate"),
      keys: call("keys.uniform", keys.uniform, { count: n(p, "users"), prefix: "user-" }),
      cost: call("latency.uniform", latency.uniform, lo, hi),
    }),
  });
  // The user's key is the simulated key (one per user); the tenant and the model are one key each.
  const dimensions = lit([
    { limit: { name: "user-requests", capacity: n(p, "userCapacity"), refill: n(p, "userRefill") }, label: "user" },
    {
      limit: { name: "tenant-tokens", capacity: n(p, "tenantCapacity"), refill: n(p, "tenantRefill") },
      key: raw('() => new QuotaKey("acme", "*", "chat")', () => tenantKey),
      units: "cost",
      label: "tenant",
    },
    {
      limit: { name: "model-tokens", capacity: n(p, "modelCapacity"), refill: n(p, "modelRefill") },
      key: raw('() => new QuotaKey("*", "*", "model-l")', () => modelKey),
      units: "cost",
      label: "model",
    },
  ]);
  // The replay names the dimensions once and refers to them by name.
  const named = raw("dimensions", dimensions.value);
  const specs: [name: string, label: string, spec: Code<PolicySpec>][] = [
    ["atomic", "atomic", call("policy.quota", policy.quota, { dimensions: named, mode: "atomic" })],
    ["sequential", "one after another", call("policy.quota", policy.quota, { dimensions: named, mode: "sequential" })],
  ];
  const base: Omit<SimulationOptions, "policies" | "label"> = shared.value;
  const runs: Named[] = specs.map(([name, label, spec]) => ({
    name,
    run: simulate({ ...base, label, policies: [spec.value] }),
  }));
  const [at, sq] = runs as [Named, Named];
  const row = rowsOf(runs);
  // Charged for nothing: the units each dimension charged for requests then refused (only one
  // after another; an atomic set charges nothing for a refusal).
  const wastedTokens = (r: Named): Measure => plus(stat(r, 0, "wasted:tenant"), stat(r, 0, "wasted:model"));
  const wastedRequests = (r: Named): Measure => stat(r, 0, "wasted:user");
  const rows = [
    row("requests admitted", "", 0, (r) => summary(r, "admitted"), "admitted"),
    row("refused by the user's budget", "", 0, (r) => refusedBy(r, "quota/user"), "refusedUser"),
    row("refused by the tenant's tokens", "", 0, (r) => refusedBy(r, "quota/tenant"), "refusedTenant"),
    row("refused by the model's tokens", "", 0, (r) => refusedBy(r, "quota/model"), "refusedModel"),
    row("tokens charged for refused requests", "tokens", 0, wastedTokens, "wastedTokens"),
    row("user requests charged for refused requests", "", 0, wastedRequests, "wastedRequests"),
    row("requests that succeeded", "%", 2, successPercent, "success"),
  ];
  const x = seconds(at.run);
  const atomic = { side: "tideward" as const };
  const sequential = { side: "baseline" as const };
  const reasons: [string, string][] = [
    ["quota/user", "#15803d"],
    ["quota/tenant", "#0b6e99"],
    ["quota/model", "#7c3aed"],
  ];
  const refusals = (r: Named, side: typeof atomic | typeof sequential) =>
    reasons.map(([reason, color]) =>
      line(
        `${reason.slice(6)}, ${r.run.label}`,
        perSecond(r.run, r.run.series.refusedBy[reason] ?? r.run.series.t.map(() => 0)),
        { color, ...side },
      ),
    );
  return {
    charts: [
      {
        id: "admitted",
        title: "Requests offered and admitted, per second",
        x: { label: "time (s)", values: x },
        y: { label: "requests/s", min: 0 },
        series: [
          line("offered", perSecond(at.run, at.run.series.offered), { color: "#6b7280", dash: true }),
          line("admitted, atomic", perSecond(at.run, at.run.series.admitted), { color: "#0b6e99", ...atomic }),
          line("admitted, one after another", perSecond(sq.run, sq.run.series.admitted), {
            color: "#c2410c",
            ...sequential,
          }),
        ],
      },
      {
        id: "refusals",
        title: "Which budget refuses, per second",
        x: { label: "time (s)", values: x },
        y: { label: "requests/s", min: 0 },
        series: [...refusals(at, atomic), ...refusals(sq, sequential)],
      },
    ],
    figures: [figure("offered", "requests offered (the same to both)", "", 0, summary(at, "calls"))],
    tables: [
      {
        caption: "Three budgets charged atomically, and one after another",
        columns: ["", "atomic", "one after another"],
        rows,
      },
    ],
    notes: [
      `Charged one after another, a request the model's budget refuses has already spent the tenant's tokens and a user request: ${counted(rows[4]?.cells[1]?.value ?? 0, "tokens")} and ${counted(rows[5]?.cells[1]?.value ?? 0, "user requests")} went on requests that never ran. Drained by them, the users' budgets refused ${counted(rows[1]?.cells[1]?.value ?? 0, "requests")} and the tenant's ${rows[2]?.cells[1]?.value} (atomically: ${rows[1]?.cells[0]?.value} and ${rows[2]?.cells[0]?.value}), so ${counted(rows[0]?.cells[1]?.value ?? 0, "requests")} ${rows[0]?.cells[1]?.value === 1 ? "was" : "were"} admitted where the atomic charge admitted ${rows[0]?.cells[0]?.value}. Atomically, a refused request costs nothing.`,
    ],
    replay: {
      body: [
        `const shared = ${shared.source};`,
        `const dimensions = ${dimensions.source};`,
        ...specs.map(
          ([name, label, spec]) =>
            `const ${name} = simulate({ ...shared, label: ${JSON.stringify(label)}, policies: [${spec.source}] });`,
        ),
      ],
    },
    simulated: { runs: 2, ms: duration, calls: at.run.summary.calls * 2 },
  };
}
