// Priority in the shedder: when hot and full, the least important calls are refused first, each
// level being full at its room of the capacity; a shedder given no priorities, and level 0 of one
// given them, decide exactly as before.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { criticality } from "@tideward/concurrency";
import type { Priorities } from "@tideward/concurrency";
import { Shedder } from "@tideward/shedder";
import type { Levels, Ticket } from "@tideward/shedder";
import { burst, drive, steady } from "./drive";

const T0 = 1_700_000_000_000.5;

// A second of calls every 10 ms, each taking 50 ms, on a cold CPU: maxFlight 5, then four in
// flight with an average of about 4 (as in shedder.test.ts).
function warmed(base: number, priorities?: Levels): Shedder {
  const s = new Shedder({}, base, priorities);
  const run = drive(s, steady(base, base + 1_000, 10, 0, 50), base + 1_000);
  expect([run.admitted, s.flying]).toEqual([100, 4]);
  return s;
}

describe("Shedder with priorities", () => {
  it("judges each level full at its room of the capacity", () => {
    const s = warmed(0, criticality);
    expect(s.capacity(1_000, 900, "critical_plus")).toBe(5);
    expect(s.capacity(1_000, 900, "critical")).toBeCloseTo(4.5, 12);
    expect(s.capacity(1_000, 900, "sheddable_plus")).toBeCloseTo(4, 12);
    expect(s.capacity(1_000, 900, "sheddable")).toBeCloseTo(3, 12);
    expect(s.capacity(1_000, 950, "sheddable")).toBeCloseTo(1.5, 12); // 5 × 0.5 × 0.6
    expect(s.capacity(1_000, 900)).toBeCloseTo(4.5, 12); // no priority: critical, the fallback
  });

  it("refuses the least important first as a hot server's CPU climbs", () => {
    // Four in flight, an average just under 4, maxFlight 5: at 900‰ the capacity is 5, and each
    // 10‰ more takes a tenth off it; level p is full once room(p) × capacity is under the queue.
    for (const base of [0, T0]) {
      const admitted = (cpu: number) =>
        criticality.names.map((name) => warmed(base, criticality).allow(base + 1_000, cpu, name) !== undefined);
      expect(admitted(899)).toEqual([true, true, true, true]); // not hot
      expect(admitted(900)).toEqual([true, true, true, false]); // 5 4.5 4 3
      expect(admitted(910)).toEqual([true, true, false, false]); // 4.5 4.05 3.6 2.7
      expect(admitted(920)).toEqual([true, false, false, false]); // 4 3.6 3.2 2.4
      expect(admitted(930)).toEqual([false, false, false, false]); // 3.5 …
    }
  });

  it("refuses an unknown priority as the least important", () => {
    const s = warmed(0, criticality);
    expect(s.allow(1_000, 900, "vip")).toBeUndefined();
    expect(s.allow(1_000, 900, 99)).toBeUndefined();
    expect(s.allow(1_000, 900, 0)).toBeDefined();
  });

  it("refuses nothing on a cool CPU, whatever the priority", () => {
    const s = warmed(0, criticality);
    expect(
      drive(
        s,
        burst(1_000, 30, 500).map((a) => a),
        1_000,
      ),
    ).toMatchObject({ refused: 0 });
    expect(s.allow(1_000, 500, "sheddable")).toBeDefined();
  });

  it("refuses priorities without level() and room()", () => {
    for (const odd of [{ levels: 2 }, null, 4, { level: () => 0 }])
      expect(() => new Shedder({}, 0, odd as unknown as Priorities)).toThrow(
        new TypeError(
          `Shedder priorities must have level() and room() methods (a Priorities of @tideward/concurrency), got ${odd === null ? "null" : typeof odd === "number" ? "4" : "[object Object]"}`,
        ),
      );
  });

  it("judges at the whole capacity when hand-made levels throw or answer what is not a share", () => {
    const broken: Levels[] = [
      {
        level: () => {
          throw new Error("no level");
        },
        room: () => 0.5,
      },
      {
        level: () => 3,
        room: () => {
          throw new Error("no room");
        },
      },
      { level: () => 3, room: () => Number.NaN },
      { level: () => 3, room: () => -1 },
      { level: () => 3, room: () => "0.5" as unknown as number },
    ];
    for (const levels of broken) {
      const s = warmed(0, levels);
      expect(s.capacity(1_000, 900, "sheddable")).toBe(5);
      // The whole capacity: 4 in flight is not over it, as for a shedder without levels.
      expect(s.allow(1_000, 900, "sheddable")).toBeDefined();
    }
    // A share that is fine is used as it is.
    const half = warmed(0, { level: () => 1, room: () => 0.5 });
    expect(half.capacity(1_000, 900, "x")).toBe(2.5);
  });
});

describe("without priorities nothing changes", () => {
  // Calls arriving at random instants with random CPU readings and durations.
  interface Call {
    readonly gap: number;
    readonly cpu: number;
    readonly takes: number;
    readonly fails: boolean;
  }
  const traffic: fc.Arbitrary<Call[]> = fc.array(
    fc.record({
      gap: fc.double({ min: 0, max: 40, noNaN: true }),
      cpu: fc.integer({ min: 700, max: 1_000 }),
      takes: fc.double({ min: 1, max: 400, noNaN: true }),
      fails: fc.boolean(),
    }),
    { maxLength: 400 },
  );

  function decisions(s: Shedder, base: number, calls: readonly Call[], priority?: number | string): boolean[] {
    const out: boolean[] = [];
    const pending: { end: number; ticket: Ticket; fails: boolean }[] = [];
    let now = base;
    for (const c of calls) {
      now += c.gap;
      pending.sort((a, b) => a.end - b.end);
      while (pending.length > 0 && pending[0].end <= now) {
        const p = pending.shift() as (typeof pending)[number];
        if (p.fails) p.ticket.fail();
        else p.ticket.pass(p.end);
      }
      const t = priority === undefined ? s.allow(now, c.cpu) : s.allow(now, c.cpu, priority);
      out.push(t !== undefined);
      if (t !== undefined) pending.push({ end: now + c.takes, ticket: t, fails: c.fails });
    }
    return out;
  }

  for (const base of [0, T0])
    it(`level 0 of a shedder with priorities, and any priority given to one without, decide as a plain shedder (clock near ${base === 0 ? "0" : "Date.now()"})`, () => {
      fc.assert(
        fc.property(traffic, (calls) => {
          const plain = decisions(new Shedder({}, base), base, calls);
          expect(decisions(new Shedder({}, base, criticality), base, calls, "critical_plus")).toEqual(plain);
          expect(decisions(new Shedder({}, base, criticality), base, calls, 0)).toEqual(plain);
          expect(decisions(new Shedder({}, base), base, calls, "sheddable")).toEqual(plain);
          expect(decisions(new Shedder({}, base), base, calls, 3)).toEqual(plain);
        }),
        { numRuns: 100 },
      );
    });
});
