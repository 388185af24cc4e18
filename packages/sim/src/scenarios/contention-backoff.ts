import { Jitter } from "@tideward/backoff";
import type { Jitter as JitterType } from "@tideward/backoff";
import { brookerLeg, contention } from "../backends";
import { herd } from "../bursts";
import type { RunResult } from "../result";
import { simulate } from "../simulate";
import { defineScenario, seedKnob } from "../scenario";
import { num, percent, outcome } from "../report";
import { baseKnob, capKnob, capOf } from "./knobs";
import { checkEnd } from "./run-end";

/** A time in ms as seconds, to the hundredth the summary table prints. */
function secs(ms: number): string {
  return num(ms / 1_000, 2);
}

/** The parameters of {@link contentionBackoff}. */
export interface ContentionBackoffParams {
  readonly [name: string]: number;
  readonly seed: number;
  readonly clients: number;
  readonly base: number;
  readonly cap: number;
  readonly seeds: number;
}

/** The strategies, the guard's default jitter first; `undefined` retries at once, with no backoff at all. */
const STRATEGIES: readonly { id: string; label: string; jitter: JitterType | undefined }[] = [
  { id: "spread", label: "exponential, spread by a fifth (the guard's default)", jitter: Jitter.spread(0.2) },
  { id: "nobackoff", label: "no backoff", jitter: undefined },
  { id: "rigid", label: "exponential, no jitter", jitter: Jitter.rigid },
  { id: "full", label: "full jitter", jitter: Jitter.full },
  { id: "equal", label: "equal jitter", jitter: Jitter.equal },
  { id: "decorrelated", label: "decorrelated jitter", jitter: Jitter.decorrelated },
];

/**
 * Brooker's contention study ("Exponential Backoff And Jitter", AWS Architecture Blog, 2015):
 * clients that all want to write one optimistically locked resource at once, retrying until
 * they succeed, with each backoff strategy.
 */
export const contentionBackoff = defineScenario<ContentionBackoffParams>({
  name: "contention-backoff",
  title: "Backoff under contention",
  summary:
    'Clients all try to write one resource at the same moment, under optimistic concurrency control: a write succeeds only if no other write landed between its read and itself, and a client retries until it succeeds. Each network leg takes about 10 ms. This is the study behind "Exponential Backoff And Jitter": exponential backoff without jitter keeps the losers in step, so they collide again at every retry; jitter spreads them out. Read the calls the job took (every failed write is a wasted call) and when the last client was done, averaged over several seeds.',
  knobs: [
    seedKnob,
    {
      kind: "integer",
      name: "clients",
      label: "Clients",
      doc: "Clients contending for the resource, all starting at once.",
      default: 50,
      min: 1,
      max: 1_000,
      step: 1,
      scale: "log",
    },
    baseKnob({
      doc: "The first retry's wait (its ceiling, with a jitter), doubling after.",
      default: 10,
      min: 1,
      max: 1_000,
      step: 1,
      scale: "log",
    }),
    capKnob({ default: 2_000, min: 1, max: 60_000, step: 100, scale: "log" }),
    {
      kind: "integer",
      name: "seeds",
      label: "Seeds averaged",
      doc: "Runs averaged for each strategy, from the seed on.",
      default: 5,
      min: 1,
      max: 50,
      step: 1,
    },
  ],
  options: (p) => ({ guard: { retry: { cap: capOf(p) } } }),
  work: (p) => ({ calls: STRATEGIES.length * p.seeds * p.clients, knobs: ["clients", "seeds"] }),
  run(p, start) {
    checkEnd("contention-backoff", start, 1, "", "its run of 1 ms");
    const cap = capOf(p);
    const once = (jitter: JitterType | undefined, seed: number, label: string): RunResult =>
      simulate({
        seed,
        start,
        duration: 1,
        step: 1,
        label,
        traffic: herd({ clients: p.clients }),
        network: { request: brookerLeg, response: brookerLeg },
        backend: contention(),
        client: {
          // A job that must finish: retries bounded by a deadline of an hour, not a count.
          deadline: 3_600_000,
          retry: {
            attempts: Infinity,
            backoff:
              jitter === undefined
                ? { base: 0, cap: 0, jitter: Jitter.rigid }
                : { base: p.base, factor: 2, cap, jitter },
          },
        },
      });
    const figures: Record<string, number> = {};
    const runs: RunResult[] = [];
    const rows = STRATEGIES.map((s) => {
      let calls = 0;
      let time = 0;
      let done = 0;
      for (let i = 0; i < p.seeds; i++) {
        const r = once(s.jitter, p.seed + i, s.label);
        if (i === 0) runs.push(r);
        calls += r.summary.backendLoad;
        time += r.summary.completionTime ?? r.duration;
        done += r.summary.goodput;
      }
      calls /= p.seeds;
      time /= p.seeds;
      figures[`${s.id}.calls`] = calls;
      figures[`${s.id}.callsPerClient`] = calls / p.clients;
      figures[`${s.id}.wasted`] = calls - done / p.seeds;
      figures[`${s.id}.completionTime`] = time;
      figures[`${s.id}.goodputRate`] = done / (p.seeds * p.clients);
      return [
        s.label,
        percent(done / (p.seeds * p.clients)),
        num(calls),
        num(calls / p.clients, 1),
        num(calls - done / p.seeds),
        `${num(time / 1_000, 2)} s`,
      ];
    });
    const table = {
      title: `${p.clients} clients write one resource at once, retrying until they succeed; ${p.base} ms doubling to ${cap} ms; means over ${p.seeds} seed${p.seeds === 1 ? "" : "s"}`,
      columns: [
        "",
        "goodput within the deadline",
        "backend calls",
        "calls per client",
        "calls wasted (conflicts)",
        "every client done by",
      ],
      rows,
    };
    const f = (id: string, name: string) => figures[`${id}.${name}`];
    const jittered = ["full", "equal", "decorrelated"];
    const best = jittered.reduce((a, b) => (f(b, "calls") < f(a, "calls") ? b : a));
    const label = (id: string) => STRATEGIES.find((s) => s.id === id)!.label;
    return outcome(
      runs,
      table,
      figures,
      [
        `Exponential backoff without jitter took ${num(f("rigid", "calls"))} calls and ${secs(f("rigid", "completionTime"))} s: the losers of each round wait exactly as long as one another and collide again. Full jitter took ${num(f("full", "calls"))} calls and ${secs(f("full", "completionTime"))} s, equal jitter ${num(f("equal", "calls"))} and ${secs(f("equal", "completionTime"))} s, decorrelated ${num(f("decorrelated", "calls"))} and ${secs(f("decorrelated", "completionTime"))} s; the fewest calls of the three: ${label(best)}.`,
        `No backoff at all finished in ${secs(f("nobackoff", "completionTime"))} s but took ${num(f("nobackoff", "calls"))} calls: every round, every loser tries again at once.`,
        `The guard's default, a wait spread by a fifth either way, took ${num(f("spread", "calls"))} calls (${percent(f("spread", "calls") / f("full", "calls") - 1)} more than full jitter) and ${secs(f("spread", "completionTime"))} s (${num(f("spread", "completionTime") / f("full", "completionTime"), 1)}× full jitter's): it breaks the lockstep, but its waits never fall under four fifths of the schedule, so the job ends later. Where many clients contend for one resource, full or decorrelated jitter wins; the guard's spread is chosen for a single caller's retries, whose waits it keeps predictable.`,
      ].join(" "),
    );
  },
});
