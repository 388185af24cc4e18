import { describe, expect, it } from "vitest";
import { Shedder, shed } from "@tideward/shedder";
import type { Shed } from "@tideward/shedder";
import { burst, drive, steady } from "./drive";
import type { Outcome } from "./drive";

// A history the tests below can read by hand: one call every 10 ms for a second, each taking
// 50 ms, on a cold CPU. Buckets are 100 ms wide (50 over 5 s); each whole bucket then holds ten
// passes of 50 ms, so maxFlight = 10/100 per ms × 50 ms = 5. Five calls overlap at a time, and
// each leaves flight with four still in it, so the moving average climbs towards 4.
function warmed(policy: Partial<Shed> = {}): { shedder: Shedder; pending: Outcome["pending"] } {
  const shedder = new Shedder(policy, 0);
  const run = drive(shedder, steady(0, 1_000, 10, 0, 50), 1_000);
  expect(run).toMatchObject({ admitted: 100, refused: 0 });
  return { shedder, pending: run.pending };
}

describe("Shedder: the preset and the readings", () => {
  it("uses the shed preset: 50 buckets over 5 s, 900‰, 1 s latency, beta 0.9, 1 s cool, floor 0.1", () => {
    expect(shed).toEqual({ size: 50, window: 5_000, cpu: 900, latency: 1_000, beta: 0.9, cool: 1_000, floor: 0.1 });
    expect(Object.isFrozen(shed)).toBe(true);
    expect(new Shedder().policy).toEqual(shed);
    expect(new Shedder({ cpu: 800 }).policy).toEqual({ ...shed, cpu: 800 });
  });

  it("assumes `latency` while no finished bucket has a pass, and maxFlight is never under 1", () => {
    const s = new Shedder({}, 0);
    expect(s.capacity(0, 0)).toBe(1); // max(1, 0 passes × 1000 ms)
    expect(s.capacity(0, 950)).toBe(0.5);
    s.allow(0, 0)?.pass(40);
    expect(s.capacity(99, 0)).toBe(1); // the pass is in the current bucket: left out
    expect(s.capacity(100, 0)).toBe(1); // 1/100 per ms × 40 ms = 0.4, raised to 1
    // With passes but no finished bucket yet, `latency` is what multiplies the busiest rate.
    const slow = new Shedder({ latency: 2_000 }, 0);
    for (let i = 0; i < 30; i++) slow.allow(0, 0)?.pass(0);
    expect(slow.capacity(50, 0)).toBe(1);
    expect(slow.capacity(100, 0)).toBe(1); // finished bucket with 30 passes of 0 ms: 0.3 × 0 → 1
  });

  it("reads maxFlight as busiest passes per ms × fastest mean response time over finished buckets", () => {
    const { shedder } = warmed();
    expect(shedder.capacity(1_000, 0)).toBe(5);
    expect(shedder.capacity(1_000, 900)).toBe(5);
    expect(shedder.capacity(1_000, 950)).toBe(2.5); // factor (1000 − 950)/(1000 − 900) = 0.5
    expect(shedder.capacity(1_000, 1_000)).toBeCloseTo(0.5, 12); // factor at the floor, 0.1
    // The busiest and the fastest need not be the same bucket.
    const s = new Shedder({}, 0);
    const slow = Array.from({ length: 20 }, () => s.allow(0, 0));
    for (const t of slow) t?.pass(90); // bucket 0: 20 passes of 90 ms
    const fast = [s.allow(170, 0), s.allow(170, 0)];
    for (const t of fast) t?.pass(190); // bucket 1: 2 passes of 20 ms
    expect(s.capacity(200, 0)).toBe(4); // 20/100 per ms × 20 ms
    // Buckets age out of the 5 s window: at 5100 only bucket 1 is left, 2/100 × 20 = 0.4 → 1.
    expect(s.capacity(5_100, 0)).toBe(1);
  });

  it("updates the moving average only when a call leaves flight, with flying counted after it left", () => {
    const s = new Shedder({}, 0);
    const tickets = Array.from({ length: 10 }, () => s.allow(0, 0));
    expect([s.flying, s.average]).toEqual([10, 0]);
    tickets[0]?.fail(); // 0·0.9 + 9·0.1
    expect(s.flying).toBe(9);
    expect(s.average).toBeCloseTo(0.9, 12);
    tickets[1]?.pass(5); // 0.9·0.9 + 8·0.1
    expect(s.average).toBeCloseTo(1.61, 12);
    s.allow(6, 0); // admitting moves nothing but the count
    expect(s.flying).toBe(9);
    expect(s.average).toBeCloseTo(1.61, 12);
  });
});

describe("Shedder: what must hold", () => {
  it("a CPU spike with nothing queued refuses nothing", () => {
    const { shedder, pending } = warmed();
    drive(shedder, [], 2_000, pending); // the history drains: nothing in flight
    expect(shedder.flying).toBe(0);
    // At 1000‰ for three seconds, 3000 calls of 1 ms one after another: never two in flight.
    const run = drive(shedder, steady(2_000, 5_000, 1, 1_000, 0.5), 5_000);
    expect(run).toMatchObject({ admitted: 3_000, refused: 0 });
  });

  it("a long queue on an idle CPU refuses nothing", () => {
    const { shedder, pending } = warmed();
    // 10,000 calls piling up at one a millisecond, each taking 5 s, on a CPU at 500‰: the
    // queue is thousands deep (far over maxFlight 5), but the server is not hot.
    const run = drive(shedder, steady(1_000, 11_000, 1, 500, 5_000), 11_000, pending);
    expect(run).toMatchObject({ admitted: 10_000, refused: 0 });
    expect(shedder.flying).toBe(4_999); // those that came after 6000 ms
    expect(shedder.average).toBeGreaterThan(4_000);
  });

  it("hot and full refuses; hot and not full, or full and not hot, does not", () => {
    // At 1000 ms: four calls in flight, the average ≈ 4, maxFlight 5.
    const hotFull = warmed();
    expect(hotFull.shedder.flying).toBe(4);
    expect(hotFull.shedder.average).toBeGreaterThan(3.99);
    expect(hotFull.shedder.average).toBeLessThan(4);
    // 950‰: capacity 5 × 0.5 = 2.5 < 4 in flight and < the average of 4 → every call refused.
    expect(drive(hotFull.shedder, burst(1_000, 10, 950))).toMatchObject({ admitted: 0, refused: 10 });
    expect(hotFull.shedder.flying).toBe(4);
    // 900‰ is hot, but capacity is 5 and the average (≈4) is not over it: all admitted, even as
    // the count passes 5, because both the count and the average must be over capacity.
    const hotOnly = warmed();
    expect(drive(hotOnly.shedder, burst(1_000, 10, 900))).toMatchObject({ admitted: 10, refused: 0 });
    // 899‰ is not hot: the same full queue as the first case is admitted.
    const fullOnly = warmed();
    expect(drive(fullOnly.shedder, burst(1_000, 10, 899))).toMatchObject({ admitted: 10, refused: 0 });
  });

  it("after the CPU falls, refusals stop once `cool` has passed since the last hot reading", () => {
    // No passes yet, so maxFlight is 1; eight calls stuck in flight and an average of 1.61.
    const s = new Shedder({}, 0);
    const stuck = Array.from({ length: 10 }, () => s.allow(0, 0));
    stuck[0]?.fail();
    stuck[1]?.fail();
    expect(s.allow(10, 950)).toBeUndefined(); // hot (950 ≥ 900) and full (8 and 1.61 > 0.5)
    // The CPU falls to 500‰ for good; one call every 100 ms from 110 ms.
    const run = drive(s, steady(110, 3_010, 100, 500, Infinity));
    // Still hot while less than 1000 ms since the hot reading at 10: 110, 210, …, 910.
    expect(run.refusedAt).toEqual([110, 210, 310, 410, 510, 610, 710, 810, 910]);
    expect(run).toMatchObject({ admitted: 20, refused: 9 });
  });

  it("stays hot on a low reading only if it has refused since it last cooled", () => {
    const s = new Shedder({}, 0);
    const tickets = Array.from({ length: 10 }, () => s.allow(0, 0));
    expect(s.allow(10, 950)).toBeDefined(); // hot, 11 in flight, but the average is still 0
    tickets[0]?.fail();
    tickets[1]?.fail(); // the average becomes 1.8: full at 950 (capacity 0.5), and at 500 (1)
    expect(s.allow(20, 500)).toBeDefined(); // not hot: nothing refused since the hot reading
    expect(s.allow(30, 950)).toBeUndefined(); // hot and full
    expect(s.allow(40, 500)).toBeUndefined(); // still hot: it refused, and 30 was < 1 s ago
    expect(s.allow(1_029, 0)).toBeUndefined();
    expect(s.allow(1_030, 0)).toBeDefined(); // cooled: a whole second since the hot reading
  });

  it("forgets refusals once it has cooled, even if no low reading came in between", () => {
    // Differs from go-zero, whose "dropped recently" flag is only cleared by a low reading: a
    // refusal from an earlier hot spell would keep a later one sticky for `cool` after it.
    const s = new Shedder({}, 0);
    const tickets = Array.from({ length: 10 }, () => s.allow(0, 0));
    tickets[0]?.fail();
    expect(s.allow(10, 950)).toBeUndefined(); // refused: hot and full
    for (const t of tickets) t?.fail(); // the queue drains; the average stays over 0.5
    expect(s.flying).toBe(0);
    expect(s.average).toBeGreaterThan(1);
    expect(s.allow(5_000, 950)).toBeDefined(); // hot again, but nothing in flight: admitted
    expect(s.allow(5_100, 500)).toBeDefined(); // not hot: the refusal at 10 was before it cooled
  });

  it("never takes capacity under `floor` at 1000‰ and over", () => {
    // 20 calls every 100 ms taking 50 ms: 0.2 per ms × 50 ms = maxFlight 10; then drained.
    const admittedAt1000 = (floor: number): number => {
      const s = new Shedder({ floor }, 0);
      drive(s, steady(0, 1_000, 5, 0, 50), 2_000);
      expect(s.capacity(2_000, 0)).toBe(10);
      expect([s.flying, s.average > 2]).toEqual([0, true]);
      // Twenty calls at once that do not finish, at 1000‰ (and at 5000‰, clamped to 1000).
      return drive(s, [...burst(2_000, 10, 1_000), ...burst(2_000, 10, 5_000)]).admitted;
    };
    // Admitted while the count is not over floor × 10, i.e. counts 0…floor·10, then refused.
    expect(admittedAt1000(0.1)).toBe(2);
    expect(admittedAt1000(0.2)).toBe(3);
    expect(admittedAt1000(0)).toBe(1);
    expect(new Shedder({ floor: 0.25 }).capacity(0, 1_000)).toBe(0.25);
  });
});
