import { Priorities } from "@tideward/concurrency";
import { single } from "../keys";
import { merge } from "../merge";
import { priority } from "../priority";
import { poisson } from "../rates";
import type { RunResult } from "../result";
import { simulate } from "../simulate";
import { defineScenario, seedKnob } from "../scenario";
import type { NumberKnob } from "../scenario";
import { num, outcome, percent, sumBetween } from "../report";
import { LEAD_COLUMNS, lead, leadCells, leadFigures } from "./lead";
import { deadlineKnob, durationKnob, workersKnob } from "./knobs";
import { lineup, policiesOf, serviceTime, serviceKnob, spreadKnob } from "./adaptive-lineup";
import { SAMPLE_WINDOW } from "./lineups";
import { checkDuration } from "./run-end";

/** The parameters of {@link prefetchSpike}. */
export interface PrefetchSpikeParams {
  readonly [name: string]: number;
  readonly seed: number;
  readonly user: number;
  readonly prefetch: number;
  readonly spike: number;
  readonly spikeFrom: number;
  readonly spikeLength: number;
  readonly workers: number;
  readonly service: number;
  readonly deadline: number;
  readonly duration: number;
  readonly share: number;
  readonly spread: number;
}

/** The contenders: each limit and the shedder with priority, each limit without, and none: ten, as many as a page's plot tells apart. */
export const PREFETCH_CONTENDERS = lineup([
  ["gradient2", true],
  ["vegas", true],
  ["aimd", true],
  ["fixed", true],
  ["shedder", true],
  ["gradient2", false],
  ["vegas", false],
  ["aimd", false],
  ["fixed", false],
  ["none", false],
]);

/** The level user-initiated calls run at, and prefetch's. */
const USER = "user";
const PREFETCH = "prefetch";
/** The backend's queue: long enough that, unguarded, waiting rather than refusal is what fails calls. */
const QUEUE = 2_000;

function rate(name: string, label: string, doc: string, value: number): NumberKnob {
  return {
    kind: "number",
    name,
    label,
    doc,
    default: value,
    min: 1,
    max: 5_000,
    step: 10,
    unit: "calls/s",
    scale: "log",
  };
}

/**
 * Steady user-initiated traffic and a spike of prefetch traffic twelve times its usual rate.
 * With priority, a limit refuses the prefetch first and keeps user calls answered in time.
 */
export const prefetchSpike = defineScenario<PrefetchSpikeParams>({
  name: "prefetch-spike",
  title: "A spike of prefetch traffic",
  summary:
    "A server takes user calls at half its capacity and a little prefetch (work asked for ahead of need, which nobody waits on). For twenty seconds prefetch grows twelvefold, far past what the server can do. User calls come first, prefetch may fill half the places. Gradient2, Vegas, AIMD and a fixed limit run with priority and without, the shedder with priority; no policy lets the queue fill. Read the user calls answered within the deadline through the spike, what prefetch got, and the backend's load against its capacity.",
  knobs: [
    seedKnob,
    rate("user", "User calls", "User-initiated calls a second, Poisson: critical.", 200),
    rate("prefetch", "Prefetch calls", "Prefetch calls a second outside the spike, Poisson: sheddable.", 40),
    {
      kind: "number",
      name: "spike",
      label: "Spike",
      doc: "Prefetch traffic is multiplied by this during the spike.",
      default: 12,
      min: 1,
      max: 50,
      step: 1,
      unit: "×",
    },
    {
      kind: "number",
      name: "spikeFrom",
      label: "Spike starts",
      doc: "When the spike begins.",
      default: 20,
      min: 0,
      max: 3_600,
      step: 1,
      unit: "s",
    },
    {
      kind: "number",
      name: "spikeLength",
      label: "Spike length",
      doc: "How long the spike lasts.",
      default: 20,
      min: 1,
      max: 600,
      step: 1,
      unit: "s",
    },
    workersKnob({
      doc: "Calls the backend serves at once: its true concurrency.",
      default: 16,
      min: 1,
      max: 1_000,
      step: 1,
    }),
    serviceKnob,
    deadlineKnob({
      doc: "Only an answer within this long counts as goodput; the caller stops waiting then (the server still serves what it queued).",
      default: 1,
      min: 0.05,
      max: 60,
      step: 0.1,
    }),
    durationKnob({ default: 60, min: 10, max: 3_600, step: 10 }),
    {
      kind: "number",
      name: "share",
      label: "Prefetch's share",
      doc: "The most of a limit prefetch calls may fill, with priority; user calls may fill all of it.",
      default: 0.5,
      min: 0,
      max: 1,
      step: 0.05,
    },
    spreadKnob,
  ],
  work: (p) => ({
    calls:
      PREFETCH_CONTENDERS.length * ((p.user + p.prefetch) * p.duration + p.prefetch * (p.spike - 1) * p.spikeLength),
    knobs: ["user", "prefetch", "spike", "spikeLength", "duration"],
  }),
  run(p, start) {
    checkDuration("prefetch-spike", start, p.duration);
    const duration = p.duration * 1_000;
    const from = Math.min(p.spikeFrom * 1_000, duration);
    const to = Math.min(from + p.spikeLength * 1_000, duration);
    const capacity = (p.workers * 1_000) / p.service;
    const traffic = merge(
      priority(USER, poisson({ rate: p.user, keys: single("user") })),
      priority(
        PREFETCH,
        merge(
          poisson({ rate: p.prefetch, keys: single("prefetch") }),
          ...(p.spike > 1 && to > from
            ? [poisson({ rate: p.prefetch * (p.spike - 1), keys: single("prefetch-spike"), at: from, until: to })]
            : []),
        ),
      ),
    );
    const priorities = new Priorities({ levels: [USER, PREFETCH], shares: [1 - p.share, p.share], fallback: USER });
    const latency = serviceTime(p.service, p.spread);
    const runs = PREFETCH_CONTENDERS.map((c) =>
      simulate({
        seed: p.seed,
        start,
        duration,
        step: 1_000,
        label: c.label,
        traffic,
        backend: { latency, workers: p.workers, queue: QUEUE },
        client: { deadline: p.deadline * 1_000 },
        policies: policiesOf(c, {
          fixed: p.workers,
          priorities,
          deadline: p.deadline * 1_000,
          window: SAMPLE_WINDOW,
        }),
        // What is still queued when the traffic stops is not the story: stop there.
        drain: 0,
      }),
    );
    const figures: Record<string, number> = { capacity };
    const rows = runs.map((r, i) => {
      const id = PREFETCH_CONTENDERS[i].id;
      const l = lead(r, { after: to, hold: 5_000 });
      leadFigures(figures, id, l);
      const user = share(r, USER, from, to);
      const prefetch = share(r, PREFETCH, from, to);
      const load = to > from ? (sumBetween(r.series.t, r.series.backendLoad, from, to) * 1_000) / (to - from) : 0;
      figures[`${id}.userInSpike`] = user;
      figures[`${id}.prefetchInSpike`] = prefetch;
      figures[`${id}.userGoodputRate`] = r.summary.byPriority?.[USER]?.goodputRate ?? 0;
      figures[`${id}.loadInSpike`] = load;
      return [
        r.label,
        ...leadCells(l, capacity),
        percent(user),
        percent(prefetch),
        `${num(load)}/s (${percent(load / capacity)})`,
      ];
    });
    const table = {
      title: `${p.user} user calls/s and ${p.prefetch} prefetch calls/s, prefetch ×${p.spike} from ${p.spikeFrom} s for ${p.spikeLength} s, to ${p.workers} workers of ${p.service} ms (capacity ${num(capacity)}/s); a ${p.deadline} s deadline. Recovered: five seconds in a row at 90 % goodput after the spike.`,
      columns: [
        "",
        ...LEAD_COLUMNS,
        "user calls in time, in the spike",
        "prefetch in time, in the spike",
        "backend load in the spike",
      ],
      rows,
    };
    return outcome(runs, table, figures, reading(p, figures));
  },
});

/** Of the calls at `level` offered in `[from, to)` ms, the share answered in time (by the buckets they ended in). */
function share(r: RunResult, level: string, from: number, to: number): number {
  const s = r.series.byPriority?.[level];
  if (s === undefined) return 0;
  const offered = sumBetween(r.series.t, s.offered, from, to);
  return offered > 0 ? Math.min(1, sumBetween(r.series.t, s.goodput, from, to) / offered) : 1;
}

function reading(p: PrefetchSpikeParams, figures: Readonly<Record<string, number>>): string {
  const f = (id: string, name: string) => figures[`${id}.${name}`];
  const user = (id: string) => percent(f(id, "userInSpike"));
  const limits = ["gradient2", "vegas", "aimd"] as const;
  const names = { gradient2: "Gradient2", vegas: "Vegas", aimd: "AIMD" } as const;
  const best = (ids: readonly string[]) => ids.reduce((a, b) => (f(b, "userInSpike") > f(a, "userInSpike") ? b : a));
  const withP = limits.map((k) => `${names[k]} ${user(`${k}+priority`)}`).join(", ");
  const without = limits.map((k) => `${names[k]} ${user(k)}`).join(", ");
  const fixedWins =
    f("fixed+priority", "userInSpike") >= Math.max(...limits.map((k) => f(`${k}+priority`, "userInSpike")));
  return [
    `Through the spike, with priority, the adaptive limits answered this share of user calls within the ${p.deadline} s deadline: ${withP}; prefetch got ${limits.map((k) => percent(f(`${k}+priority`, "prefetchInSpike"))).join(", ")}.`,
    `Without priority the same limits answered ${without}: they keep the queue short, but refuse user and prefetch calls alike.`,
    `The shedder with priority answered ${user("shedder+priority")}, letting a queue longer than the deadline form (${f("shedder+priority", "wasted")} calls served after their callers had gone); no policy ${user("none")}, its queue full of calls whose callers had given up.`,
    fixedWins
      ? `A fixed limit of ${p.workers} places (the backend's workers) with the same priorities answered ${user("fixed+priority")}, ${percent(f("fixed+priority", "userInSpike")) === percent(f(best(limits.map((k) => `${k}+priority`)), "userInSpike")) ? "a tie with the best adaptive limit at this precision" : "ahead of every adaptive limit"}: sized exactly for this backend, it needs nothing to learn; the adaptive limits earn their keep when the capacity is not known or moves (see the capacity-shift scenario).`
      : `A fixed limit of ${p.workers} places (the backend's workers) with the same priorities answered ${user("fixed+priority")}.`,
  ].join(" ");
}
