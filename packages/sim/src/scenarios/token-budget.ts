import type { Distribution } from "../distribution";
import { logNormal } from "../distribution";
import { zipf } from "../keys";
import { poisson } from "../rates";
import { simulate } from "../simulate";
import { defineScenario, seedKnob } from "../scenario";
import type { NumberKnob } from "../scenario";
import type { Plot } from "../plot";
import { num, outcome, percent } from "../report";
import { durationKnob, rateKnob } from "./knobs";
import { checkDuration } from "./run-end";
import { TokenTrace, tokenPolicy } from "./token-budget-policy";
import type { TokenWay } from "./token-budget-policy";

/** The parameters of {@link tokenBudget}. */
export interface TokenBudgetParams {
  readonly [name: string]: number;
  readonly seed: number;
  readonly rate: number;
  readonly tenants: number;
  readonly skew: number;
  readonly maxTokens: number;
  readonly tokens: number;
  readonly reserved: number;
  readonly latency: number;
  readonly tenantTokens: number;
  readonly modelTokens: number;
  readonly duration: number;
}

/** The four ways, tideward's first; the oracle last, the reference the others are read against. */
export const TOKEN_WAYS: readonly { readonly id: TokenWay; readonly label: string }[] = [
  { id: "reserve", label: "reserve the bound, settle the actual" },
  { id: "bound", label: "charge the bound" },
  { id: "after", label: "charge the actual after the response" },
  { id: "oracle", label: "oracle: the actual, known at admission" },
];

/** The runs' buckets, ms: a second, as simulate makes them for a run of ten seconds or more. */
const STEP = 1_000;
/** The buckets the tokens served are a mean over: a second's count of a few dozen requests of uneven size swings by a third. */
export const MEAN = 10;
/** Seconds of refill each budget holds: budgets a minute, refilled as they go. */
const BURST = 60;
/** The spread of the actual's logarithm: about one response in twenty-five runs to its bound. */
const SIGMA = 0.8;

function tokens(name: string, label: string, doc: string, value: number, unit = "tokens/s"): NumberKnob {
  return { kind: "integer", name, label, doc, default: value, min: 1, max: 1_000_000, step: 10, unit, scale: "log" };
}

/** Φ, the standard normal's distribution function (Abramowitz and Stegun 7.1.26, within 1.5e-7). */
function phi(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf =
    1 - t * (0.2548296 + t * (-0.28449672 + t * (1.42141374 + t * (-1.45315203 + t * 1.06140543)))) * Math.exp(-z * z);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** A response's tokens: log-normal about `median`, whole, from 1 to `bound` (a response cut at its bound). */
export function tokenCost(median: number, bound: number): Distribution {
  const d = logNormal({ median, sigma: SIGMA });
  const mu = Math.log(median);
  const b = Math.log(bound);
  const mean = d.mean * phi((b - mu - SIGMA * SIGMA) / SIGMA) + bound * (1 - phi((b - mu) / SIGMA));
  return {
    label: `logNormal(median ${median}, sigma ${SIGMA}) tokens, at most ${bound}`,
    mean,
    sample: (random) => Math.min(bound, Math.max(1, Math.round(d.sample(random)))),
  };
}

/**
 * LLM requests from tenants of uneven size, each charged to its tenant's token budget and the
 * model's at once, their token cost known only when the response comes: charged at the bound,
 * after the response, reserved then settled, and by an oracle that knows it at admission.
 */
export const tokenBudget = defineScenario<TokenBudgetParams>({
  name: "token-budget",
  title: "Token budgets for requests whose cost comes with the response",
  summary:
    "Requests from tenants of uneven size (a few much busier) go to a model; each may use up to its bound (max_tokens) but most use far less. Each is charged to its tenant's token budget and the model's as one atomic charge set, four ways: the bound at admission; the actual after the response, admitting while the budgets have any tokens; the bound reserved, then settled at the actual; and an oracle that knows the actual at admission. Read the tokens served against the oracle, the tenants refused while under their quota by the actual count, and how far each way overran a budget.",
  knobs: [
    seedKnob,
    rateKnob({ doc: "Requests a second, Poisson, over all tenants.", default: 20, min: 1, max: 10_000, step: 1 }),
    {
      kind: "integer",
      name: "tenants",
      label: "Tenants",
      doc: "How many tenants send requests.",
      default: 6,
      min: 1,
      max: 1_000,
      step: 1,
    },
    {
      kind: "number",
      name: "skew",
      label: "Tenant skew",
      doc: "Zipf exponent of the tenants' share of requests: 0 is even.",
      default: 1,
      min: 0,
      max: 3,
      step: 0.05,
    },
    tokens("maxTokens", "Bound (max_tokens)", "The most tokens a request may use.", 1_000, "tokens"),
    tokens("tokens", "Typical use", "The median tokens a response uses (log-normal, cut at the bound).", 250, "tokens"),
    {
      kind: "number",
      name: "reserved",
      label: "Reserved",
      doc: "The share of the bound reserving reserves: 1 is the bound; below it, a response past it tops up, never refused.",
      default: 1,
      min: 0.05,
      max: 1,
      step: 0.05,
      unit: "of max_tokens",
    },
    {
      kind: "number",
      name: "latency",
      label: "Response time",
      doc: "The median time a response takes (log-normal).",
      default: 3,
      min: 0.01,
      max: 600,
      step: 0.01,
      unit: "s",
      scale: "log",
    },
    tokens(
      "tenantTokens",
      "Tenant budget",
      `Tokens a second each tenant may use, a bucket of ${BURST} s of them (a budget a minute).`,
      2_000,
    ),
    tokens(
      "modelTokens",
      "Model budget",
      `Tokens a second the model may take in all, a bucket of ${BURST} s of them.`,
      7_000,
    ),
    durationKnob({ default: 300, min: 10, max: 3_600, step: 10 }),
  ],
  work: (p) => ({ calls: TOKEN_WAYS.length * p.rate * p.duration, knobs: ["rate", "duration"] }),
  run(p, start) {
    checkDuration("token-budget", start, p.duration);
    const bound = p.maxTokens;
    const budgets = {
      tenants: p.tenants,
      bound,
      reserved: Math.max(1, Math.round(p.reserved * bound)),
      tenantRate: p.tenantTokens,
      modelRate: p.modelTokens,
      burst: BURST,
      // A log-normal response (sigma 0.5) takes 20 times its median once in a billion.
      ttl: Math.max(300_000, 20 * p.latency * 1_000),
    };
    const cost = tokenCost(Math.min(p.tokens, bound), bound);
    const base = {
      seed: p.seed,
      start,
      duration: p.duration * 1_000,
      step: STEP,
      traffic: poisson({
        rate: p.rate,
        keys: zipf({ count: p.tenants, exponent: p.skew, prefix: "tenant-" }),
        cost,
      }),
      backend: { latency: logNormal({ median: p.latency * 1_000, sigma: 0.5 }) },
    };
    const estimate = budgets.reserved < bound;
    const label = (w: (typeof TOKEN_WAYS)[number]) =>
      w.id === "reserve" && estimate ? `reserve ${budgets.reserved} tokens, settle the actual` : w.label;
    const traces = TOKEN_WAYS.map(() => new TokenTrace(start, STEP, Math.ceil((p.duration * 1_000) / STEP)));
    const runs = TOKEN_WAYS.map((w, i) =>
      simulate({ ...base, label: label(w), policies: [tokenPolicy(w.id, budgets, traces[i])] }),
    );
    const stats = runs.map((r) => r.policies[0].stats);
    const oracle = stats[TOKEN_WAYS.length - 1].served;
    // What the model's bucket could give over the run: its first fill and its refill.
    const modelBudget = p.modelTokens * (BURST + p.duration);
    const figures: Record<string, number> = {
      modelBudget,
      bound,
      meanTokens: cost.mean,
      underTenants: stats[0].underTenants,
      reserved: budgets.reserved,
    };
    const rows = TOKEN_WAYS.map((w, i) => {
      const s = stats[i];
      const r = runs[i];
      const overrun = Math.max(s.worstTenant, s.worstModel) / bound;
      figures[`${w.id}.served`] = s.served;
      figures[`${w.id}.ofOracle`] = oracle > 0 ? s.served / oracle : 1;
      figures[`${w.id}.underRefused`] = s.underRefused;
      figures[`${w.id}.underRefusals`] = s.underRefusals;
      figures[`${w.id}.overrun`] = overrun;
      // In the largest top-up one request can make: the bound less what was reserved for it.
      if (w.id === "reserve" && estimate)
        figures["reserve.overrunTopUps"] = (overrun * bound) / (bound - budgets.reserved);
      figures[`${w.id}.modelUse`] = s.served / modelBudget;
      figures[`${w.id}.refusedByTenant`] = r.summary.refusedBy["tokens/tenant"] ?? 0;
      figures[`${w.id}.refusedByModel`] = r.summary.refusedBy["tokens/model"] ?? 0;
      return [
        label(w),
        num(s.served),
        percent(figures[`${w.id}.ofOracle`]),
        `${s.underRefused} of ${s.underTenants}`,
        num(overrun, 1),
        percent(figures[`${w.id}.modelUse`]),
        String(figures[`${w.id}.refusedByTenant`]),
        String(figures[`${w.id}.refusedByModel`]),
      ];
    });
    const table = {
      title: `${p.rate} requests/s from ${p.tenants} tenants, up to ${bound} tokens each (median ${Math.min(p.tokens, bound)}, mean ${num(cost.mean)}), answered in ${p.latency} s (median); budgets: ${p.tenantTokens} tokens/s a tenant, ${p.modelTokens} for the model, ${BURST} s of each at most`,
      columns: [
        "",
        "tokens served",
        "of the oracle's",
        "tenants under quota refused",
        "worst overrun (in max_tokens)",
        "model budget used",
        "refused by tenant",
        "by model",
      ],
      rows,
    };
    const levels = traces.map((t) => ({ model: t.model.read(), tenants: t.tenants.read() }));
    const plots: Plot[] = [
      {
        id: "tokens",
        title: `Tokens served a second, each way (a mean over the last ${(MEAN * STEP) / 1_000} s), against the model's budget of ${p.modelTokens} tokens/s`,
        unit: "tokens/s",
        runs: traces.map((t) => trailingRate(t.served)),
        marks: [{ label: `model budget (${p.modelTokens} tokens/s)`, value: p.modelTokens }],
      },
      {
        id: "model-budget",
        title: `The model's token budget (${num(p.modelTokens * BURST)} tokens when full): its lowest level each second; below 0, overrun`,
        unit: "tokens",
        runs: levels.map((l) => l.model),
        marks: [{ label: "empty: below it, overrun", value: 0 }],
      },
      {
        id: "tenant-budgets",
        title: `The tenants' token budgets (${num(p.tenantTokens * BURST)} tokens each when full): the lowest of any each second; below 0, overrun`,
        unit: "tokens",
        runs: levels.map((l) => l.tenants),
        marks: [{ label: "empty: below it, overrun", value: 0 }],
      },
      {
        id: "overrun",
        title:
          "Overrun of any budget (the model's or a tenant's), each way: its deepest below empty each second, against one request's bound",
        unit: "tokens",
        runs: levels.map((l) => l.model.map((m, j) => Math.max(0, -Math.min(m, l.tenants[j])))),
        marks: [{ label: `one request's bound (max_tokens, ${bound})`, value: bound }],
      },
    ];
    return { ...outcome(runs, table, figures, reading(figures, estimate)), plots };
  },
});

/** Tokens a second in each bucket, a mean over it and the {@link MEAN} − 1 before it (fewer at the start). */
function trailingRate(counts: Float64Array): number[] {
  let sum = 0;
  return Array.from(counts, (x, i) => {
    sum += x - (i >= MEAN ? counts[i - MEAN] : 0);
    return sum / ((Math.min(i + 1, MEAN) * STEP) / 1_000);
  });
}

function reading(f: Readonly<Record<string, number>>, estimate: boolean): string {
  const over = (id: string) => num(f[`${id}.overrun`], 1);
  const of = (id: string) => percent(f[`${id}.ofOracle`]);
  const refused = (id: string) => `${f[`${id}.underRefused`]} of the ${f.underTenants}`;
  // Two figures that print alike are a tie.
  const than = (a: string, b: string) =>
    a === b ? "a tie with" : Number.parseFloat(a) > Number.parseFloat(b) ? "more than" : "less than";
  const reserving = estimate ? `Reserving ${f.reserved} tokens, an estimate below the bound,` : "Reserving the bound";
  return [
    `${reserving} and settling the actual served ${of("reserve")} of the tokens the oracle served, refused ${refused("reserve")} tenants under their quota by the actual count, and overran a budget by ${over("reserve")} max_tokens at worst${estimate || of("reserve") === of("oracle") ? "" : "; it serves less than the oracle by holding each request's unused bound until it settles"}.`,
    ...(estimate
      ? [
          `A response past the estimate tops up, never refused; top-ups of requests in flight together reached ${num(f["reserve.overrunTopUps"], 1)} times the largest one request can make.`,
        ]
      : []),
    `Charging the bound served ${of("bound")} and refused ${refused("bound")}, as every budget drains at the bound while a response uses ${percent(f.meanTokens / f.bound)} of it; its worst overrun, ${over("bound")}, is ${than(over("bound"), over("reserve"))} reserving's.`,
    `Charging the actual after the response served ${of("after")}, ${than(of("after"), of("reserve"))} reserving, and refused ${refused("after")}, by admitting while a budget had any tokens left and charging each request once done: it overran a budget by ${over("after")} max_tokens.`,
  ].join(" ");
}
