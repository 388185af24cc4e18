// What the admit tests share: a field's value as a recipient reads it, and a verdict that must
// have come back at once.
import type { Field, Verdict } from "@tideward/guard";

/** The value of every field line named `name`, joined as a recipient joins them. */
export function field(headers: readonly Field[], name: string): string | null {
  const lines = headers.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
  return lines.length === 0 ? null : lines.join(", ");
}

/** `v`, which must be a verdict given at once (a synchronous store), not a promise of one. */
export const sync = (v: Verdict | Promise<Verdict>): Verdict => {
  if (v instanceof Promise) throw new Error("expected a synchronous verdict");
  return v;
};
