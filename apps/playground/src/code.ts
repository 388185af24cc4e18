// A value together with the TypeScript that makes it. A scenario builds its simulation options
// out of these, so the options the worker runs and the code "copy as test" prints are one tree:
// the printed call cannot say something other than what ran.

/** A value and its source text. `value` is computed on first read (a symbolic one has none). */
export interface Code<T = unknown> {
  readonly source: string;
  readonly value: T;
}

const CODE = Symbol("code");

interface Tagged<T> extends Code<T> {
  readonly [CODE]: true;
}

function isCode(x: unknown): x is Code {
  return typeof x === "object" && x !== null && CODE in x;
}

function make<T>(source: string, compute: () => T): Code<T> {
  let done = false;
  let cached: T;
  const code: Tagged<T> = {
    [CODE]: true,
    source,
    get value(): T {
      if (!done) {
        cached = compute();
        done = true;
      }
      return cached;
    },
  };
  return code;
}

/** A number as a reader would write it: `180_000`, `0.25`, `Infinity`. */
export function numberSource(n: number): string {
  if (Number.isNaN(n)) return "Number.NaN";
  if (!Number.isFinite(n)) return n > 0 ? "Infinity" : "-Infinity";
  const s = String(n);
  if (!Number.isInteger(n) || Math.abs(n) < 10_000 || s.includes("e")) return s;
  return s.replace(/\B(?=(\d{3})+(?!\d))/g, "_");
}

const identifier = /^[A-Za-z_$][\w$]*$/;

/** The source of a plain value (number, string, boolean, array, record), Codes inside kept as they are. */
function sourceOf(x: unknown): string {
  if (isCode(x)) return x.source;
  if (typeof x === "number") return numberSource(x);
  if (typeof x === "string" || typeof x === "boolean" || x === null) return JSON.stringify(x);
  if (x === undefined) return "undefined";
  if (Array.isArray(x)) return `[${x.map(sourceOf).join(", ")}]`;
  if (typeof x === "object") {
    const fields = Object.entries(x as Record<string, unknown>).filter(([, v]) => v !== undefined);
    if (fields.length === 0) return "{}";
    return `{ ${fields.map(([k, v]) => `${identifier.test(k) ? k : JSON.stringify(k)}: ${sourceOf(v)}`).join(", ")} }`;
  }
  throw new TypeError(`no source for ${typeof x}`);
}

/** The value of a plain value with Codes inside, each replaced by its value. */
function valueOf(x: unknown): unknown {
  if (isCode(x)) return x.value;
  if (Array.isArray(x)) return x.map(valueOf);
  if (typeof x === "object" && x !== null)
    return Object.fromEntries(
      Object.entries(x as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, valueOf(v)]),
    );
  return x;
}

/** The type of a plain value once the Codes inside it are replaced by their values. */
export type Unwrap<T> =
  T extends Code<infer V>
    ? V
    : T extends readonly (infer E)[]
      ? Unwrap<E>[]
      : T extends object
        ? { [K in keyof T]: Unwrap<T[K]> }
        : T;

/** A plain value (possibly holding Codes) as a Code. */
export function lit<T>(x: T): Code<Unwrap<T>> {
  return make(sourceOf(x), () => valueOf(x) as Unwrap<T>);
}

/** `name(args…)`: calls `f` with the arguments' values; the source names it `name`. */
export function call<R>(name: string, f: (...args: never[]) => R, ...args: unknown[]): Code<R> {
  return make(`${name}(${args.map(sourceOf).join(", ")})`, () => f(...(args.map(valueOf) as never[])));
}

/** Code written out by hand with the value it stands for: a function, say. Keep the two side by side. */
export function raw<T>(source: string, value: T): Code<T> {
  return make(source, () => value);
}

/** A name standing for a value given later (a function's parameter): it has source, no value. */
export function sym(name: string): Code<never> {
  return make(name, () => {
    throw new Error(`${name} is a placeholder and has no value`);
  });
}

/** The source of any plain value or Code. */
export function source(x: unknown): string {
  return sourceOf(x);
}

/** The modules the names a replay uses come from. */
const modules: Readonly<Record<string, string>> = {
  simulate: "@tideward/sim",
  traffic: "@tideward/sim",
  latency: "@tideward/sim",
  failures: "@tideward/sim",
  policy: "@tideward/sim",
  scenario: "@tideward/sim",
  keys: "@tideward/sim",
  QuotaKey: "@tideward/quota-engine",
  Jitter: "@tideward/backoff",
};

/** `import { … } from "…"` lines for the known names `body` uses. */
export function importsFor(body: readonly string[]): string[] {
  const text = body.join("\n");
  // A name counts when it is called or read from (`traffic.poisson(`, `simulate(`), not when
  // it is an object's key (`failures: 0.1`).
  const used = Object.keys(modules).filter((name) => new RegExp(`(^|[^\\w.$])${name}\\s*[.(]`).test(text));
  const by = new Map<string, string[]>();
  for (const name of used) by.set(modules[name], [...(by.get(modules[name]) ?? []), name]);
  return [...by].map(([from, names]) => `import { ${names.sort().join(", ")} } from ${JSON.stringify(from)};`);
}
