// The simulator's catalogue as the page's scenarios: each of @tideward/sim's scenarios gets its
// knobs as controls, built from the knob's own kind, range, step, unit and sentence, so a
// scenario added to the catalogue appears on the page with no page code. Plain data only: the
// page's own script gets the catalogue's descriptions from its worker (see sim-catalogue.ts),
// so the simulator is loaded once, in the worker, and not a second time with the page.
import type { Knob as SimKnob, Scenario as SimScenario } from "@tideward/sim";

/** What the page needs of a simulator scenario to draw it: plain data, as it crosses from the worker. */
export type SimMeta = Pick<SimScenario, "name" | "title" | "summary" | "knobs">;

/** A scenario's description, without its functions. */
export function metaOf(s: SimMeta): SimMeta {
  return { name: s.name, title: s.title, summary: s.summary, knobs: s.knobs.map((k) => ({ ...k })) };
}
import type { Knob, Params, Scenario, Value } from "./model.ts";

/** A range with more steps than this is a typed number, not a slider (a seed, a queue of 100 000). */
const MAX_SLIDER_STEPS = 2_000;

/**
 * The page's control for a simulator knob. The slider's grid is laid through the default (its
 * lowest point moved up to the first step at or above `min` from which the default is a whole
 * number of steps), so the default is a point the control can show and a link never moves it.
 */
export function knobOf(k: SimKnob): Knob {
  const group = k.name === "seed" ? "run" : "scenario";
  const base = { key: k.name, label: k.label, group, help: k.doc };
  if (k.kind === "select") return { ...base, kind: "select", options: k.options, value: k.default };
  if (k.kind === "boolean")
    return {
      ...base,
      kind: "select",
      options: [
        { value: "true", label: "yes" },
        { value: "false", label: "no" },
      ],
      value: String(k.default),
    };
  const decimals = (String(k.step).split(".")[1] ?? "").length;
  const fix = (x: number): number => Number(x.toFixed(decimals));
  let min = fix(k.default - Math.floor((k.default - k.min) / k.step + 1e-9) * k.step);
  if (min < k.min) min = fix(min + k.step); // float noise below the knob's own least
  const max = fix(min + Math.floor((k.max - min) / k.step + 1e-9) * k.step);
  const kind = (max - min) / k.step > MAX_SLIDER_STEPS ? "number" : "range";
  return { ...base, kind, min, max, step: k.step, value: k.default, unit: k.unit ?? "" };
}

/** The page's scenario for one of the simulator's. */
export function pageScenario(s: SimMeta): Scenario {
  return { id: s.name, tab: s.title, title: s.title, blurb: s.summary, knobs: s.knobs.map(knobOf) };
}

/**
 * The simulator's parameters for the page's: only the knobs that differ from their defaults (so
 * a replay reads as what was changed), a yes / no choice as the boolean it stands for.
 */
export function simParams(s: SimMeta, params: Params): Record<string, number | string | boolean> {
  const out: Record<string, number | string | boolean> = {};
  for (const k of s.knobs) {
    const v: Value | undefined = params[k.name];
    if (v === undefined) continue;
    const value = k.kind === "boolean" ? v === "true" : v;
    if (value !== k.default) out[k.name] = value;
  }
  return out;
}
