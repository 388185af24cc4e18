import { describe, expect, it } from "vitest";
import { RetryError, isRetryError } from "@tideward/backoff";

describe("RetryError", () => {
  it("keeps the last error as cause and says how many attempts were made and why", () => {
    const last = new RangeError("too slow");
    const e = new RetryError(1, "budget", last);
    expect(e.message).toBe("Gave up after 1 attempt: the retry budget is spent; last error: RangeError: too slow");
    expect([e.name, e.attempts, e.reason, e.cause]).toEqual(["RetryError", 1, "budget", last]);
    expect(e).toBeInstanceOf(Error);
  });

  it("describes a cause that is not an Error", () => {
    expect(new RetryError(4, "exhausted", "503").message).toBe(
      "Gave up after 4 attempts: the policy allows no more attempts; last error: 503",
    );
    expect(new RetryError(2, "deadline", new Error("")).message).toMatch(/last error: Error$/);
    const hostile = {
      toString: () => {
        throw new Error("no");
      },
    };
    expect(new RetryError(2, "exhausted", hostile).message).toMatch(/last error: object$/);
  });

  it("is recognised by its brand, so a copy from another bundle passes and a look-alike error does not", () => {
    expect(isRetryError(new RetryError(3, "exhausted", null))).toBe(true);
    const foreign = Object.assign(new Error("x"), { isRetryError: true });
    expect(isRetryError(foreign)).toBe(true);
    expect([new Error("x"), null, undefined, "RetryError", { isRetryError: "yes" }].map(isRetryError)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
