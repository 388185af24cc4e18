// A sliding window's ring (8 bytes a call of its quota) is made only once the run has charged
// it to maxBytes: checking the arguments of policy.sliding or of a --limit builds no ring.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type * as Limiters from "@tideward/limiters";
import { policy, simulate, traffic } from "@tideward/sim";
import { parseLimit, replayLog } from "@tideward/sim/cli";

// The quota of every Sliding made, by anyone.
const made = vi.hoisted(() => [] as number[]);
vi.mock("@tideward/limiters", async (importOriginal) => {
  const real = await importOriginal<typeof Limiters>();
  class Sliding extends real.Sliding {
    constructor(quota: number, window: number) {
      made.push(quota);
      super(quota, window);
    }
  }
  return { ...real, Sliding };
});

const BIG = 2 ** 24;
const text = readFileSync(join(import.meta.dirname, "fixtures", "access.log"), "utf8");

describe("a sliding window's ring", () => {
  beforeEach(() => void (made.length = 0));

  it("is not built to check policy.sliding's or parseLimit's arguments", () => {
    policy.sliding(BIG, 1_000);
    policy.sliding(BIG, 1_000, { perKey: true });
    parseLimit(`${BIG}/s per key`);
    expect(made.filter((q) => q > 1)).toEqual([]);
  });

  it("is refused by a run's maxBytes before it is built, naming maxBytes", () => {
    const run = () =>
      simulate({
        duration: 1_000,
        traffic: traffic.constant({ rate: 10 }),
        policies: [policy.sliding(BIG, 1_000)],
        maxBytes: 50_000_000,
      });
    expect(run).toThrow(
      /^policy sliding needs about 128 MiB beside the .+ already set aside, past simulate maxBytes \(47\.7 MiB\)$/,
    );
    expect(() => replayLog(text, { limit: parseLimit(`${BIG}/s`), maxBytes: 50_000_000 })).toThrow(
      /^policy limit needs about 128 MiB beside .+, past replayLog maxBytes \(47\.7 MiB\)$/,
    );
    expect(made).not.toContain(BIG);
  });

  it("still refuses a quota or window the limiter would, in its words", () => {
    expect(() => policy.sliding(BIG + 1, 1_000)).toThrow(
      new RangeError("Sliding quota must be at most 16777216 (2^24 stamps, 128 MiB), got 16777217"),
    );
    expect(() => policy.sliding(1.5, 1_000)).toThrow(RangeError);
    expect(() => policy.sliding(0, 1_000)).toThrow(/^Sliding quota /);
    expect(() => policy.sliding("10" as unknown as number, 1_000)).toThrow(TypeError);
    expect(() => policy.sliding({ quota: 10 } as unknown as number, 1_000)).toThrow(/^Sliding takes the quota first/);
    expect(() => policy.sliding(10, 0)).toThrow(/^Sliding window \(ms\) /);
    expect(() => parseLimit(`${BIG + 1}/s`)).toThrow(/^a sliding window's count must be at most 16777216/);
    // A quota that is no number is refused by the constructor before any ring.
    expect(made.filter((q) => typeof q === "number" && q > 1)).toEqual([]);
  });
});
