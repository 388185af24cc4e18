/**
 * An empty record of values by a name the user chose (a refusal reason, a stat, a knob), with no
 * prototype: a name such as `"__proto__"`, `"constructor"` or `"toString"` is a field of its own,
 * written and read like any other, never the object's prototype or an inherited method.
 * `JSON.stringify`, `structuredClone` and `postMessage` carry every field as a plain object's.
 */
export function byName<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
