/** The problem types of draft-ietf-httpapi-ratelimit-headers, as RFC 9457 `type` URIs. */
export const PROBLEM_TYPES = Object.freeze({
  quota: "https://iana.org/assignments/http-problem-types#quota-exceeded",
  capacity: "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity",
});

/** The media type of an RFC 9457 problem body in JSON. */
export const PROBLEM_JSON = "application/problem+json";

/**
 * The RFC 9457 body of a refusal: 429 "quota-exceeded" naming the violated policies, or 503
 * "temporary-reduced-capacity".
 *
 * @param status - 429 or 503
 * @param violated - the names of the policies whose quota was exceeded (429 only)
 * @param retryAfter - milliseconds until the request could be admitted, stated in the detail
 */
export function problemBody(status: number, violated: readonly string[], retryAfter: number): string {
  const wait = retryAfter > 0 && retryAfter < Infinity ? ` Retry after ${Math.ceil(retryAfter / 1_000)} s.` : "";
  if (status === 429) {
    return JSON.stringify({
      type: PROBLEM_TYPES.quota,
      title: "Request cannot be satisfied as assigned quota has been exceeded",
      status,
      detail: `The quota of ${violated.map((v) => JSON.stringify(v)).join(", ")} is exhausted.${wait}`,
      "violated-policies": violated,
    });
  }
  return JSON.stringify({
    type: PROBLEM_TYPES.capacity,
    title: "Request cannot be satisfied due to temporary server capacity constraints",
    status,
    detail: `The server is at capacity.${wait}`,
  });
}
