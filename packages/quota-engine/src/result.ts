/**
 * What a change to an engine's configuration answers: done, or a code and a sentence saying why
 * not. Nothing changes when `ok` is false.
 *
 * @example
 * const engine = new QuotaEngine();
 * engine.addLimit(perSecond("api", 10)).ok; // true
 * const again = engine.addLimit(perSecond("api", 10));
 * again.ok ? "added" : again.code; // "duplicate_limit"
 */
export type Result<Code extends string> =
  { readonly ok: true } | { readonly ok: false; readonly code: Code; readonly reason: string };

/** The one successful {@link Result}, shared. */
export const done: { readonly ok: true } = Object.freeze({ ok: true as const });

/** A failed {@link Result}. */
export function refused<Code extends string>(code: Code, reason: string): Result<Code> {
  return Object.freeze({ ok: false as const, code, reason });
}
