import { check } from "@tideward/time/internal";
import { isSfString, sfInteger, sfString } from "./structured";

/**
 * The revision of draft-ietf-httpapi-ratelimit-headers whose fields {@link admit} writes: one
 * place in the code, read by the tests. Since draft 08 the two fields are Lists of Items, a
 * String naming the policy with Integer parameters: `RateLimit-Policy: "burst";q=100;w=60` and
 * `RateLimit: "burst";r=50;t=30`.
 */
export const RATELIMIT_DRAFT = "draft-ietf-httpapi-ratelimit-headers-11";

/** The field that advertises a quota policy. */
export const POLICY_FIELD = "RateLimit-Policy";
/** The field that carries the current service limit of a policy. */
export const LIMIT_FIELD = "RateLimit";

/** What one policy says about itself and about the request just decided. */
export interface PolicyState {
  /** The policy's name, a String in the fields (printable ASCII). */
  readonly name: string;
  /** `q`: quota units the policy allocates per window, a whole number. */
  readonly quota: number;
  /** `w`: the window, in milliseconds (written as whole seconds, rounded up, at least one). */
  readonly window: number;
  /** `r`: units left after this request, a whole number. */
  readonly remaining: number;
  /** `t`: milliseconds until more quota is available (written as whole seconds, rounded up). */
  readonly reset: number;
}

/**
 * Whole seconds, rounded up, from milliseconds (never under 0). Never short: a client that waits
 * what the field says must find the quota there, so a wait a hair over a whole second (as float
 * arithmetic can leave one) is the next second.
 */
export function seconds(ms: number): number {
  return ms > 0 ? Math.ceil(ms / 1_000) : 0;
}

/** One `RateLimit-Policy` list member: `"name";q=100;w=60`. */
export function policyMember(p: Pick<PolicyState, "name" | "quota" | "window">): string {
  const w = seconds(p.window);
  return `${sfString(p.name)};q=${sfInteger(p.quota)};w=${sfInteger(w < 1 ? 1 : w)}`;
}

/** A `RateLimit-Policy` line: one member per policy, as RFC 8941 joins a list. */
export function policyLine(ps: readonly Pick<PolicyState, "name" | "quota" | "window">[]): string {
  return ps.map(policyMember).join(", ");
}

/** One `RateLimit` list member: `"name";r=50;t=30`. */
export function limitMember(p: PolicyState): string {
  return `${sfString(p.name)};r=${sfInteger(p.remaining)};t=${sfInteger(seconds(p.reset))}`;
}

/** The longest policy name, in characters: a name is sent in every field of every response. */
export const MAX_POLICY_NAME = 256;

/**
 * Checks a policy name once, at construction: a name that can be sent is one a structured-field
 * String can hold (printable ASCII, `"` and `\` escaped as the writer escapes them), so every
 * field written with it parses, whatever else it holds (`;`, `,`, `=`).
 */
export function policyName(name: unknown, what: string): string {
  if (typeof name !== "string" || name.length === 0 || !isSfString(name)) {
    throw new TypeError(
      `${what} must be a non-empty string of printable ASCII (it is sent as a structured-field String), got ${typeof name === "string" ? JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name) : check.describe(name)}`,
    );
  }
  if (name.length > MAX_POLICY_NAME)
    throw new RangeError(`${what} must be at most ${MAX_POLICY_NAME} characters, got ${name.length}`);
  return name;
}
