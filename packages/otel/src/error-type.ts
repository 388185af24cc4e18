import { OTHER } from "./names";

// A type name as code writes one: what `error.type` may carry. Anything else (a message someone
// put in `name`, a name built at run time) reads `_OTHER`.
const NAME = /^[A-Za-z_$][\w$.:-]{0,99}$/;

function named(value: unknown): string | undefined {
  return typeof value === "string" && NAME.test(value) ? value : undefined;
}

/**
 * The semantic conventions' `error.type` of what an attempt or a call answered: for a thrown
 * object its type (its `name` when that says more than `"Error"`, as `TypeError`, `AbortError` or
 * `Refusal` do; else its constructor's name), for a returned failure with an HTTP `status` that
 * status (`"503"`), and `_OTHER` for anything else. Reading a user's error may throw (a getter, a
 * proxy): that reads `_OTHER` too.
 *
 * @param threw - whether the answer was thrown
 * @param answer - what was thrown or returned
 */
export function errorType(threw: boolean, answer: unknown): string {
  if (typeof answer !== "object" || answer === null) return OTHER;
  try {
    if (!threw) {
      const status = (answer as { status?: unknown }).status;
      return typeof status === "number" && Number.isInteger(status) && status >= 100 && status <= 599
        ? String(status)
        : OTHER;
    }
    const name = named((answer as { name?: unknown }).name);
    if (name !== undefined && name !== "Error") return name;
    return named((answer as { constructor?: { name?: unknown } }).constructor?.name) ?? name ?? OTHER;
  } catch {
    return OTHER;
  }
}

/**
 * The `error.type` values one series has met, at most `limit` of them: past that, a new one reads
 * `_OTHER`, so a library that names its errors at run time cannot grow the series without bound.
 */
export class ErrorTypes {
  readonly #seen = new Set<string>();
  readonly #limit: number;

  /** @param limit - the most distinct values kept @defaultValue 64 */
  constructor(limit = 64) {
    this.#limit = limit;
  }

  /** `type` when it is known or there is room for it, else `_OTHER`. */
  bound(type: string): string {
    if (this.#seen.has(type)) return type;
    if (this.#seen.size >= this.#limit) return OTHER;
    this.#seen.add(type);
    return type;
  }
}
