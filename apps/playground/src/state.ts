// A scenario's state in the URL: `#<scenario>?key=value&…`, every knob that differs from its
// default. Reading is forgiving (an unknown key is ignored, a number out of range is held to
// it, a bad choice falls back to the default) because a link may be older than the page; and
// it says what it forgave, so the page can tell the reader which values it changed.
import type { Knob, Params, Scenario, Value } from "./model.ts";
import { withUnit } from "./units.ts";

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

/** A value the URL asked for that the page did not use as written, and what it used instead. */
export interface Change {
  /** The knob's key as the URL spells it; for the scenario itself, `"#"`. */
  readonly key: string;
  /** What the URL said. */
  readonly given: string;
  /** A sentence naming the knob, what the URL said, why it was changed and to what: `"Calls offered (rate=99999): above the most it goes to, so 1000 calls/s is used."`. */
  readonly said: string;
}

/** A knob's value as its control shows it: the number and its unit, or the choice's label. */
export function shown(knob: Knob, value: Value): string {
  if (knob.kind === "select") return knob.options.find((o) => o.value === value)?.label ?? String(value);
  return withUnit(String(value), knob.unit);
}

/** Why `text` is not `value` for `knob`, when it is not; undefined when it is what was asked for. */
function why(knob: Knob, text: string, value: Value | undefined): string | undefined {
  if (value === undefined) {
    const kind = knob.kind === "select" ? "not one of its choices" : text.trim() === "" ? "empty" : "not a number";
    return `${kind}, so the default, ${shown(knob, knob.value)}, is used`;
  }
  if (knob.kind === "select" || Number(text) === value) return undefined;
  const n = Number(text);
  if (n > knob.max) return `above the most it goes to, so ${shown(knob, value)} is used`;
  if (n < knob.min) return `below the least it goes to, so ${shown(knob, value)} is used`;
  return `not a step of ${withUnit(String(knob.step), knob.unit)} from ${shown(knob, knob.min)}, so ${shown(knob, value)} is used`;
}

/** The params a query string (`a=1&b=x`) gives over the defaults, and what it asked for that was changed or ignored. */
export function read(scenario: Scenario, query: string): { params: Params; changes: Change[] } {
  const asked = new URLSearchParams(query);
  const params: Record<string, Value> = { ...defaults(scenario) };
  const changes: Change[] = [];
  for (const knob of scenario.knobs) {
    const text = asked.get(knob.key);
    if (text === null) continue;
    const value = coerce(knob, text);
    if (value !== undefined) params[knob.key] = value;
    const said = why(knob, text, value);
    if (said !== undefined)
      changes.push({ key: knob.key, given: text, said: `${knob.label} (${knob.key}=${text}): ${said}.` });
  }
  const known = new Set(scenario.knobs.map((k) => k.key));
  const seen = new Set<string>();
  for (const [key, given] of asked) {
    if (!known.has(key))
      changes.push({ key, given, said: `${key}=${given}: ${scenario.title} has no such knob, so it is ignored.` });
    else if (seen.has(key))
      changes.push({ key, given, said: `${key}=${given}: ${key} is given more than once; the first is read.` });
    seen.add(key);
  }
  return { params, changes };
}

/** The params a query string (`a=1&b=x`) gives, over the defaults. */
export function decode(scenario: Scenario, query: string): Params {
  return read(scenario, query).params;
}

/**
 * The scenario a location hash names and its params, and what of the hash was changed: an
 * unknown scenario opens the `opening` one, or the first (an empty hash is no change, just the
 * page as it opens).
 */
export function resolve(
  hash: string,
  all: readonly Scenario[],
  opening?: string,
): { scenario: Scenario; params: Params; changes: Change[] } {
  const { id, query } = parseHash(hash);
  const found = all.find((s) => s.id === id);
  const scenario = found ?? all.find((s) => s.id === opening) ?? all[0];
  if (scenario === undefined) throw new Error("the page has no scenarios");
  if (found === undefined && id !== "") {
    // The knobs belong to a scenario that is not here: none of them is read.
    const said = `#${id}: there is no such scenario, so ${scenario.title} is shown${query === "" ? "" : " at its defaults"}.`;
    return { scenario, params: defaults(scenario), changes: [{ key: "#", given: id, said }] };
  }
  return { scenario, ...read(scenario, query) };
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
