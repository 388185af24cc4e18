import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Shedder } from "@tideward/shedder";
import type { Shed, Ticket } from "@tideward/shedder";

// A naive model written from the wording: it keeps every pass it ever saw in a list and
// regroups them into buckets on every question, with no window, ring or scratch state.
class Model {
  readonly passes: { at: number; rt: number }[] = [];
  flying = 0;
  average = 0;
  #now: number;
  #hotAt = -Infinity;
  #refused = false;
  constructor(
    readonly p: Shed,
    readonly origin: number,
  ) {
    this.#now = origin;
  }
  tick(now: number): number {
    if (now > this.#now && Number.isFinite(now)) this.#now = now;
    return this.#now;
  }
  /** The bucket a reading falls in: the last whose start, origin + i·width in doubles, is at or before it. */
  bucket(t: number): number {
    const width = this.p.window / this.p.size;
    const start = (i: number): number => this.origin + i * width;
    let i = Math.max(0, Math.floor((t - this.origin) / width) - 3);
    while (i > 0 && start(i) > t) i--;
    while (start(i + 1) <= t) i++;
    return i;
  }
  maxFlight(t: number): number {
    const width = this.p.window / this.p.size;
    const current = this.bucket(t);
    const buckets = new Map<number, { n: number; sum: number }>();
    for (const { at, rt } of this.passes) {
      const b = this.bucket(at);
      if (b < current - this.p.size + 1 || b > current - 1) continue; // outside, or unfinished
      const x = buckets.get(b) ?? { n: 0, sum: 0 };
      x.n++;
      x.sum += rt;
      buckets.set(b, x);
    }
    let busiest = 0;
    let fastest = Infinity;
    for (const { n, sum } of buckets.values()) {
      busiest = Math.max(busiest, n);
      fastest = Math.min(fastest, sum / n);
    }
    return Math.max(1, (busiest / width) * (fastest === Infinity ? this.p.latency : fastest));
  }
  allow(now: number, cpu: number): number | undefined {
    const t = this.tick(now);
    const load = Number.isNaN(cpu) ? 0 : Math.min(1000, Math.max(0, cpu));
    if (this.#refused && t - this.#hotAt >= this.p.cool) this.#refused = false;
    if (load >= this.p.cpu) this.#hotAt = t;
    const hot = load >= this.p.cpu || this.#refused;
    const factor = Math.min(1, Math.max(this.p.floor, (1000 - load) / (1000 - this.p.cpu)));
    const cap = this.maxFlight(t) * factor;
    if (hot && this.flying > cap && this.average > cap) {
      this.#refused = true;
      return undefined;
    }
    this.flying++;
    return t;
  }
  leave(): void {
    this.flying--;
    this.average = this.average * this.p.beta + this.flying * (1 - this.p.beta);
  }
  pass(start: number, now: number): void {
    const t = this.tick(now);
    this.passes.push({ at: t, rt: Math.max(0, t - start) });
    this.leave();
  }
}

type Op =
  { kind: "allow"; dt: number; cpu: number } | { kind: "pass"; dt: number; k: number } | { kind: "fail"; k: number };

const policy = fc.record({
  size: fc.integer({ min: 1, max: 12 }),
  window: fc.oneof(fc.integer({ min: 10, max: 3_000 }), fc.double({ min: 10, max: 3_000, noNaN: true })),
  cpu: fc.integer({ min: 0, max: 999 }),
  latency: fc.integer({ min: 0, max: 500 }),
  beta: fc.double({ min: 0, max: 0.99, noNaN: true }),
  cool: fc.integer({ min: 0, max: 1_500 }),
  floor: fc.double({ min: 0, max: 1, noNaN: true }),
});
// Mostly forward in time, sometimes back or nonsensical; CPU mostly around the threshold.
const dt = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 120 }) },
  { weight: 2, arbitrary: fc.double({ min: 0, max: 120, noNaN: true }) },
  { weight: 1, arbitrary: fc.integer({ min: -200, max: -1 }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity, 5_000) },
);
const cpu = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 1_000 }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, -1, 1_500, Infinity) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("allow" as const), dt, cpu }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("pass" as const), dt, k: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("fail" as const), k: fc.nat() }) },
);
// Long runs ("max" size): queues must build up and drain for the shedder to turn hot and full.
// Well under a second each on an idle machine; the margin is for a loaded one (five seconds have
// been seen with eight engineers' suites running at once).
const SLOW = 20_000;

const scales = [
  ["near 0", fc.integer({ min: -1_000, max: 1_000 })],
  ["near performance.now()", fc.double({ min: 1e3, max: 1e7, noNaN: true })],
  ["near Date.now()", fc.double({ min: 1e12, max: 1e13, noNaN: true })],
] as const;

/** Runs `ops` on a fresh shedder; a pass or fail picks any ticket ever issued, settled or not. */
function run(p: Shed, start: number, ops: readonly Op[], model?: Model) {
  const s = new Shedder(p, start);
  const tickets: Ticket[] = [];
  const settled: boolean[] = [];
  const trace: (number | string)[] = [];
  let now = start;
  let clock = start;
  let least = 0;
  // Counted, then asserted once: an expect per operation would slow a property run tenfold.
  const mismatches: string[] = [];
  for (const o of ops) {
    // A NaN or infinite step is handed over as it is; the clock itself goes on from where it was.
    if (o.kind !== "fail") now = Number.isFinite(o.dt) ? (clock += o.dt) : o.dt;
    if (o.kind === "allow") {
      const t = s.allow(now, o.cpu);
      trace.push(t === undefined ? "refused" : t.start);
      if (model && model.allow(now, o.cpu) !== t?.start)
        mismatches.push(`allow #${trace.length}: model ${String(t?.start)}`);
      if (t !== undefined) {
        tickets.push(t);
        settled.push(false);
      }
    } else if (tickets.length > 0) {
      const i = o.k % tickets.length;
      if (o.kind === "pass") tickets[i].pass(now);
      else tickets[i].fail();
      if (model && !settled[i]) {
        if (o.kind === "pass") model.pass(tickets[i].start, now);
        else model.leave();
      }
      settled[i] = true;
    }
    least = Math.min(least, s.flying);
    if (model && (s.flying !== model.flying || s.average !== model.average))
      mismatches.push(`after op ${trace.length}: ${s.flying}/${s.average} vs ${model.flying}/${model.average}`);
  }
  return { shedder: s, trace, least, open: settled.filter((x) => !x).length, mismatches };
}

describe.each(scales)("Shedder properties on a clock %s", (_, origin) => {
  const scenario = fc.record({ policy, start: origin, ops: fc.array(op, { maxLength: 300, size: "max" }) });

  it(
    "agrees with a naive model of the issue's rules on every decision, count and average",
    () => {
      fc.assert(
        fc.property(scenario, ({ policy: p, start, ops }) => {
          expect(run(p, start, ops, new Model(p, start)).mismatches).toEqual([]);
        }),
        { numRuns: 150 },
      );
    },
    SLOW,
  );

  it(
    "decides as a pure function of its inputs: the same calls give the same answers",
    () => {
      fc.assert(
        fc.property(scenario, ({ policy: p, start, ops }) => {
          const a = run(p, start, ops);
          const b = run(p, start, ops);
          expect(b.trace).toEqual(a.trace);
          expect([b.shedder.flying, b.shedder.average]).toEqual([a.shedder.flying, a.shedder.average]);
        }),
      );
    },
    SLOW,
  );

  it(
    "never counts flying below zero, however tickets are settled, and counts exactly the open ones",
    () => {
      fc.assert(
        fc.property(scenario, ({ policy: p, start, ops }) => {
          const r = run(p, start, ops);
          expect(r.least).toBe(0);
          expect(r.shedder.flying).toBe(r.open);
        }),
      );
    },
    SLOW,
  );

  it(
    "never takes capacity under floor × maxFlight, and takes more as the CPU falls",
    () => {
      fc.assert(
        fc.property(
          scenario,
          fc.double({ min: -10, max: 2_000, noNaN: true }),
          fc.double({ min: -10, max: 2_000, noNaN: true }),
          ({ policy: p, start, ops }, c1, c2) => {
            const { shedder: s } = run(p, start, ops);
            const at = start + 10_000;
            const maxFlight = s.capacity(at, 0);
            expect(maxFlight).toBeGreaterThanOrEqual(1);
            const [lo, hi] = c1 <= c2 ? [c1, c2] : [c2, c1];
            expect(s.capacity(at, lo)).toBeGreaterThanOrEqual(s.capacity(at, hi));
            expect(s.capacity(at, hi)).toBeGreaterThanOrEqual(maxFlight * p.floor);
            expect(s.capacity(at, 1_000)).toBeCloseTo(maxFlight * p.floor, 9);
          },
        ),
      );
    },
    SLOW,
  );
});
