// A configuration error carries the path the user typed and the value as data, and a composition
// re-roots a primitive's error under its own path from that data, never from the message.
import { describe, expect, it } from "vitest";
import { isOptionError } from "@tideward/time";
import type { OptionError } from "@tideward/time";
import { check } from "@tideward/time/internal";

function caught(f: () => unknown): OptionError {
  try {
    f();
  } catch (e) {
    if (isOptionError(e)) return e;
    throw new Error(`not an OptionError: ${String(e)}`, { cause: e });
  }
  throw new Error("nothing thrown");
}

describe("every check throws an OptionError with the path and the value", () => {
  it.each([
    [
      "Bucket rate (tokens per second)",
      () => check.positive(-5, "Bucket rate (tokens per second)"),
      "Bucket.rate",
      -5,
      RangeError,
    ],
    ["guard maxWait (ms)", () => check.nonNegative(-3, "guard maxWait (ms)"), "guard.maxWait", -3, RangeError],
    [
      "admit limits[0].quota",
      () => check.integer(0.5, "admit limits[0].quota", 1),
      "admit.limits[0].quota",
      0.5,
      RangeError,
    ],
    [
      "guard run deadline (…)",
      () => check.finite("x", "guard run deadline (an instant, ms)"),
      "guard.run.deadline",
      "x",
      TypeError,
    ],
    ["policy.bucket name", () => check.fn(3, "policy.bucket name"), "policy.bucket.name", 3, TypeError],
    [
      "a misspelt option",
      () => check.options<{ burst?: number }>({ brust: 1 } as never, ["burst"], "guard bucket"),
      "guard.bucket",
      1,
      TypeError,
    ],
    ["not an object", () => check.options(5 as never, [], "Breaker", "policy"), "Breaker", 5, TypeError],
  ] as const)("%s", (_, f, path, value, type) => {
    const e = caught(f);
    expect(e.path).toBe(path);
    expect(e.value).toBe(value);
    expect(e.message.endsWith(e.problem)).toBe(true);
    expect(e).toBeInstanceOf(type);
  });

  it("keeps its class and message as before, so an error compared by them is unchanged", () => {
    expect(() => check.positive(0, "Bucket rate")).toThrow(new RangeError("Bucket rate must be above 0, got 0"));
  });
});

describe("reroot and within", () => {
  const build = (k: number) => () => check.between(k, 1, 2, "Sre k (calls a success pays for)");

  it("moves a primitive's error under the path the user typed, keeping its gloss, problem and value", () => {
    const e = caught(() => check.within("guard breaker", ["Sre", "Breaker"], build(5)));
    expect(e).toBeInstanceOf(RangeError);
    expect(e.message).toBe("guard breaker.k (calls a success pays for) must be between 1 and 2, got 5");
    expect(e.path).toBe("guard.breaker.k");
    expect(e.value).toBe(5);
    expect(isOptionError(e.cause)).toBe(true);
    expect((e.cause as OptionError).path).toBe("Sre.k");
  });

  it("names the option itself for an error about the whole object", () => {
    const e = caught(() =>
      check.within("guard breaker", ["Breaker"], () =>
        check.options<{ window?: number }>({ windw: 1 } as never, ["window"], "Breaker"),
      ),
    );
    expect(e.message).toBe('guard breaker has no option "windw"; did you mean "window"?');
    expect(e.path).toBe("guard.breaker");
  });

  it("leaves out the owner's own word for the whole argument", () => {
    const e = caught(() =>
      check.within("retry backoff", ["Backoff"], () => check.options(5 as never, [], "Backoff", "policy")),
    );
    expect(e.message).toBe("retry backoff must be an object, got number 5");
    expect(e.path).toBe("retry.backoff");
  });

  it("nests: a path re-rooted twice reads from the outermost", () => {
    const e = caught(() =>
      check.within("otel breaker", ["guard"], () => check.within("guard breaker", ["Sre"], build(0))),
    );
    expect(e.path).toBe("otel.breaker.breaker.k");
  });

  it("leaves alone an error of another owner, and anything that is not an OptionError", () => {
    const other = caught(() => check.within("guard breaker", ["Breaker"], () => check.positive(0, "Window size")));
    expect(other.path).toBe("Window.size");
    const plain = new TypeError("not ours");
    expect(() =>
      check.within("guard breaker", ["Breaker"], () => {
        throw plain;
      }),
    ).toThrow(plain);
  });

  it("answers what the build answers when nothing throws", () => {
    expect(check.within("guard breaker", ["Sre"], build(1.5))).toBe(1.5);
  });
});

describe("isOptionError", () => {
  it("reads the brand, so an error from another copy of the package is one too", () => {
    const forged = Object.assign(new RangeError("x must be above 0, got 0"), {
      isOptionError: true,
      path: "x",
      value: 0,
      problem: "must be above 0, got 0",
    });
    expect(isOptionError(forged)).toBe(true);
    expect(isOptionError(new RangeError("plain"))).toBe(false);
    expect(isOptionError(null)).toBe(false);
    expect(isOptionError("text")).toBe(false);
  });
});
