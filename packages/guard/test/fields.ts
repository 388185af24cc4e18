// Reads the RateLimit fields back with a real RFC 8941 parser (structured-headers), checking
// the shape draft-ietf-httpapi-ratelimit-headers gives them: a List of Items, each a String
// naming the policy, with Integer parameters.
import { parseList } from "structured-headers";
import { expect } from "vitest";

export interface PolicyItem {
  readonly name: string;
  readonly q: number;
  readonly w: number;
}

export interface LimitItem {
  readonly name: string;
  readonly r: number;
  readonly t: number;
}

function items(value: string | null): { name: string; params: Map<string, unknown> }[] {
  expect(value).not.toBeNull();
  return parseList(value as string).map(([item, params]) => {
    expect(typeof item).toBe("string"); // a String, not a Token
    return { name: item as string, params: params as Map<string, unknown> };
  });
}

function integer(params: Map<string, unknown>, key: string): number {
  const v = params.get(key);
  expect(Number.isInteger(v), `${key} is an Integer`).toBe(true);
  expect(v as number).toBeGreaterThanOrEqual(0);
  return v as number;
}

/** Every member of a `RateLimit-Policy` field value (lines joined with ", "). */
export function policies(value: string | null): PolicyItem[] {
  return items(value).map(({ name, params }) => ({ name, q: integer(params, "q"), w: integer(params, "w") }));
}

/** Every member of a `RateLimit` field value. */
export function limits(value: string | null): LimitItem[] {
  return items(value).map(({ name, params }) => ({ name, r: integer(params, "r"), t: integer(params, "t") }));
}

/** A `Retry-After` that is delay-seconds: a whole number of seconds. */
export function retryAfter(value: string | null): number {
  expect(value).toMatch(/^\d+$/);
  return Number(value);
}
