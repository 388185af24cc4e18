// An argument left out: "is missing", where the shared checks would say "must be a number, got
// undefined undefined" (the type and the value of undefined read alike).

/**
 * `value` itself, or a TypeError saying `what` is missing when it is undefined.
 *
 * @param value - the argument as given
 * @param what - how the message names it, such as `"RedisBucket rate (tokens per second)"`
 */
export function required(value: unknown, what: string): unknown {
  if (value === undefined) throw new TypeError(`${what} is missing`);
  return value;
}
