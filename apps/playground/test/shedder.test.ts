import { describe, expect, it } from "vitest";
import { Shedder } from "@tideward/shedder";
import { main, offered, simulate } from "../examples/shedder";

describe("example: shedder on simulated time", () => {
  const without = simulate(undefined);
  const shedding = simulate(new Shedder({}, 0));

  it("offers 150/s, then 400/s in seconds 4–9, then 150/s, to a server that does 250/s", () => {
    expect(without.map((s) => s.offered)).toEqual(Array.from({ length: 15 }, (_, s) => offered(s)));
    expect(offered(3)).toBe(150);
    expect(offered(4)).toBe(400);
    expect(offered(10)).toBe(150);
  });

  it("without a shedder, the queue grows through the overload and is still draining at the end", () => {
    expect(without.every((s) => s.refused === 0)).toBe(true);
    expect(without.slice(4).every((s) => s.served <= 250)).toBe(true);
    // 150 more calls a second than it can serve, for six seconds: ~900 queued, 3.6 s at 4 ms.
    expect(without[9].p99).toBeGreaterThan(2_000);
    expect(without[14].p99).toBeGreaterThan(3_000);
  });

  it("with the shedder, nothing is refused under capacity, the excess is refused under overload", () => {
    for (const s of [0, 1, 2, 3, 10, 11, 12, 13, 14]) expect(shedding[s].refused).toBe(0);
    for (const s of [5, 6, 7, 8, 9]) expect(shedding[s].refused).toBeGreaterThan(100);
    // Refusing costs little throughput: at least 200 of the 250 calls/s the server can do.
    for (const s of [5, 6, 7, 8, 9]) expect(shedding[s].served).toBeGreaterThanOrEqual(200);
  });

  it("with the shedder, the admitted calls' p99 stays near the unloaded figure once it is hot", () => {
    const unloaded = shedding[2].p99;
    expect(unloaded).toBeLessThanOrEqual(10);
    for (const s of [6, 7, 8, 9]) expect(shedding[s].p99).toBeLessThan(50);
    for (const s of [11, 12, 13, 14]) expect(shedding[s].p99).toBe(unloaded);
    for (const s of [6, 7, 8, 9, 10, 11, 12, 13, 14]) expect(shedding[s].p99 * 20).toBeLessThan(without[s].p99);
  });

  it("prints a header and one line a second", () => {
    expect(main()).toHaveLength(16);
  });
});
