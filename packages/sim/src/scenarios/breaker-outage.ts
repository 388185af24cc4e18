import { poisson } from "../rates";
import { exponential } from "../distribution";
import { FailureSchedule } from "../failures";
import { simulate } from "../simulate";
import type { RunResult } from "../result";
import { defineScenario, seedKnob } from "../scenario";
import type { Table } from "../scenario";
import { outageKnobs, outageOf } from "./outage";
import { num, percent, textTable } from "../report";
import { LEAD_COLUMNS, lead, leadCells, leadFigures, spread } from "./lead";
import { durationKnob, rateKnob } from "./knobs";
import { BASELINE, breakerLineup } from "./lineups";
import { checkDuration, checkEnd } from "./run-end";

/** How long each of the spread's runs goes on past its outage's end, ms. */
const SPREAD_RUN = 30_000;
/** How far past outageTo the spread's longest run goes, ms: its outage ends up to 4 s later. */
const SPREAD_PAST = 4_000 + SPREAD_RUN;

/** The parameters of {@link breakerOutage}. */
export interface BreakerOutageParams {
  readonly [name: string]: number;
  readonly seed: number;
  readonly rate: number;
  readonly duration: number;
  readonly outageFrom: number;
  readonly outageTo: number;
  readonly outageRate: number;
  readonly baseRate: number;
  readonly latency: number;
  readonly threshold: number;
  readonly openFor: number;
  readonly spreadSeeds: number;
}

/** The outage's figures of one run: the share of its attempts that reached the backend, and the refusals outside it. */
function outageFigures(r: RunResult, from: number, to: number): { reached: number; refusedUp: number } {
  const s = r.series;
  let attempts = 0;
  let reached = 0;
  let refused = 0;
  // The outage's one-second buckets, its partial ones included.
  for (let i = 0; i < s.t.length; i++) {
    if (s.t[i] + r.step <= from || s.t[i] >= to) continue;
    attempts += s.attempts[i];
    reached += s.backendLoad[i];
    refused += s.refused[i];
  }
  return { reached: attempts > 0 ? reached / attempts : 0, refusedUp: r.summary.refused - refused };
}

/**
 * A backend fails (all its calls, or a share) for a stretch of the run. tideward's breaker as the
 * guard ships it, its `sre` preset, cockatiel's consecutive and sampling breakers, opossum's
 * rolling-percentage breaker and no breaker at all see the same calls.
 */
export const breakerOutage = defineScenario<BreakerOutageParams>({
  name: "breaker-outage",
  title: "Breaker under an outage",
  summary:
    "Poisson calls to a backend that fails every call for forty seconds. A breaker exists for this: to stop sending calls to a backend that is down, and to let them through again as soon as it is back. Read the share of the outage's calls that still reached the dead backend, how soon after the outage calls succeed again, and how many calls were refused while the backend was up. The second table shows each figure's spread over the outage's end moved second by second and over several seeds, so that no figure rests on one lucky alignment of a breaker's open periods with the outage.",
  knobs: [
    seedKnob,
    rateKnob({ default: 100, min: 10, max: 5_000, step: 10 }),
    durationKnob({ default: 180, min: 30, max: 3_600, step: 10 }),
    ...outageKnobs(40, 80, 3_600),
    {
      kind: "number",
      name: "outageRate",
      label: "Failures during the outage",
      doc: "The share of calls failing during the outage.",
      default: 1,
      min: 0,
      max: 1,
      step: 0.01,
      unit: "share",
    },
    {
      kind: "number",
      name: "baseRate",
      label: "Failures otherwise",
      doc: "The share of calls failing the rest of the time.",
      default: 0,
      min: 0,
      max: 0.5,
      step: 0.005,
      unit: "share",
    },
    {
      kind: "number",
      name: "latency",
      label: "Backend latency",
      doc: "Mean response time, exponentially distributed.",
      default: 20,
      min: 1,
      max: 1_000,
      step: 1,
      unit: "ms",
      scale: "log",
    },
    {
      kind: "integer",
      name: "threshold",
      label: "Consecutive threshold",
      doc: "Failures in a row that open the consecutive breaker.",
      default: BASELINE.threshold,
      min: 1,
      max: 100,
      step: 1,
      unit: "calls",
    },
    {
      kind: "number",
      name: "openFor",
      label: "Baselines' open time",
      doc: "How long the consecutive, sampling and opossum breakers stay open before their probe (opossum's own default is 30 s).",
      default: BASELINE.openFor / 1_000,
      min: 0.1,
      max: 60,
      step: 0.1,
      unit: "s",
    },
    {
      kind: "integer",
      name: "spreadSeeds",
      label: "Seeds in the spread",
      doc: "Seeds the spread table runs for each of five outage ends, one second apart; 0 leaves it out.",
      default: 3,
      min: 0,
      max: 20,
      step: 1,
    },
  ],
  // Every contender over the run, and with a spread each breaker over five outage ends and the
  // seeds, each to 30 s past its outage.
  work: (p) => {
    const who = breakerLineup({ threshold: p.threshold, openFor: p.openFor * 1_000 });
    const spread = [0, 1, 2, 3, 4].reduce((s, d) => s + (p.outageTo * 1_000 + d * 1_000 + SPREAD_RUN), 0);
    const breakers = who.filter((c) => c.spec !== undefined).length;
    return {
      calls: p.rate * (who.length * p.duration + (breakers * p.spreadSeeds * spread) / 1_000),
      knobs: p.spreadSeeds > 0 ? ["rate", "duration", "spreadSeeds", "outageTo"] : ["rate", "duration"],
    };
  },
  run(p, start) {
    const { from, to } = outageOf("breaker-outage", p);
    checkDuration("breaker-outage", start, p.duration);
    // The spread's runs go on 30 s past outage ends up to 4 s after outageTo (see below).
    if (p.spreadSeeds > 0)
      checkEnd(
        "breaker-outage",
        start,
        to + SPREAD_PAST,
        "outageTo (s) with spreadSeeds above 0",
        `outageTo ${p.outageTo} s + ${SPREAD_PAST / 1_000} s of the spread's runs`,
      );
    const duration = p.duration * 1_000;
    const options = (seed: number, end: number, length: number) => ({
      seed,
      start,
      duration: length,
      step: 1_000,
      traffic: poisson({ rate: p.rate }),
      backend: {
        latency: exponential(p.latency),
        failures: new FailureSchedule(p.baseRate, [{ from, to: end, rate: p.outageRate }]),
      },
    });
    const who = breakerLineup({ threshold: p.threshold, openFor: p.openFor * 1_000 });
    const runs = who.map((c) =>
      simulate({ ...options(p.seed, to, duration), label: c.label, policies: c.spec === undefined ? [] : [c.spec] }),
    );
    const figures: Record<string, number> = {};
    const rows = runs.map((r, i) => {
      const id = who[i].id;
      const l = lead(r, { after: to });
      const o = outageFigures(r, from, to);
      leadFigures(figures, id, l);
      figures[`${id}.reachedDuringOutage`] = o.reached;
      figures[`${id}.refusedWhileUp`] = o.refusedUp;
      return [r.label, ...leadCells(l), percent(o.reached), String(o.refusedUp)];
    });
    const tables: Table[] = [
      {
        title: `${p.rate} calls/s; ${percent(p.outageRate)} of calls fail from ${p.outageFrom} s to ${p.outageTo} s (no caller deadline: every success counts)`,
        columns: ["", ...LEAD_COLUMNS, "outage calls that reached the backend", "refused while the backend was up"],
        rows,
      },
    ];
    // The spread: the outage's end moved 0–4 s later, over seeds, each run 30 s past its outage.
    const ends = [0, 1, 2, 3, 4].map((d) => to + d * 1_000);
    if (p.spreadSeeds > 0) {
      const spreadRows = who
        .filter((c) => c.spec !== undefined)
        .map((c) => {
          const reached: number[] = [];
          const recovery: number[] = [];
          const refused: number[] = [];
          for (const end of ends)
            for (let s = 0; s < p.spreadSeeds; s++) {
              const r = simulate({
                ...options(p.seed + s, end, end + SPREAD_RUN),
                label: c.label,
                policies: [c.spec!],
              });
              const o = outageFigures(r, from, end);
              reached.push(o.reached);
              recovery.push(lead(r, { after: end }).recoverySeconds);
              refused.push(o.refusedUp);
            }
          for (const [name, xs] of [
            ["reached", reached],
            ["recovery", recovery],
            ["refusedWhileUp", refused],
          ] as const) {
            figures[`${c.id}.spread.${name}.min`] = Math.min(...xs);
            figures[`${c.id}.spread.${name}.max`] = Math.max(...xs);
          }
          return [c.label, spread(reached, "%"), spread(recovery, "s"), spread(refused, "")];
        });
      tables.push({
        title: `Spread over outage ends ${p.outageTo}–${p.outageTo + 4} s and ${p.spreadSeeds} seed${p.spreadSeeds === 1 ? "" : "s"} (each run to 30 s past its outage): least–most`,
        columns: [
          "",
          "outage calls that reached the backend",
          "back to 90 % success after",
          "refused while the backend was up",
        ],
        rows: spreadRows,
      });
    }
    const f = (id: string, name: string) => figures[`${id}.${name}`];
    const pct = (id: string) => percent(f(id, "reachedDuringOutage"));
    const secs = (id: string) => `${num(f(id, "recoverySeconds"))} s`;
    const reading = [
      `The guard's default breaker let ${pct("tideward")} of the outage's calls reach the dead backend, was back to 90 % success ${secs("tideward")} after it ended, and refused ${f("tideward", "refusedWhileUp")} calls while the backend was up.`,
      `The consecutive breaker lets the fewest outage calls through (${pct("classic")}, one probe an open period): on that figure it wins, and a backend that needs silence to recover is better served by it. It pays after the outage: it refuses a recovered backend until its next probe, up to its whole open time, so its recovery and its refusals hinge on where the outage ends within an open period (${secs("classic")} and ${f("classic", "refusedWhileUp")} refusals here${p.spreadSeeds > 0 ? `; ${spread([f("classic", "spread.recovery.min"), f("classic", "spread.recovery.max")], "s")} and ${spread([f("classic", "spread.refusedWhileUp.min"), f("classic", "spread.refusedWhileUp.max")], "")} over the spread` : ""}).`,
      `The sre preset keeps go-zero's ten-second window: its old successes excuse failures for seconds after the outage starts and its failures refuse calls for about a window after it ends (${pct("sre")}, ${secs("sre")}), which is why the guard does not ship it as its default.`,
      `No breaker has the most goodput here (${percent(f("none", "goodputRate"))}): a failure costs the caller nothing in this scenario, so what a breaker buys is the backend's load, ${num(f("none", "backendPerSecond"))} calls a second without one against ${num(f("tideward", "backendPerSecond"))} with the guard's.`,
      `opossum's breaker opens only when more than half of the calls fired in its ten-second window failed, about five seconds into the outage (${pct("opossum")}); the sampling breaker opens past a fifth of its window failing (${pct("sampling")}).`,
    ].join(" ");
    return { runs, tables, figures, report: [...tables.map(textTable), reading].join("\n\n") };
  },
});
