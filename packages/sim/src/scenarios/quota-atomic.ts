import { QuotaKey, limitSpec } from "@tideward/quota-engine";
import { exponential } from "../distribution";
import { zipf } from "../keys";
import { quota } from "../policies/quota";
import type { QuotaDimension } from "../policies/quota";
import { simulate } from "../simulate";
import { poisson } from "../rates";
import { defineScenario, seedKnob } from "../scenario";
import { num, percent, outcome } from "../report";
import { durationKnob, rateKnob } from "./knobs";
import { checkDuration } from "./run-end";

/** The parameters of {@link quotaAtomic}. */
export interface QuotaAtomicParams {
  readonly [name: string]: number | string;
  readonly seed: number;
  readonly rate: number;
  readonly users: number;
  readonly tenants: number;
  readonly skew: number;
  readonly userRate: number;
  readonly tenantRate: number;
  readonly modelTokens: number;
  readonly tokens: number;
  readonly order: string;
  readonly duration: number;
}

/**
 * An LLM gateway charging each call to three budgets — its user's calls, its tenant's calls and
 * the model's tokens — all at once (tideward's atomic charge set) or one after another (a
 * chain of separate limiters). The sequential way charges budgets for calls a later one refuses.
 */
export const quotaAtomic = defineScenario<QuotaAtomicParams>({
  name: "quota-atomic",
  title: "A tenant's quota-engine budget, charged atomically",
  summary:
    "Calls from users of several tenants (a few users much busier than the rest) go to a model. Each call is charged to three budgets: its user's calls a second, its tenant's calls a second and the model's tokens a second. The quota engine's atomic charge set charges all three or none. Charged one after another, as separate limiters do, a call the last budget refuses has already spent the earlier ones: tokens and calls charged for nothing, which then refuse calls that would have fitted. Read which budget refuses, and what the sequential way wastes.",
  knobs: [
    seedKnob,
    rateKnob({ doc: "Calls a second, Poisson, over all users.", default: 80, min: 1, max: 10_000, step: 1 }),
    {
      kind: "integer",
      name: "users",
      label: "Users",
      doc: "How many users call.",
      default: 20,
      min: 1,
      max: 100_000,
      step: 1,
      scale: "log",
    },
    {
      kind: "integer",
      name: "tenants",
      label: "Tenants",
      doc: "Users belong to tenants in turn (user i to tenant i mod tenants).",
      default: 4,
      min: 1,
      max: 1_000,
      step: 1,
    },
    {
      kind: "number",
      name: "skew",
      label: "Popularity skew",
      doc: "Zipf exponent of the users' share of calls: 0 is even, 1 and more a few busy users.",
      default: 1.1,
      min: 0,
      max: 3,
      step: 0.05,
    },
    {
      kind: "integer",
      name: "userRate",
      label: "User budget",
      doc: "Calls a second each user may make (a bucket of that many).",
      default: 4,
      min: 1,
      max: 10_000,
      step: 1,
      unit: "calls/s",
    },
    {
      kind: "integer",
      name: "tenantRate",
      label: "Tenant budget",
      doc: "Calls a second each tenant may make.",
      default: 10,
      min: 1,
      max: 100_000,
      step: 1,
      unit: "calls/s",
    },
    {
      kind: "integer",
      name: "modelTokens",
      label: "Model budget",
      doc: "Tokens a second the model may take in all.",
      default: 3_000,
      min: 1,
      max: 10_000_000,
      step: 100,
      unit: "tokens/s",
      scale: "log",
    },
    {
      kind: "number",
      name: "tokens",
      label: "Tokens per call",
      doc: "The mean of each call's tokens, exponentially distributed.",
      default: 100,
      min: 1,
      max: 100_000,
      step: 1,
      unit: "tokens",
      scale: "log",
    },
    {
      kind: "select",
      name: "order",
      label: "Sequential order",
      doc: "The order the sequential run charges in.",
      default: "tokens-first",
      options: [
        { value: "tokens-first", label: "model tokens, then tenant, then user" },
        { value: "user-first", label: "user, then tenant, then model tokens" },
      ],
    },
    durationKnob({ default: 60, min: 1, max: 3_600, step: 1 }),
  ],
  work: (p) => ({ calls: 2 * p.rate * p.duration, knobs: ["rate", "duration"] }),
  run(p, start) {
    checkDuration("quota-atomic", start, p.duration);
    const tenantOf = (k: number): string => `tenant-${k % p.tenants}`;
    const user: QuotaDimension = {
      limit: limitSpec({ name: "user", capacity: p.userRate }),
      key: (k, name) => new QuotaKey(tenantOf(k), name, "llm"),
    };
    const tenant: QuotaDimension = {
      limit: limitSpec({ name: "tenant", capacity: p.tenantRate }),
      key: (k) => new QuotaKey(tenantOf(k), "*", "llm"),
    };
    const model: QuotaDimension = {
      limit: limitSpec({ name: "model", capacity: p.modelTokens }),
      key: () => new QuotaKey("*", "*", "model"),
      units: "cost",
    };
    const dimensions = p.order === "user-first" ? [user, tenant, model] : [model, tenant, user];
    const base = {
      seed: p.seed,
      start,
      duration: p.duration * 1_000,
      traffic: poisson({
        rate: p.rate,
        keys: zipf({ count: p.users, exponent: p.skew, prefix: "user-" }),
        cost: exponential(p.tokens),
      }),
      perKey: true,
    };
    const runs = [
      simulate({ ...base, label: "atomic", policies: [quota({ dimensions })] }),
      simulate({ ...base, label: "sequential", policies: [quota({ dimensions, mode: "sequential" })] }),
    ];
    const figures: Record<string, number> = {};
    const rows = runs.map((r) => {
      const stats = r.policies[0].stats;
      const by = (d: string): number => r.summary.refusedBy[`quota/${d}`] ?? 0;
      for (const d of ["user", "tenant", "model"]) {
        figures[`${r.label}.refusedBy.${d}`] = by(d);
        figures[`${r.label}.wasted.${d}`] = stats[`wasted:${d}`] ?? 0;
      }
      figures[`${r.label}.admitted`] = r.summary.admitted;
      return [
        r.label,
        String(r.summary.admitted),
        String(by("user")),
        String(by("tenant")),
        String(by("model")),
        String(stats["wasted:model"] ?? 0),
        String((stats["wasted:tenant"] ?? 0) + (stats["wasted:user"] ?? 0)),
      ];
    });
    // What the model's bucket could give over the run: its first fill and its refill.
    const budget = p.modelTokens * (p.duration + 1);
    figures.modelBudget = budget;
    const table = {
      title: `${p.rate} calls/s from ${p.users} users in ${p.tenants} tenants; budgets: ${p.userRate} calls/s a user, ${p.tenantRate} a tenant, ${p.modelTokens} tokens/s for the model`,
      columns: [
        "",
        "admitted",
        "refused by user",
        "by tenant",
        "by model",
        "tokens charged for nothing",
        "calls charged for nothing",
      ],
      rows,
    };
    const wastedTokens = figures["sequential.wasted.model"];
    const lost = figures["atomic.admitted"] - figures["sequential.admitted"];
    return outcome(
      runs,
      table,
      figures,
      `Charged one after another, ${num(wastedTokens)} model tokens (${percent(wastedTokens / budget)} of the model's budget) and ${num(figures["sequential.wasted.tenant"] + figures["sequential.wasted.user"])} tenant and user calls went to calls a later budget refused; ${lost >= 0 ? `${num(lost)} fewer` : `${num(-lost)} more`} calls got through than with the atomic charge, which wastes nothing.`,
    );
  },
});
