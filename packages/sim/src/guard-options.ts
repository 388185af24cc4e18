import { check } from "@tideward/time/internal";
import { byName } from "./by-name";

/**
 * The `@tideward/guard` option a knob sets in its scenario's first run (tideward's), and how the
 * knob's value becomes the option's: what a page needs to copy a run as the options that
 * reproduce it. The option's value is `knob × scale + offset`.
 */
export interface GuardOption {
  /**
   * Which function takes it: `"guard"` for `guard(fn, options)` (a client's calls), `"admit"`
   * for `admit(options)` (a server's admission of requests).
   * @defaultValue "guard"
   */
  readonly of?: "guard" | "admit";
  /** Its path in those options, each field's name joined by dots: `"retry.attempts"`, `"timeout"`. */
  readonly path: string;
  /**
   * What the knob's value is multiplied by, from the knob's unit to the option's: 1 000 for a
   * knob in seconds and an option in milliseconds.
   * @defaultValue 1
   */
  readonly scale?: number;
  /** What is then added, in the option's unit: 1 for a knob counting retries and an option counting attempts. @defaultValue 0 */
  readonly offset?: number;
}

/**
 * The `@tideward/guard` options a scenario's first run (tideward's) stands for, as plain JSON:
 * those of `guard(fn, options)` (a client's calls) and of `admit(options)` (a server's admission
 * of requests), each left out when the run has none. What a page copies to reproduce a run.
 */
export interface GuardOptionSets {
  /** The options of `guard(fn, options)`, the client's: `{ timeout: 1000, retry: { attempts: 4 } }`. @defaultValue none */
  readonly guard?: Record<string, unknown>;
  /** The options of `admit(options)`, the server's admission: `{ shedder: { cpu: 900 } }`. @defaultValue none */
  readonly admit?: Record<string, unknown>;
}

/**
 * The options `knobs` set at `params`: each numeric knob with an `option`, its value times the
 * scale plus the offset at the option's path; then `extra`, what the scenario's run fixes or
 * raises beyond the knobs alone, laid over them field by field. Every number is rounded to twelve
 * digits (0.3 s reads 300 ms, not 300.00000000000006), which keeps their order: a cap at least
 * its base stays so.
 */
export function guardOptionsOf(
  knobs: readonly { readonly kind: string; readonly name: string; readonly option?: GuardOption }[],
  params: Readonly<Record<string, unknown>>,
  extra: GuardOptionSets | undefined,
): GuardOptionSets {
  const sets: Record<"guard" | "admit", Record<string, unknown>> = { guard: byName(), admit: byName() };
  for (const k of knobs) {
    if ((k.kind !== "number" && k.kind !== "integer") || k.option === undefined) continue;
    const o = k.option;
    const value = (params[k.name] as number) * (o.scale ?? 1) + (o.offset ?? 0);
    const path = o.path.split(".");
    const last = path.pop() as string;
    let at = sets[o.of ?? "guard"];
    for (const field of path) at = (at[field] ??= byName()) as Record<string, unknown>;
    at[last] = value;
  }
  for (const of of ["guard", "admit"] as const) {
    if (extra?.[of] !== undefined) lay(sets[of], extra[of]);
    round(sets[of]);
  }
  return {
    ...(Object.keys(sets.guard).length === 0 ? {} : { guard: sets.guard }),
    ...(Object.keys(sets.admit).length === 0 ? {} : { admit: sets.admit }),
  };
}

/** `over`'s fields laid on `under`, records within records merged, anything else replaced. */
function lay(under: Record<string, unknown>, over: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(over)) {
    const below = under[field];
    if (isRecord(value) && isRecord(below)) lay(below, value);
    else under[field] = isRecord(value) ? copy(value) : value;
  }
}

/** Every number in `r`, records within it too, rounded to twelve significant digits. */
function round(r: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(r)) {
    if (typeof value === "number" && Number.isFinite(value)) r[field] = Number(value.toPrecision(12));
    else if (isRecord(value)) round(value);
  }
}

function copy(r: Record<string, unknown>): Record<string, unknown> {
  const out = byName<unknown>();
  lay(out, r);
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** What a definition's `options` answered, checked to be option sets, or a TypeError naming the scenario. */
export function checkOptionSets(value: unknown, what: string): GuardOptionSets {
  if (!isRecord(value))
    throw new TypeError(
      `${what} must return { guard?, admit? }, each a record of options, got ${check.describe(value)}`,
    );
  const o = check.options(value, ["guard", "admit"], what);
  for (const of of ["guard", "admit"] as const)
    if (o[of] !== undefined && !isRecord(o[of]))
      throw new TypeError(`${what} ${of} must be a record of options, got ${check.describe(o[of])}`);
  return o;
}
