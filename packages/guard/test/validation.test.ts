import { describe, expect, it } from "vitest";
import { guard, guardFetch } from "@tideward/guard";
import { Bucket } from "@tideward/limiters";

const fn = () => 1;

describe("bad options fail at construction, naming the field and the value", () => {
  it.each([
    [{ deadlne: 5 }, TypeError, /no option "deadlne"; did you mean "deadline"\?/],
    [{ breakr: {} }, TypeError, /did you mean "breaker"/],
    [{ deadline: -1 }, RangeError, /deadline \(ms\) must be 0 or more, got -1/],
    [{ deadline: Number.NaN }, RangeError, /deadline/],
    [{ timeout: "1s" }, TypeError, /timeout \(ms\) must be a number/],
    [{ maxWait: -3 }, RangeError, /maxWait/],
    [{ bucket: { rate: 0 } }, RangeError, /Bucket rate/],
    [{ bucket: { rat: 5 } }, TypeError, /did you mean "rate"/],
    [{ bucket: 5 }, TypeError, /bucket must be a Bucket/],
    [{ breaker: { k: 0.5 } }, RangeError, /k must be at least floor/],
    [{ breaker: "sre" }, TypeError, /breaker must be a Breaker/],
    [{ gate: 0 }, RangeError, /gate/],
    [{ shedder: {} }, TypeError, /needs a load/],
    [{ retry: { attempts: 0 } }, RangeError, /attempts/],
    [{ retry: 3 }, TypeError, /retry must be a Backoff/],
    [{ budget: { ratio: -1 } }, RangeError, /ratio/],
    [{ hedge: { delay: -1 } }, RangeError, /hedge delay/],
    [{ hedge: { delay: 10, max: 0 } }, RangeError, /hedge max/],
    [{ hedge: { dealy: 10 } }, TypeError, /did you mean "delay"/],
    [{ isFailure: true }, TypeError, /isFailure must be a function/],
    [{ overMaxRetryAfter: "wait" }, TypeError, /"cap" or "give-up"/],
    [{ maxRetryAfter: -1 }, RangeError, /maxRetryAfter/],
    [{ clock: () => Number.NaN }, RangeError, /clock\(\)/],
    [{ timers: { set: 1 } }, TypeError, /timers/],
  ] as const)("%j", (options, type, message) => {
    expect(() => guard(fn, options as never)).toThrow(type);
    expect(() => guard(fn, options as never)).toThrow(message);
  });

  it("the function and the options argument themselves", () => {
    expect(() => guard(5 as never)).toThrow(/guard expects a function/);
    expect(() => guard(fn, null as never)).toThrow(/guard options must be an object, got null/);
    expect(() => guard(fn, [] as never)).toThrow(TypeError);
  });

  it("guardFetch: its own options, and the judging ones it owns", () => {
    expect(() => guardFetch(fetch, { isFailure: () => true } as never)).toThrow(/guardFetch has no option "isFailure"/);
    expect(() => guardFetch(fetch, { methds: ["GET"] } as never)).toThrow(/did you mean "methods"/);
    expect(() => guardFetch(fetch, { retryStatuses: [99] })).toThrow(RangeError);
    expect(() => guardFetch(fetch, { retryStatuses: "429" as never })).toThrow(TypeError);
    expect(() => guardFetch("fetch" as never)).toThrow(/guardFetch expects a fetch function/);
  });

  it("options are read once: a getter cannot change a value between the check and the use", async () => {
    let reads = 0;
    const options = {
      get bucket() {
        reads++;
        return reads === 1 ? new Bucket(1, { burst: 1 }) : { rate: -1 };
      },
    };
    const g = guard(fn, options as never);
    expect(reads).toBe(1);
    expect(await g()).toBe(1);
  });
});
