// admit refuses what it cannot use, before anything is taken: bad options, naming the path and
// the value, and per-key state that would not fit in memory, refused before it is allocated.
import { describe, expect, it } from "vitest";
import { admit } from "@tideward/guard";
import { QuotaEngine } from "@tideward/quota-engine";
import { ManualClock } from "@tideward/time";
import { limits } from "./fields";
import { field, sync } from "./support/admit";

describe("admit: per-key state is bounded by bytes, refused before anything is allocated", () => {
  it("a sliding quota of 50 000 at the default maxKeys would hold 38 GiB: refused, saying so and what fits", () => {
    expect(() => admit({ limits: [{ name: "s", quota: 50_000, window: 60_000, kind: "sliding" }] })).toThrow(
      'admit limits hold up to 400952 B a key (limits[0] "s", a sliding window of quota 50000 (8 B a unit), 400280 B); at maxKeys 100000 that is 37.3 GiB, past maxBytes (256.0 MiB): lower maxKeys to 669 or less, lower the quota, or raise maxBytes',
    );
    const fits = admit({ maxKeys: 669, limits: [{ name: "s", quota: 50_000, window: 60_000, kind: "sliding" }] });
    expect(sync(fits.check("k")).allowed).toBe(true);
    expect(
      admit({ maxBytes: 2 ** 36, limits: [{ name: "s", quota: 50_000, window: 60_000, kind: "sliding" }] }).keys,
    ).toBe(0);
  });

  it("the defaults hold a bucket and a sliding window of a hundred for 100 000 keys", () => {
    expect(() =>
      admit({
        limits: [
          { name: "b", quota: 100, window: 1_000 },
          { name: "s", quota: 100, window: 60_000, kind: "sliding" },
        ],
      }),
    ).not.toThrow();
  });

  it("a period charges any cost in one step: a cost of 10^15 against a quota of 10^15 leaves none", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const a = admit({ clock: clock.now, limits: [{ name: "bytes", quota: 1e15, window: 86_400_000, kind: "period" }] });
    expect(limits(field(sync(a.check("k", 1e15)).headers, "RateLimit"))).toEqual([{ name: "bytes", r: 0, t: 86_400 }]);
    expect(sync(a.check("k")).status).toBe(429);
  });

  it("at most 16 policies, each a member of every response's two fields; a wait past 15 digits is held to the largest Integer", () => {
    const many = Array.from({ length: 17 }, (_, i) => ({ name: `l${i}`, quota: 1, window: 1_000 }));
    expect(() => admit({ limits: many })).toThrow(
      "admit limits must be at most 16 policies (every response carries a member of each), got 17",
    );
    const a = admit({ gate: 1, busyRetryAfter: 1e300 });
    sync(a.check());
    expect(field(sync(a.check()).headers, "Retry-After")).toBe("999999999999999");
  });

  it("a sliding quota above 2^24 is refused at construction, not at every request", () => {
    expect(() =>
      admit({
        maxKeys: 1,
        maxBytes: 2 ** 40,
        limits: [{ name: "s", quota: 2 ** 24 + 1, window: 1_000, kind: "sliding" }],
      }),
    ).toThrow(
      "admit limits[0].quota must be at most 16777216 for a sliding window (2^24 stamps, 8 B each), got 16777217",
    );
  });
});

describe("admit: bad options", () => {
  it.each([
    [{ gate: -1 }, RangeError, /gate/],
    [{ gate: 1.5 }, RangeError, /gate/],
    [{ limits: {} }, TypeError, /limits must be an array/],
    [{ limits: [{ name: "a", quota: 0, window: 1 }] }, RangeError, /quota/],
    [{ limits: [{ name: "a", quota: 1, window: 0 }] }, RangeError, /window/],
    [{ limits: [{ name: "a", quota: 1, window: 1, kind: "leaky" }] }, TypeError, /kind/],
    [{ limits: [{ name: "é", quota: 1, window: 1 }] }, TypeError, /printable ASCII/],
    [
      {
        limits: [
          { name: "a", quota: 1, window: 1 },
          { name: "a", quota: 2, window: 1 },
        ],
      },
      RangeError,
      /used twice/,
    ],
    [{ limits: [{ name: "a", quota: 1, windw: 1 }] }, TypeError, /did you mean "window"/],
    [{ shedder: {} }, TypeError, /needs a load/],
    [{ gat: 3 }, TypeError, /did you mean "gate"/],
    [{ maxKeys: 0 }, RangeError, /maxKeys/],
    [{ maxBytes: 0 }, RangeError, /admit maxBytes must be above 0, got 0/],
    [
      { limits: [{ name: "a", quota: 1, window: 1e-9 }] },
      RangeError,
      /admit limits\[0\]\.window \(ms\) must be at least 0.0625/,
    ],
    [
      { limits: [{ name: "a", quota: 1, window: 2 ** 45 }] },
      RangeError,
      /admit limits\[0\]\.window \(ms\) must be at most/,
    ],
    [
      { quota: { store: new QuotaEngine(), limits: [{ name: "q", capacity: 0 }], charges: () => [] } },
      RangeError,
      /^admit quota\.limits\[0\] names the limit "q", which quota\.store does not have: add it with store\.addLimit\(spec\) first$/,
    ],
    [{ busyRetryAfter: -5 }, RangeError, /busyRetryAfter/],
    [{ problem: "yes" }, TypeError, /problem/],
    [{ quota: { store: {}, limits: [], charges: () => [] } }, TypeError, /QuotaStore/],
    [{ clock: 5 }, TypeError, /clock/],
  ] as const)("%j", (options, type, message) => {
    expect(() => admit(options as never)).toThrow(type);
    expect(() => admit(options as never)).toThrow(message);
  });

  it("a cost that is not a whole number from 1 is refused at the call", () => {
    const a = admit({ limits: [{ name: "a", quota: 5, window: 1_000 }] });
    expect(() => a.check("k", 0)).toThrow(RangeError);
    expect(() => a.check("k", 1.5)).toThrow(RangeError);
    expect(a.keys).toBe(0); // nothing was charged
  });
});
