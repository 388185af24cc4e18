// Bad input as a table: each construction is refused with its exact error and leaves the preset
// as it was; on the hot path each odd call answers exactly what its documented equivalent does
// and leaves the limiter or queue in the same state, never with a place minted.
import { describe, expect, it } from "vitest";
import { eachRefusal, eachTwin } from "../../../scripts/test-support/bad-input.ts";
import type { Refusal, Twin } from "../../../scripts/test-support/bad-input.ts";
import {
  AimdLimit,
  FixedLimit,
  Gradient2Limit,
  Limiter,
  Priorities,
  Queue,
  VegasLimit,
  aimd,
  codel,
  criticality,
  gradient2,
  vegas,
} from "@tideward/concurrency";
import type { Token } from "@tideward/concurrency";

const not = <T>(x: unknown): T => x as T;
const T0 = 1_700_000_000_000.75;

describe("construction refuses what it cannot use", () => {
  const algorithms: Refusal[] = [
    [
      "an AIMD policy given as text",
      () => new AimdLimit(not("x")),
      TypeError,
      'AimdLimit policy must be an object, got string "x"',
    ],
    [
      "a misspelt AIMD field",
      () => new AimdLimit(not({ backof: 0.8 })),
      TypeError,
      'AimdLimit has no option "backof"; did you mean "backoff"?',
    ],
    [
      "an AIMD backoff of 1",
      () => new AimdLimit({ backoff: 1 }),
      RangeError,
      "Aimd backoff must be 0.5 or more and under 1, got 1",
    ],
    [
      "an AIMD backoff of 0.4",
      () => new AimdLimit({ backoff: 0.4 }),
      RangeError,
      "Aimd backoff must be 0.5 or more and under 1, got 0.4",
    ],
    [
      "an AIMD timeout of 0",
      () => new AimdLimit({ timeout: 0 }),
      RangeError,
      "Aimd timeout (ms) must be above 0, got 0",
    ],
    ["a fractional min", () => new AimdLimit({ min: 1.5 }), RangeError, "Aimd min must be a whole number, got 1.5"],
    ["a min of 0", () => new AimdLimit({ min: 0 }), RangeError, "Aimd min must be 1 or more, got 0"],
    ["a max under min", () => new AimdLimit({ max: 10 }), RangeError, "Aimd max must be at least min (20), got 10"],
    [
      "a max past 2^24",
      () => new AimdLimit({ max: 2 ** 24 + 1 }),
      RangeError,
      "Aimd max must be at most 16777216 (2^24), got 16777217",
    ],
    [
      "an initial under min",
      () => new AimdLimit({ initial: 5 }),
      RangeError,
      "Aimd initial must be from min (20) to max (200), got 5",
    ],
    [
      "a NaN initial",
      () => new AimdLimit({ initial: Number.NaN }),
      RangeError,
      "Aimd initial must be a finite number, got NaN",
    ],
    ["a null field", () => new AimdLimit(not({ max: null })), TypeError, "Aimd max must be a number, got object null"],
    [
      "a Vegas smoothing of 0",
      () => new VegasLimit({ smoothing: 0 }),
      RangeError,
      "Vegas smoothing must be above 0 and at most 1, got 0",
    ],
    [
      "a Vegas alpha under threshold",
      () => new VegasLimit({ alpha: 0.5 }),
      RangeError,
      "Vegas alpha must be at least threshold (1), got 0.5",
    ],
    [
      "a Vegas beta under alpha",
      () => new VegasLimit({ beta: 2 }),
      RangeError,
      "Vegas beta must be at least alpha (3), got 2",
    ],
    [
      "a negative threshold",
      () => new VegasLimit({ threshold: -1 }),
      RangeError,
      "Vegas threshold must be 0 or more, got -1",
    ],
    [
      "a Vegas probe of 0.5",
      () => new VegasLimit({ probe: 0.5 }),
      RangeError,
      "Vegas probe must be from 1 to 16777216, got 0.5",
    ],
    [
      "a Vegas seed of 1",
      () => new VegasLimit({ seed: 1 }),
      RangeError,
      "Vegas seed must be 0 or more and under 1, got 1",
    ],
    [
      "a misspelt Vegas field",
      () => new VegasLimit(not({ probeMultiplier: 3 })),
      TypeError,
      'VegasLimit has no option "probeMultiplier"; its options are "initial", "min", "max", "smoothing", "alpha", "beta", "threshold", "probe", "seed", "drain", "grow"',
    ],
    [
      "a Vegas drain under 0",
      () => new VegasLimit({ drain: -0.1 }),
      RangeError,
      "Vegas drain must be from 0 to 1, got -0.1",
    ],
    ["a Vegas grow over 1", () => new VegasLimit({ grow: 1.5 }), RangeError, "Vegas grow must be from 0 to 1, got 1.5"],
    [
      "a NaN Vegas grow",
      () => new VegasLimit({ grow: Number.NaN }),
      RangeError,
      "Vegas grow must be a finite number, got NaN",
    ],
    [
      "a Gradient2 tolerance under 1",
      () => new Gradient2Limit({ tolerance: 0.9 }),
      RangeError,
      "Gradient2 tolerance must be at least 1, got 0.9",
    ],
    [
      "a Gradient2 long of 0",
      () => new Gradient2Limit({ long: 0 }),
      RangeError,
      "Gradient2 long (samples) must be 1 or more, got 0",
    ],
    [
      "a negative Gradient2 queue",
      () => new Gradient2Limit({ queue: -4 }),
      RangeError,
      "Gradient2 queue must be 0 or more, got -4",
    ],
    [
      "a Gradient2 smoothing over 1",
      () => new Gradient2Limit({ smoothing: 1.5 }),
      RangeError,
      "Gradient2 smoothing must be above 0 and at most 1, got 1.5",
    ],
    ["a fixed limit of 0", () => new FixedLimit(0), RangeError, "FixedLimit limit must be 1 or more, got 0"],
    [
      "a fixed limit given as text",
      () => new FixedLimit(not("8")),
      TypeError,
      'FixedLimit limit must be a number, got string "8"',
    ],
  ];
  describe("the algorithms", () => eachRefusal(algorithms, { aimd, vegas, gradient2 }));

  const priorities: Refusal[] = [
    [
      "options given as an array",
      () => new Priorities(not([2])),
      TypeError,
      "Priorities options must be an object, got an array",
    ],
    [
      "a misspelt option",
      () => new Priorities(not({ level: 2 })),
      TypeError,
      'Priorities has no option "level"; did you mean "levels"?',
    ],
    ["no levels", () => new Priorities({ levels: 0 }), RangeError, "Priorities levels must be 1 or more, got 0"],
    [
      "too many levels",
      () => new Priorities({ levels: 1_025 }),
      RangeError,
      "Priorities levels must be at most 1024, got 1025",
    ],
    [
      "a million names",
      () => new Priorities({ levels: new Array<string>(1_000_000) }),
      RangeError,
      "Priorities levels must name from 1 to 1024 levels, got 1000000 names",
    ],
    [
      "no names",
      () => new Priorities({ levels: [] }),
      RangeError,
      "Priorities levels must name from 1 to 1024 levels, got 0 names",
    ],
    [
      "a name that is not text",
      () => new Priorities({ levels: not(["a", 2]) }),
      TypeError,
      "Priorities levels[1] must be a name (text), got 2",
    ],
    [
      "an empty name",
      () => new Priorities({ levels: ["a", ""] }),
      RangeError,
      'Priorities levels[1] must be a name of 1 to 64 characters, got ""',
    ],
    [
      "a name twice",
      () => new Priorities({ levels: ["a", "b", "a"] }),
      RangeError,
      'Priorities levels[2] names "a" twice',
    ],
    [
      "levels as text",
      () => new Priorities({ levels: not("a,b") }),
      TypeError,
      'Priorities levels must be a number of levels or an array of their names, got "a,b"',
    ],
    [
      "shares of the wrong length",
      () => new Priorities({ levels: 3, shares: [0.5, 0.5] }),
      RangeError,
      "Priorities shares must have one share for each of the 3 levels, got 2",
    ],
    [
      "a negative share",
      () => new Priorities({ levels: 2, shares: [-0.1, 0.5] }),
      RangeError,
      "Priorities shares[0] must be between 0 and 1, got -0.1",
    ],
    [
      "a NaN share",
      () => new Priorities({ levels: 2, shares: [Number.NaN, 0.5] }),
      RangeError,
      "Priorities shares[0] must be a finite number, got NaN",
    ],
    [
      "shares past 1",
      () => new Priorities({ levels: 2, shares: [0.6, 0.5] }),
      RangeError,
      "Priorities shares must add up to 1 at most, got 0.6 + 0.5 = 1.1",
    ],
    [
      "shares not an array",
      () => new Priorities({ levels: 2, shares: not(0.5) }),
      TypeError,
      "Priorities shares must be an array of numbers, got 0.5",
    ],
    [
      "a fallback past the levels",
      () => new Priorities({ levels: 2, fallback: 2 }),
      RangeError,
      "Priorities fallback must be a level from 0 to 1, got 2",
    ],
    [
      "a fallback it does not name",
      () => new Priorities({ levels: ["a", "b"], fallback: "c" }),
      RangeError,
      'Priorities fallback must name a level ("a", "b"), got "c"',
    ],
    [
      "a fallback that is neither",
      () => new Priorities({ fallback: not(null) }),
      TypeError,
      "Priorities fallback must be a level's number or name, got null",
    ],
  ];
  describe("priorities", () => eachRefusal(priorities, criticality));

  const limiters: Refusal[] = [
    [
      "an algorithm that is not one",
      () => new Limiter(not({ limit: 5, sample() {} })),
      TypeError,
      "Limiter algorithm must be an AimdLimit, VegasLimit, Gradient2Limit or FixedLimit, got [object Object]",
    ],
    [
      "priorities that are not a Priorities",
      () => new Limiter(new FixedLimit(2), not({ priorities: { levels: 2 } })),
      TypeError,
      "Limiter priorities must be a Priorities, got [object Object]",
    ],
    [
      "a NaN now",
      () => new Limiter(new FixedLimit(2), { now: Number.NaN }),
      RangeError,
      "Limiter now (ms) must be a finite number, got NaN",
    ],
    [
      "a misspelt option",
      () => new Limiter(new FixedLimit(2), not({ priority: criticality })),
      TypeError,
      'Limiter has no option "priority"; did you mean "priorities"?',
    ],
    [
      "a queue target over its interval",
      () => new Queue({ target: 200 }),
      RangeError,
      "CoDel target (ms) must be at most the interval (100), got 200",
    ],
    ["a queue capacity of 0", () => new Queue({ capacity: 0 }), RangeError, "CoDel capacity must be 1 or more, got 0"],
    [
      "a queue capacity past 2^24",
      () => new Queue({ capacity: 2 ** 24 + 1 }),
      RangeError,
      "CoDel capacity must be at most 16777216 waiters (2^24), got 16777217",
    ],
    [
      "a queue lifo that is not a boolean",
      () => new Queue(not({ lifo: "yes" })),
      TypeError,
      'CoDel lifo must be true or false, got "yes"',
    ],
    [
      "a misspelt queue field",
      () => new Queue(not({ intervall: 50 })),
      TypeError,
      'Queue has no option "intervall"; did you mean "interval"?',
    ],
    [
      "a queue with priorities of the wrong kind",
      () => new Queue({}, not({ priorities: 4 })),
      TypeError,
      "Queue priorities must be a Priorities, got 4",
    ],
  ];
  describe("limiters and queues", () => eachRefusal(limiters, codel));
});

describe("the hot path treats odd input as documented", () => {
  /** A limiter at Date.now() scale with 6 of its 10 places taken (critical), two of them already through a sample. */
  function fresh(): { limiter: Limiter; held: Token[] } {
    const limiter = new Limiter(new AimdLimit({ initial: 10, min: 1 }), { priorities: criticality, now: T0 });
    const held: Token[] = [];
    for (let i = 0; i < 6; i++) {
      const t = limiter.acquire(T0 + 10, "critical");
      if (t.ok) held.push(t);
    }
    return { limiter, held };
  }
  const state = ({ limiter }: { limiter: Limiter }) => [
    limiter.flying,
    limiter.limit,
    limiter.snapshot(),
    ...criticality.names.map((n) => limiter.flyingAt(n)),
  ];
  const answer = (t: ReturnType<Limiter["acquire"]>) => (t.ok ? [t.level, t.inflight, t.start] : t);
  const twins: Twin<{ limiter: Limiter; held: Token[] }>[] = [
    [
      "a priority past the levels is the least important",
      (s) => answer(s.limiter.acquire(T0 + 20, 9)),
      (s) => answer(s.limiter.acquire(T0 + 20, "sheddable")),
    ],
    [
      "a negative priority",
      (s) => answer(s.limiter.acquire(T0 + 20, -1)),
      (s) => answer(s.limiter.acquire(T0 + 20, 3)),
    ],
    [
      "a NaN priority",
      (s) => answer(s.limiter.acquire(T0 + 20, Number.NaN)),
      (s) => answer(s.limiter.acquire(T0 + 20, 3)),
    ],
    [
      "a fractional priority",
      (s) => answer(s.limiter.acquire(T0 + 20, 0.5)),
      (s) => answer(s.limiter.acquire(T0 + 20, 3)),
    ],
    [
      "a priority that is an object",
      (s) => answer(s.limiter.acquire(T0 + 20, not({}))),
      (s) => answer(s.limiter.acquire(T0 + 20, 3)),
    ],
    [
      "an unknown name",
      (s) => answer(s.limiter.acquire(T0 + 20, "CRITICAL")),
      (s) => answer(s.limiter.acquire(T0 + 20, 3)),
    ],
    [
      "a NaN clock stands still",
      (s) => answer(s.limiter.acquire(Number.NaN)),
      (s) => answer(s.limiter.acquire(T0 + 10)),
    ],
    [
      "a clock that steps back stands still",
      (s) => answer(s.limiter.acquire(T0 - 5_000)),
      (s) => answer(s.limiter.acquire(T0 + 10)),
    ],
    [
      "a clock given as text stands still",
      (s) => answer(s.limiter.acquire(not("soon"))),
      (s) => answer(s.limiter.acquire(T0 + 10)),
    ],
    [
      "an infinite clock stands still",
      (s) => answer(s.limiter.acquire(Infinity)),
      (s) => answer(s.limiter.acquire(T0 + 10)),
    ],
    ["a pass before the start frees the place, no sample", (s) => s.held[0].pass(T0), (s) => s.held[0].ignore()],
    ["a pass at NaN", (s) => s.held[0].pass(Number.NaN), (s) => s.held[0].ignore()],
    ["a pass at Infinity", (s) => s.held[0].pass(Infinity), (s) => s.held[0].ignore()],
    [
      "a second pass is ignored",
      (s) => (s.held[0].pass(T0 + 30), s.held[0].pass(T0 + 40)),
      (s) => s.held[0].pass(T0 + 30),
    ],
    [
      "a drop after an ignore is ignored",
      (s) => (s.held[0].ignore(), s.held[0].drop(T0 + 30)),
      (s) => s.held[0].ignore(),
    ],
    [
      "a drop before the start is a drop with no round trip",
      (s) => s.held[0].drop(T0 - 1),
      (s) => s.held[0].drop(Number.NaN),
    ],
  ];
  eachTwin(twins, fresh, state);

  it("a priority out of range never takes a place a known level would not", () => {
    for (const odd of [4, 1e9, -0.5, Number.NaN, "x", Symbol("p")]) {
      const { limiter } = fresh();
      expect(limiter.acquire(T0 + 20, odd as number).ok).toBe(false); // sheddable: 6 of 10 already
      expect(limiter.flying).toBe(6);
    }
  });

  it("queue: a clock that steps back, or is not a number, stands still", () => {
    const q = new Queue<number>({}, { now: T0 });
    const a = q.push(T0 + 10, 1);
    const b = q.push(T0 - 1_000, 2);
    const c = q.push(Number.NaN, 3, not({}));
    expect([a?.since, b?.since, c?.since, c?.level]).toEqual([T0 + 10, T0 + 10, T0 + 10, 0]);
    expect(q.dropped(not("later"))).toBeUndefined();
    expect(q.due(Number.NaN)).toBe(T0 + 110);
  });
});

describe("a million distinct priorities cannot grow memory", () => {
  it("every one resolves to a level, and a refusal is one shared object", () => {
    const limiter = new Limiter(new FixedLimit(4), { priorities: criticality });
    for (let i = 0; i < 4; i++) limiter.acquire(0, 0);
    const full = limiter.acquire(0, 3);
    const before = process.memoryUsage().heapUsed;
    let same = 0;
    for (let i = 0; i < 1_000_000; i++) if (limiter.acquire(i, 17 + i) === full) same++;
    const grown = process.memoryUsage().heapUsed - before;
    expect(same).toBe(1_000_000);
    expect([limiter.flying, criticality.count]).toEqual([4, 4]);
    // Nothing is keyed by priority: a map of a million would be tens of megabytes.
    expect(grown).toBeLessThan(8 * 2 ** 20);
  });

  it("a queue holds one lane per level, whatever the priorities its waiters give", () => {
    const q = new Queue<number>({ capacity: 10 }, { priorities: criticality });
    for (let i = 0; i < 1_000_000; i++) {
      const w = q.push(0, i, `tenant-${i % 1000}`);
      if (w !== undefined) q.remove(w);
    }
    expect(q.length).toBe(0);
    expect(q.push(0, 1, "nope")?.level).toBe(3);
  });
});
