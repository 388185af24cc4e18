// The one shape of a configuration error in every tideward package: a TypeError or RangeError
// (as the checks have always thrown) that also carries, as data, the path the user typed, the
// value found there and what is wrong with it. A package that builds another's primitive from
// fields the user gave re-roots the primitive's error under its own path from that data
// (`guard.breaker.k` for `Sre.k`), never by reading the other package's message.

/**
 * A bad option or argument, as every tideward package reports one: a `TypeError` (the wrong kind
 * of value) or a `RangeError` (a value out of range) whose message names the path and the value,
 * with both also given as data. Test for it with {@link isOptionError}, which works across two
 * copies of a package in one bundle.
 *
 * @example
 * import { Bucket } from "@tideward/limiters";
 * try { new Bucket(-5); } catch (e) {
 *   if (isOptionError(e)) [e.path, e.value]; // ["Bucket.rate", -5]
 * }
 */
export interface OptionError extends Error {
  /** Brand read by {@link isOptionError}. */
  readonly isOptionError: true;
  /**
   * Where the bad value is, as the user typed it, dotted: `"guard.bucket.rate"`,
   * `"admit.limits[0].quota"`, `"Breaker.k"` for a primitive built directly.
   */
  readonly path: string;
  /** The value found there. */
  readonly value: unknown;
  /** What is wrong with it, as the message says after the path: `"must be above 0, got -5"`. */
  readonly problem: string;
}

/** Whether `e` is an {@link OptionError}, from this or any other copy of the package. */
export function isOptionError(e: unknown): e is OptionError {
  return typeof e === "object" && e !== null && (e as { isOptionError?: unknown }).isOptionError === true;
}

/** How a message names a path: the owner, then the field under it, then a gloss such as a unit. */
interface Label {
  /** `"guard"`, `"Bucket"`, `"policy.bucket"`. */
  readonly owner: string;
  /** `"bucket.rate"`, `"limits[0].quota"`, or "" for the owner itself. */
  readonly field: string;
  /** `"(ms)"`, `"(tokens per second)"`, or "". */
  readonly note: string;
  /**
   * The problem as it reads once re-rooted, when the owner's own words for the object differ:
   * `Breaker policy must be an object` is `guard breaker must be an object` under the guard.
   */
  readonly within?: string;
}

// Kept on the error under a symbol of its own: what re-rooting it needs, not part of its API.
const LABEL = Symbol.for("tideward.optionError.label");

/**
 * Reads a check's `what`: the owner, a space, the field (its own words may hold spaces, which
 * the path writes as dots), then an optional gloss in parentheses at the end. `"Bucket rate
 * (tokens per second)"` is the owner `Bucket`, the field `rate` and the gloss.
 */
function labelOf(what: string): Label {
  let name = what;
  let note = "";
  const open = what.endsWith(")") ? what.lastIndexOf(" (") : -1;
  if (open > 0) {
    name = what.slice(0, open);
    note = what.slice(open + 1);
  }
  const space = name.indexOf(" ");
  return space < 0
    ? { owner: name, field: "", note }
    : { owner: name.slice(0, space), field: name.slice(space + 1), note };
}

function pathOf(l: Label): string {
  return l.field === "" ? l.owner : `${l.owner}.${l.field.replaceAll(" ", ".")}`;
}

/** A message: the name, then the problem (a problem that opens with a comma qualifies the name). */
function joined(name: string, problem: string): string {
  return problem.startsWith(",") ? `${name}${problem}` : `${name} ${problem}`;
}

function make(
  range: boolean,
  label: Label,
  message: string,
  problem: string,
  value: unknown,
  cause: unknown,
): OptionError {
  const options = cause === undefined ? undefined : { cause };
  const e = range ? new RangeError(message, options) : new TypeError(message, options);
  // Not enumerable: an error compared field by field (as a test compares one) is its class and message.
  Object.defineProperties(e, {
    isOptionError: { value: true, enumerable: false },
    path: { value: pathOf(label), enumerable: false },
    value: { value, enumerable: false },
    problem: { value: problem, enumerable: false },
    [LABEL]: { value: label, enumerable: false },
  });
  return e as OptionError;
}

/**
 * A `TypeError` for the option `what` names (`"Bucket rate (tokens per second)"`): its message
 * is `what`, a space and `problem` (no space before a problem that opens with a comma, which
 * qualifies the name); its path and value are data.
 */
export function typeError(what: string, problem: string, value: unknown, cause?: unknown): OptionError {
  return make(false, labelOf(what), joined(what, problem), problem, value, cause);
}

/**
 * A `TypeError` about a whole options argument (`Breaker policy must be an object`): `argument`
 * names it in the owner's own words, and is left out once re-rooted (`guard breaker must be …`).
 */
export function argumentError(owner: string, argument: string, problem: string, value: unknown): OptionError {
  const label: Label = { owner, field: "", note: "", within: problem };
  return make(false, label, `${owner} ${argument} ${problem}`, `${argument} ${problem}`, value, undefined);
}

/** A `RangeError` for the option `what` names; see {@link typeError}. */
export function rangeError(what: string, problem: string, value: unknown, cause?: unknown): OptionError {
  return make(true, labelOf(what), joined(what, problem), problem, value, cause);
}

/**
 * `e` moved under the path `at` (`"guard breaker"`) when it is an {@link OptionError} of one of
 * `owners` (`["Breaker", "Sre"]`): the field it named is read under `at` (`Sre k` becomes
 * `guard breaker.k`), with `e` as its cause. Anything else is returned as it is.
 */
export function reroot(e: unknown, at: string, owners: readonly string[]): unknown {
  if (!isOptionError(e)) return e;
  const inner = (e as unknown as Record<symbol, Label | undefined>)[LABEL];
  if (inner === undefined || !owners.includes(inner.owner)) return e;
  const outer = labelOf(at);
  const field = outer.field === "" ? inner.field : inner.field === "" ? outer.field : `${outer.field}.${inner.field}`;
  const label: Label = { owner: outer.owner, field, note: inner.note };
  const name = field === "" ? label.owner : `${label.owner} ${field}`;
  const problem = inner.within ?? e.problem;
  const message = joined(label.note === "" ? name : `${name} ${label.note}`, problem);
  return make(e instanceof RangeError, label, message, problem, e.value, e);
}

/**
 * What `build` answers, its option errors re-rooted under `at` (see {@link reroot}): the one way
 * a composition names the path the user typed for a primitive it builds from their fields.
 */
export function within<T>(at: string, owners: readonly string[], build: () => T): T {
  try {
    return build();
  } catch (e) {
    throw reroot(e, at, owners);
  }
}
