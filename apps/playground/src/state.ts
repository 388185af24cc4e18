// A scenario's state in the URL: `#<scenario>?key=value&…`, every knob that differs from its
// default. Reading is forgiving (an unknown key is ignored, a number out of range is held to
// it, a bad choice falls back to the default) because a link may be older than the page.
import type { Knob, Params, Scenario, Value } from "./model.ts";

/** The knobs' defaults. */
export function defaults(scenario: Scenario): Params {
  return Object.fromEntries(scenario.knobs.map((k) => [k.key, k.value]));
}

/** A value for `knob` read from text, or undefined when it cannot be one. */
export function coerce(knob: Knob, text: string): Value | undefined {
  if (knob.kind === "select") return knob.options.some((o) => o.value === text) ? text : undefined;
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n)) return undefined;
  const held = Math.min(knob.max, Math.max(knob.min, n));
  // Round to the knob's grid, counted from min, without drifting into float noise.
  const steps = Math.round((held - knob.min) / knob.step);
  const decimals = (String(knob.step).split(".")[1] ?? "").length;
  return Math.min(knob.max, Number((knob.min + steps * knob.step).toFixed(decimals)));
}

/** The params a query string (`a=1&b=x`) gives, over the defaults. */
export function decode(scenario: Scenario, query: string): Params {
  const read = new URLSearchParams(query);
  const params: Record<string, Value> = { ...defaults(scenario) };
  for (const knob of scenario.knobs) {
    const text = read.get(knob.key);
    if (text === null) continue;
    const value = coerce(knob, text);
    if (value !== undefined) params[knob.key] = value;
  }
  return params;
}

/** The query string for `params`: the knobs that differ from their defaults, in knob order. */
export function encode(scenario: Scenario, params: Params): string {
  const out = new URLSearchParams();
  for (const knob of scenario.knobs) {
    const value = params[knob.key];
    if (value !== undefined && value !== knob.value) out.set(knob.key, String(value));
  }
  return out.toString();
}

/** The location hash for a scenario and its params. */
export function hashFor(scenario: Scenario, params: Params): string {
  const query = encode(scenario, params);
  return `#${scenario.id}${query === "" ? "" : `?${query}`}`;
}

/** The scenario id and query string a location hash names. */
export function parseHash(hash: string): { id: string; query: string } {
  const body = hash.replace(/^#/, "");
  const at = body.indexOf("?");
  return at < 0 ? { id: body, query: "" } : { id: body.slice(0, at), query: body.slice(at + 1) };
}
