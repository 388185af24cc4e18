// Snapshots: a shedder restored from another's snapshot (through JSON, onto a clock of another
// scale) decides as the original would have gone on deciding; what aged out stays out; a bad
// snapshot is refused whole, naming its first bad field, and changes nothing.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eachRow } from "../../../scripts/test-support/bad-input.ts";
import type { Row } from "../../../scripts/test-support/bad-input.ts";
import { Shedder, SnapshotError, isSnapshotError, shed } from "@tideward/shedder";
import type { Shed, ShedderSnapshot, Ticket } from "@tideward/shedder";

type Op =
  | { readonly kind: "allow"; readonly dt: number; readonly cpu: number }
  | { readonly kind: "pass"; readonly dt: number; readonly which: number }
  | { readonly kind: "fail"; readonly which: number }
  | { readonly kind: "capacity"; readonly dt: number; readonly cpu: number };

// Steps on a grid of 1/64 ms, which every clock below holds exactly (a float step near
// Date.now() is 1/4096 ms), so two shedders a scale apart see the same bucket boundaries and
// the same response times.
const grid = (n: number): number => n / 64;
const dt = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 40 * 64 }).map(grid) },
  { weight: 2, arbitrary: fc.integer({ min: 40, max: 3_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: -300, max: -1 }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity) },
);
const cpu = fc.oneof(fc.integer({ min: 0, max: 1_000 }), fc.constantFrom(Number.NaN, -5, 2_000));
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("allow" as const), dt, cpu }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("pass" as const), dt, which: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("fail" as const), which: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("capacity" as const), dt, cpu }) },
);
// Buckets of a whole number of 1/64 ms, so every boundary is on the grid.
const policy: fc.Arbitrary<Partial<Shed>> = fc
  .record({
    size: fc.integer({ min: 1, max: 8 }),
    width: fc.integer({ min: 1, max: 250 * 64 }).map(grid),
    cpu: fc.integer({ min: 0, max: 999 }),
    latency: fc.integer({ min: 0, max: 2_000 }),
    beta: fc.constantFrom(0, 0.5, 0.9),
    cool: fc.integer({ min: 0, max: 3_000 }),
    floor: fc.constantFrom(0, 0.1, 1),
  })
  .map(({ size, width, ...rest }) => ({ ...rest, size, window: size * width }));
// Near 0 and near Date.now(), on the grid.
const scale = fc.oneof(
  fc.integer({ min: 0, max: 1_000 * 64 }).map(grid),
  fc.integer({ min: 0, max: 2 ** 30 }).map((n) => 1_700_000_000_000 + grid(n)),
);

/** Runs `ops` on `s` from the reading `start`: every decision, capacity, and the average after each. */
function drive(s: Shedder, ops: readonly Op[], start: number, tickets: Ticket[] = []): unknown[] {
  const out: unknown[] = [];
  let now = start;
  const at = (d: number): number => (Number.isFinite(d) ? (now += d) : d);
  const pick = (which: number): Ticket | undefined => tickets.splice(which % tickets.length, 1)[0];
  for (const o of ops) {
    if (o.kind === "allow") {
      const ticket = s.allow(at(o.dt), o.cpu);
      if (ticket !== undefined) tickets.push(ticket);
      out.push(ticket !== undefined);
    } else if (o.kind === "pass") {
      const t = at(o.dt);
      if (tickets.length > 0) pick(o.which)?.pass(t);
    } else if (o.kind === "fail") {
      if (tickets.length > 0) pick(o.which)?.fail();
    } else out.push(s.capacity(at(o.dt), o.cpu));
    out.push(s.average, s.flying);
  }
  return out;
}

/** Drives `ops`, then fails every call still in flight: what a process does as it stops. */
function run(s: Shedder, ops: readonly Op[], start: number): void {
  const tickets: Ticket[] = [];
  drive(s, ops, start, tickets);
  for (const t of tickets) t.fail();
}

/** What `s` knows, through JSON as it would be stored. */
const stored = (s: Shedder): unknown => JSON.parse(JSON.stringify(s.snapshot())) as unknown;

/** Asks `n` calls at `t` with the CPU at `cpu` and passes those admitted `rt` ms later. */
function serve(s: Shedder, t: number, n: number, rt: number, cpu: number): void {
  const tickets: Ticket[] = [];
  for (let i = 0; i < n; i++) {
    const ticket = s.allow(t, cpu);
    if (ticket !== undefined) tickets.push(ticket);
  }
  for (const ticket of tickets) ticket.pass(t + rt);
}

/** Asks `n` calls at `t` with the CPU hot and passes those admitted `rt` ms later. */
const busy = (s: Shedder, t: number, n: number, rt: number): void => serve(s, t, n, rt, 950);

describe("a restored shedder", () => {
  it("decides as the original goes on deciding, restored through JSON at either scale", () => {
    fc.assert(
      fc.property(
        policy,
        fc.array(op, { maxLength: 150 }),
        fc.array(op, { maxLength: 150 }),
        scale,
        scale,
        (p, before, after, a, b) => {
          const original = new Shedder(p, a);
          run(original, before, a);
          const s = original.snapshot();
          const restored = new Shedder(p, b);
          restored.restore(JSON.parse(JSON.stringify(s)), b);
          expect(drive(restored, after, b)).toEqual(drive(original, after, s.clock));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("restored `age` ms after its snapshot, decides as the original would at that age: what aged out is gone", () => {
    const first = fc.record({ kind: fc.constant("allow" as const), cpu });
    const age = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 64 * 30_000 }).map(grid));
    fc.assert(
      fc.property(
        policy,
        fc.array(op, { maxLength: 150 }),
        first,
        fc.array(op, { maxLength: 100 }),
        age,
        scale,
        scale,
        (p, before, head, after, d, a, b) => {
          const original = new Shedder(p, a);
          run(original, before, a);
          const s = original.snapshot();
          const restored = new Shedder(p, b);
          restored.restore(stored(original), b + d, { age: d });
          expect(drive(restored, [{ ...head, dt: 0 }, ...after], b + d)).toEqual(
            drive(original, [{ ...head, dt: d }, ...after], s.clock),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("restored long after, with buckets finer than the float grid near Date.now() lays to a thousandth, ages a pass out as the original does", () => {
    // Buckets of 0.1875 ms, restored 1 046.375 ms on: laid two windows back without the part of a
    // bucket the age holds, the pass below aged out 0.125 ms early and the last call was refused.
    const p = { cpu: 0, latency: 0, beta: 0, cool: 0, floor: 0, size: 8, window: 1.5 };
    const T = 1_700_000_000_000;
    const original = new Shedder(p, T);
    const restored = new Shedder(p, T);
    restored.restore(stored(original), T + 1_046.375, { age: 1_046.375 });
    const ops: Op[] = [
      { kind: "allow", dt: 0, cpu: Number.NaN },
      { kind: "allow", dt: 0, cpu: 0 },
      { kind: "pass", dt: 40, which: 0 },
      { kind: "allow", dt: 1.4375, cpu: 1 },
    ];
    const seen = drive(original, ops, T + 1_046.375);
    expect(seen.at(-3)).toBe(true);
    expect(drive(restored, ops, T + 1_046.375)).toEqual(seen);
  });

  it("takes on what the server showed it can finish: hot, it admits as the original would, where a cold start admits all", () => {
    const p = { size: 10, window: 1_000, cpu: 800 };
    const T = 1_700_000_000_000.5;
    const a = new Shedder(p, T);
    for (let i = 0; i < 10; i++) serve(a, T + i * 100, 40, 50, 0); // 40 passes a 100 ms bucket, 50 ms each
    const saved = stored(a);
    const warm = new Shedder(p, 0);
    warm.restore(saved, 0);
    const cold = new Shedder(p, 0);
    // maxFlight 40 / 100 ms × 50 ms = 20, scaled at 950‰ by (1000 − 950) / (1000 − 800): 5.
    expect(warm.capacity(0, 950)).toBe(5);
    expect(a.capacity(T + 950, 950)).toBe(5);
    expect(cold.capacity(0, 950)).toBe(0.25); // knows nothing: maxFlight 1
    expect(warm.average).toBe(a.average);
    expect(warm.average).toBeGreaterThan(5); // the queue the server had been running
    const pile = (s: Shedder): number => {
      let admitted = 0;
      for (let i = 0; i < 30; i++) if (s.allow(0, 950) !== undefined) admitted++;
      return admitted;
    };
    expect(pile(warm)).toBe(6); // admitted while 5 or fewer were in flight
    expect(pile(cold)).toBe(30); // no average yet: nothing counts as full
  });

  it("with sameClock, ages by the time between the snapshot's clock and now, and not below 0", () => {
    const T = 1_700_000_000_000.5;
    const p = { ...shed, cool: 1_000 };
    const original = new Shedder(p, T);
    busy(original, T, 3, 50);
    const s = stored(original);
    const later = new Shedder(p, T + 6_000);
    later.restore(s, T + 6_000, { sameClock: true });
    expect(later.snapshot().buckets).toEqual([[0, 0]]); // six seconds on, the 5 s window has forgotten all
    expect(later.snapshot().hot).toBe(6_000); // the CPU read hot at T (50 ms before the snapshot): 6 s ago
    const skewed = new Shedder(p, T - 50);
    skewed.restore(s, T - 50, { sameClock: true }); // a clock 50 ms behind: taken as just made
    expect(skewed.snapshot()).toEqual({ ...original.snapshot(), clock: T - 50 });
  });

  it("stays hot for `cool` after the snapshot's last hot reading, then cools", () => {
    const p = { size: 10, window: 1_000, cpu: 500, cool: 300, floor: 0 };
    const a = new Shedder(p, 0);
    serve(a, 0, 40, 50, 0); // a queue of 40 on a cool CPU: the average of calls in flight rises
    const held = [];
    for (let i = 0; i < 5; i++) held.push(a.allow(100, 990));
    expect(held.filter((t) => t === undefined).length).toBeGreaterThan(0); // hot and full, it refused
    for (const t of held) t?.fail();
    a.allow(200, 0); // a cool reading, within `cool` of the hot one
    const s = a.snapshot();
    expect(s.refused).toBe(true);
    expect(s.hot).toBe(100);
    const r = new Shedder(p, 1_700_000_000_000);
    r.restore(JSON.parse(JSON.stringify(s)) as unknown, 1_700_000_000_000, { age: 150 });
    expect(r.snapshot().refused).toBe(true);
    r.allow(1_700_000_000_049, 0); // 299 ms after the hot reading (100 + 150 before the restore): still hot
    expect(r.snapshot().refused).toBe(true);
    r.allow(1_700_000_000_050, 0); // 300 ms after: cooled
    expect(r.snapshot().refused).toBe(false);
  });

  it("leaves calls in flight where they are: the restorer's own stay in flight and still land", () => {
    const a = new Shedder(shed, 0);
    busy(a, 0, 2, 30);
    const r = new Shedder(shed, 500);
    const mine = r.allow(500, 100);
    r.restore(stored(a), 1_000);
    expect(r.flying).toBe(1);
    mine?.pass(1_010);
    expect(r.flying).toBe(0);
    expect(r.snapshot().buckets.at(-1)).toEqual([3, 60 + 510]); // its pass lands beside the two restored
  });

  it("round-trips: a snapshot restored and taken again is the same, bar the clock", () => {
    const s0 = new Shedder(shed, 1_700_000_000_000.125);
    busy(s0, 1_700_000_000_010, 3, 12.5);
    busy(s0, 1_700_000_000_300.5, 5, 40);
    const s = s0.snapshot();
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
    const r = new Shedder();
    r.restore(stored(s0), 42.5);
    expect({ ...r.snapshot(), clock: s.clock }).toEqual(s);
  });
});

const T0 = 1_700_000_000_000.25;
const good = (): ShedderSnapshot => {
  const s = new Shedder(shed, T0);
  busy(s, T0, 3, 20);
  busy(s, T0 + 150, 2, 35);
  return s.snapshot();
};
/** A shedder in a state a restore would change: passes in its window, hot and a call in flight. */
const fresh = (): Shedder => {
  const s = new Shedder(shed, 0);
  busy(s, 0, 4, 10);
  s.allow(20, 990);
  return s;
};
const state = (s: Shedder): unknown => [s.snapshot(), s.flying, s.capacity(400, 950)];
const with_ = (change: Record<string, unknown>): unknown => ({ ...good(), ...change });
const without = (field: string): unknown => {
  const s: Record<string, unknown> = { ...good() };
  delete s[field];
  return s;
};
const refused = (name: string, snapshot: () => unknown, message: string): Row<Shedder> => [
  name,
  (s) => s.restore(snapshot(), 200),
  { throws: SnapshotError as unknown as ErrorConstructor, message },
];
const MAX = Number.MAX_SAFE_INTEGER;

describe("a bad snapshot is refused whole, naming its first bad field, and changes nothing", () => {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  eachRow<Shedder>(
    [
      refused("null", () => null, "snapshot must be an object, got null"),
      refused("a version from the future", () => with_({ version: 2, extra: 1 }), "snapshot.version must be 1, got 2"),
      refused(
        "a breaker's",
        () => with_({ kind: "breaker" }),
        'snapshot.kind must be "shedder" (what this restores), got "breaker"',
      ),
      refused("an extra field", () => with_({ flying: 3 }), 'snapshot has an unexpected field "flying"'),
      refused("no average", () => without("average"), "snapshot.average is missing"),
      refused(
        "another size",
        () => with_({ size: 10 }),
        "snapshot.size must be 50 (the buckets of this shedder), got 10",
      ),
      refused(
        "another window",
        () => with_({ window: 1_000 }),
        "snapshot.window must be 5000 (the window of this shedder, in ms), got 1000",
      ),
      refused(
        "into past a bucket",
        () => with_({ into: 100 }),
        "snapshot.into must be 0 or more and under 100 (ms, one bucket of this shedder), got 100",
      ),
      refused(
        "more buckets than the window has",
        () => with_({ buckets: Array.from({ length: 51 }, () => [0, 0]) }),
        "snapshot.buckets must hold 1 to 50 elements, got 51",
      ),
      refused(
        "a bucket of one count",
        () => with_({ buckets: [[1]] }),
        "snapshot.buckets[0] must hold 2 elements, got 1",
      ),
      refused(
        "half a pass",
        () => with_({ buckets: [[1.5, 20]] }),
        `snapshot.buckets[0][0] must be a whole number from 0 to ${MAX}, got 1.5`,
      ),
      refused(
        "a negative response time",
        () => with_({ buckets: [[1, -20]] }),
        `snapshot.buckets[0][1] must be a number from 0 to ${Number.MAX_VALUE}, got -20`,
      ),
      refused(
        "an infinite response time",
        () => with_({ buckets: [[1, Infinity]] }),
        `snapshot.buckets[0][1] must be a number from 0 to ${Number.MAX_VALUE}, got Infinity`,
      ),
      refused(
        "time with no pass",
        () => with_({ buckets: [[0, 20]] }),
        "snapshot.buckets[0][1] must be 0 when no call passed, got 20",
      ),
      refused(
        "more passes than a number counts exactly",
        () =>
          with_({
            buckets: [
              [MAX, 1],
              [1, 1],
            ],
          }),
        `snapshot.buckets[1] takes the passes past ${MAX}, more than a number counts exactly`,
      ),
      refused(
        "a negative average",
        () => with_({ average: -1 }),
        `snapshot.average must be a number from 0 to ${MAX}, got -1`,
      ),
      refused(
        "a NaN average",
        () => with_({ average: Number.NaN }),
        `snapshot.average must be a number from 0 to ${MAX}, got NaN`,
      ),
      refused(
        "a hot reading in the future",
        () => with_({ hot: -10 }),
        "snapshot.hot must be null or a finite number, 0 or more (ms), got -10",
      ),
      refused(
        "hot as text",
        () => with_({ hot: "never" }),
        'snapshot.hot must be null or a finite number, 0 or more (ms), got "never"',
      ),
      refused("refused as a number", () => with_({ refused: 1 }), "snapshot.refused must be true or false, got 1"),
      refused(
        "a refusal that was never hot",
        () => with_({ hot: null, refused: true }),
        "snapshot.refused must be false when snapshot.hot is null: a shedder refuses only once hot",
      ),
      refused(
        "a getter",
        () => {
          const s: Record<string, unknown> = { ...good() };
          delete s.average;
          return Object.defineProperty(s, "average", { get: () => 0, enumerable: true });
        },
        "snapshot.average must be a plain value, not an accessor",
      ),
      refused(
        "a revoked proxy",
        () => revoked.proxy,
        "snapshot could not be read: Cannot perform 'IsArray' on a proxy that has been revoked",
      ),
      [
        "a NaN now",
        (s) => s.restore(good(), Number.NaN),
        { throws: RangeError, message: "Shedder.restore now (ms) must be a finite number, got NaN" },
      ],
      [
        "a misspelt option",
        (s) => s.restore(good(), 200, { sameclock: true } as never),
        { throws: TypeError, message: 'Shedder.restore has no option "sameclock"; did you mean "sameClock"?' },
      ],
      [
        "a reading too coarse for a bucket",
        (s) => s.restore(good(), 1e20),
        {
          throws: RangeError,
          message:
            "Shedder.restore now (ms) 100000000000000000000 is too coarse a reading for buckets of 100 ms (window ÷ size): the bucket rounds away there",
        },
      ],
    ],
    fresh,
    state,
  );

  it("is a SnapshotError that names the field, recognised by its brand as the breaker's are", () => {
    let caught: unknown;
    try {
      fresh().restore(with_({ average: -1 }), 0);
    } catch (e) {
      caught = e;
    }
    expect(isSnapshotError(caught)).toBe(true);
    expect((caught as SnapshotError).field).toBe("snapshot.average");
  });
});
