// The contenders the adaptive-concurrency scenarios compare, defined once: each adaptive limit
// (with or without priority), a fixed limit, the shedder, and no policy, each a fresh policy for
// a run and, for the limits, a trace of the limit over that run.
import type { Priorities, SampleWindow } from "@tideward/concurrency";
import { exponential } from "../distribution";
import type { Distribution } from "../distribution";
import { gate } from "../policies/limiters";
import { shedder } from "../policies/shedder";
import type { PolicySpec } from "../policy";
import type { NumberKnob } from "../scenario";
import { ADAPTIVE_LABELS, adaptiveLimit } from "./adaptive-policies";
import type { AdaptiveKind } from "./adaptive-policies";
import { LimitTrace } from "./limit-trace";

/** What a contender is: an adaptive kind, the shedder, or none. */
export type ContenderKind = AdaptiveKind | "shedder" | "none";

/** One contender of a lineup. */
export interface AdaptiveContender {
  /** Its id in the figures: `"gradient2"`, `"vegas+priority"`. */
  readonly id: string;
  /** How its run is labelled. */
  readonly label: string;
  readonly kind: ContenderKind;
  /** Whether it judges calls by their priority. */
  readonly priority: boolean;
}

/** How a lineup's policies are made. */
export interface LineupSettings {
  /** A fixed limit's places (`"fixed"`): a static gate sized for the backend's capacity. */
  readonly fixed: number;
  /** The levels the contenders with priority judge calls by, each call at its key's priority. */
  readonly priorities?: Priorities;
  /**
   * The caller's deadline, ms: AIMD counts a call slower than it as a drop (its `timeout`), as a
   * server told its callers' deadline would set it. @defaultValue AIMD's preset, 5 000 ms
   */
  readonly deadline?: number;
  /** Fields laid over an adaptive limit's policy (after {@link FLOOR} and the deadline). @defaultValue none */
  readonly policy?: Readonly<Record<string, number>>;
  /** A sample window for the adaptive limits (see `Limiter`'s `window`). @defaultValue none: a sample a call */
  readonly window?: Partial<SampleWindow>;
}

/**
 * The adaptive limits' settings in every scenario: each algorithm's preset with its floor
 * lowered to one place, so the limit can fall to a small backend's true concurrency (the
 * presets' floor of 20 places is above many a backend's).
 */
export const FLOOR = { min: 1 } as const;

/** A lineup: `kinds` in order, each with priority (`+priority`) where `priority` names it, without otherwise. */
export function lineup(
  entries: readonly (readonly [kind: ContenderKind, priority: boolean])[],
): readonly AdaptiveContender[] {
  return entries.map(([kind, priority]) => {
    const base = kind === "none" ? "no policy" : kind === "shedder" ? "shedder" : ADAPTIVE_LABELS[kind];
    return {
      id: priority ? `${kind}+priority` : kind,
      label: priority ? `${base} with priority` : base,
      kind,
      priority,
    };
  });
}

/**
 * The policies of contender `c`'s run; a limit notes its value over the run in `trace`.
 * `settings.fixed` sizes the fixed limit (or gate, without priority).
 */
export function policiesOf(c: AdaptiveContender, settings: LineupSettings, trace?: LimitTrace): PolicySpec[] {
  const priorities = c.priority ? settings.priorities : undefined;
  const withPriority = priorities === undefined ? {} : { priorities };
  switch (c.kind) {
    case "none":
      return [];
    case "shedder":
      return [shedder({}, withPriority)];
    case "fixed":
      // Without priority a fixed limit is the static gate.
      return priorities === undefined
        ? [gate(settings.fixed)]
        : [
            adaptiveLimit({
              kind: "fixed",
              policy: { limit: settings.fixed },
              name: "fixed",
              ...withPriority,
              ...(trace === undefined ? {} : { trace }),
            }),
          ];
    default:
      return [
        adaptiveLimit({
          kind: c.kind,
          policy: {
            ...(c.kind === "aimd" && settings.deadline !== undefined
              ? { ...FLOOR, timeout: settings.deadline }
              : FLOOR),
            ...settings.policy,
          },
          ...withPriority,
          ...(trace === undefined ? {} : { trace }),
          ...(settings.window === undefined ? {} : { window: settings.window }),
        }),
      ];
  }
}

/** A trace for a run of `duration` ms from `start`, one value a `step` ms, for a contender that has a limit. */
export function traceFor(c: AdaptiveContender, start: number, duration: number, step: number): LimitTrace | undefined {
  return c.kind === "none" || c.kind === "shedder" || (c.kind === "fixed" && !c.priority)
    ? undefined
    : new LimitTrace(start, duration, step);
}

/**
 * A service time of mean `mean` ms whose random part is `spread` of it: a floor of
 * `mean × (1 − spread)` ms (the work every call does) plus an exponential part of mean
 * `mean × spread`. `spread` 1 is the plain exponential of queueing theory's M/M/c, whose least
 * round trip is near 0; less keeps a floor, as a real server's calls have.
 */
export function serviceTime(mean: number, spread: number): Distribution {
  if (spread >= 1) return exponential(mean);
  const floor = mean * (1 - spread);
  const part = exponential(mean * spread);
  return Object.freeze({
    label: `${floor} ms + exponential(mean ${mean * spread})`,
    mean,
    sample: (random: () => number) => floor + part.sample(random),
  });
}

/** `service`: the mean service time, ms. */
export const serviceKnob: NumberKnob = Object.freeze({
  kind: "number",
  name: "service",
  label: "Service time",
  doc: "Mean time a worker spends on a call.",
  default: 40,
  min: 1,
  max: 1_000,
  step: 1,
  unit: "ms",
  scale: "log",
});

/** `spread`: the share of the service time that varies (see {@link serviceTime}). */
export const spreadKnob: NumberKnob = Object.freeze({
  kind: "number",
  name: "spread",
  label: "Service time spread",
  doc: "The share of the service time that varies: a floor of (1 − spread) × the mean plus an exponential part. 1 is the plain exponential, whose shortest calls take almost nothing.",
  default: 0.5,
  min: 0,
  max: 1,
  step: 0.05,
});
