import { describe, expect, it } from "vitest";
import { LoadSampler } from "@tideward/shedder/node";
import type { SamplerSystem } from "@tideward/shedder/node";

/** A process whose clock, CPU time, event loop and timers move only when the test says so. */
function fakeSystem(files: Record<string, string> = {}) {
  const state = {
    now: 0,
    cpuMicros: 0,
    active: 0,
    idle: 0,
    unrefs: 0,
    cleared: [] as unknown[],
    ticks: [] as (() => void)[],
  };
  const system: SamplerSystem = {
    now: () => state.now,
    cpuUsage: () => ({ user: state.cpuMicros * 0.75, system: state.cpuMicros * 0.25 }),
    eventLoopUtilization: () => ({ active: state.active, idle: state.idle }),
    readText: (path) => files[path],
    availableParallelism: () => 2,
    setInterval: (tick, ms) => {
      state.ticks.push(tick);
      return { ms, unref: () => void state.unrefs++ };
    },
    clearInterval: (handle) => void state.cleared.push(handle),
  };
  /** `ms` of wall time go by, with `cpu` ms of CPU time used and the loop busy `busy` ms of them. */
  const pass = (ms: number, cpu: number, busy: number): void => {
    state.now += ms;
    state.cpuMicros += cpu * 1_000;
    state.active += busy;
    state.idle += ms - busy;
  };
  const tick = (): void => state.ticks.forEach((t) => t());
  return { system, state, pass, tick };
}

describe("LoadSampler on a fake process", () => {
  it("reads CPU time over wall time and cores, and the event loop's busy share, in thousandths", () => {
    const f = fakeSystem();
    const s = new LoadSampler({ system: f.system, beta: 0.5 });
    expect([s.cores, s.interval, s.beta]).toEqual([2, 250, 0.5]);
    expect([s.cpu, s.loop, s.load]).toEqual([0, 0, 0]);
    f.pass(250, 250, 100); // one core's worth of two for 250 ms; the loop busy 100 of 250 ms
    f.tick();
    // Folded into the average from 0, as every reading is: 0·0.5 + 500·0.5; 0·0.5 + 400·0.5.
    expect([s.cpu, s.loop, s.load]).toEqual([250, 200, 250]);
    f.pass(250, 0, 250); // idle CPU (waiting on the event loop?) but a loop busy throughout
    f.tick();
    expect([s.cpu, s.loop, s.load]).toEqual([125, 600, 600]); // 250·0.5 + 0·0.5; 200·0.5 + 1000·0.5
  });

  it("weighs the old value beta^(elapsed / interval), so a late tick counts for its whole gap", () => {
    const f = fakeSystem();
    const s = new LoadSampler({ system: f.system, beta: 0.5, interval: 100 });
    f.pass(100, 0, 0);
    f.tick(); // an idle first reading: still 0
    f.pass(300, 600, 300); // three intervals late, both cores and the loop full throughout
    f.tick();
    expect([s.cpu, s.loop]).toEqual([875, 875]); // 0·0.125 + 1000·0.875
  });

  it("shares the CPU over the cgroup v2 quota when one is set, and clamps to [0, 1000]", () => {
    const f = fakeSystem({ "/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/cpu.max": "50000 100000\n" });
    const s = new LoadSampler({ system: f.system, beta: 0 });
    expect(s.cores).toBe(0.5);
    f.pass(100, 50, 100); // half a core for 100 ms: the whole quota
    f.tick();
    expect(s.cpu).toBe(1_000);
    f.pass(100, 150, 100); // three threads busier than the quota allows (throttled later)
    f.tick();
    expect(s.cpu).toBe(1_000);
    // Counters that run backwards (a broken injection) read as 0, not as negative load.
    f.state.cpuMicros -= 1e6;
    f.state.active -= 50;
    f.pass(100, 0, 0);
    f.tick();
    expect([s.cpu, s.loop]).toEqual([0, 0]);
  });

  it("never reports over 1000, even where smoothing two readings of 1000 rounds up", () => {
    const f = fakeSystem();
    const s = new LoadSampler({ system: f.system, beta: 0.3, interval: 50, cores: 1 });
    f.pass(10_000, 10_000, 10_000); // two hundred intervals at full load: the old 0 weighs 0.3^200
    f.tick();
    expect(s.load).toBe(1_000);
    // A step whose reading is 1000 (clamped) and whose weight w makes 1000·w + 1000·(1 − w)
    // round to just over 1000, computed as the sampler computes them.
    const over = (d: number) => {
      const wall = 10_000 + d - 10_000;
      const used = 10_000_000 + d * 1_000 - 10_000_000;
      const w = 0.3 ** (wall / 50);
      return used / wall >= 1_000 && 1_000 * w + 1_000 * (1 - w) > 1_000;
    };
    const step = Array.from({ length: 5_000 }, (_, k) => 40 + k / 100).find(over) as number;
    expect(step).toBeDefined();
    f.pass(step, step, step);
    f.tick();
    expect([s.cpu, s.loop]).toEqual([1_000, 1_000]);
  });

  it("takes the cores it is told, and changes nothing when no time has gone by", () => {
    const f = fakeSystem();
    const s = new LoadSampler({ system: f.system, cores: 4, beta: 0 });
    f.pass(100, 200, 50);
    s.sample();
    expect([s.cpu, s.loop]).toEqual([500, 500]);
    f.state.cpuMicros += 1e6;
    s.sample(); // the clock has not moved: no reading
    expect([s.cpu, s.loop]).toEqual([500, 500]);
  });

  it("runs on an unref'd timer that stop() clears, once", () => {
    const f = fakeSystem();
    const s = new LoadSampler({ system: f.system, interval: 40 });
    expect(f.state.unrefs).toBe(1);
    expect(s.running).toBe(true);
    s.stop();
    s.stop();
    expect(s.running).toBe(false);
    expect(f.state.cleared).toEqual([{ ms: 40, unref: expect.any(Function) as unknown }]);
  });

  it.each([
    [
      { interval: 0 },
      /^LoadSampler interval \(ms\) must be between 1 and 2147483647 \(what Node's timers honour\), got 0$/,
    ],
    [
      { interval: 2 ** 31 },
      /^LoadSampler interval \(ms\) must be between 1 and 2147483647 \(what Node's timers honour\), got 2147483648$/,
    ],
    [
      { interval: 0.5 },
      /^LoadSampler interval \(ms\) must be between 1 and 2147483647 \(what Node's timers honour\), got 0.5$/,
    ],
    [{ interval: Number.NaN }, /^LoadSampler interval \(ms\) must be a finite number, got NaN$/],
    [{ beta: 1 }, /^LoadSampler beta must be 0 or more and under 1, got 1$/],
    [{ beta: -0.5 }, /^LoadSampler beta must be 0 or more and under 1, got -0.5$/],
    [{ cores: 0 }, /^LoadSampler cores must be above 0, got 0$/],
  ])("rejects %o", (options, message) => {
    const f = fakeSystem();
    expect(() => new LoadSampler({ ...options, system: f.system })).toThrow(RangeError);
    expect(() => new LoadSampler({ ...options, system: f.system })).toThrow(message);
    expect(f.state.ticks).toEqual([]); // no timer left behind
  });
});

describe("LoadSampler given system calls that misbehave", () => {
  it.each([
    ["now", () => Number.NaN, "LoadSampler system.now() must answer milliseconds, got number NaN"],
    ["now", () => "12", 'LoadSampler system.now() must answer milliseconds, got string "12"'],
    [
      "cpuUsage",
      () => undefined,
      "LoadSampler system.cpuUsage() must answer { user, system } in microseconds, got undefined",
    ],
    [
      "cpuUsage",
      () => ({ user: 1, system: "2" }),
      'LoadSampler system.cpuUsage() must answer { user, system } in microseconds, got { user: 1, system: "2" }',
    ],
    [
      "eventLoopUtilization",
      () => ({ active: Infinity, idle: 0 }),
      "LoadSampler system.eventLoopUtilization() must answer { active, idle } in milliseconds, got { active: Infinity, idle: 0 }",
    ],
    [
      "readText",
      () => 42,
      "LoadSampler system.readText must answer text or undefined, got number 42 for /proc/self/cgroup",
    ],
  ])(
    "refuses a %s that answers garbage, naming the call and the value, with no timer started",
    (name, answer, message) => {
      const f = fakeSystem();
      expect(() => new LoadSampler({ system: { ...f.system, [name]: answer } })).toThrow(new TypeError(message));
      expect(f.state.ticks).toEqual([]);
    },
  );

  it("refuses an availableParallelism of no cores, naming the call", () => {
    const f = fakeSystem();
    expect(() => new LoadSampler({ system: { ...f.system, availableParallelism: () => 0 } })).toThrow(
      new RangeError("LoadSampler system.availableParallelism() must be above 0, got 0"),
    );
  });

  it("lets a call that throws pass through a constructor, with no timer started", () => {
    const f = fakeSystem();
    const boom = new Error("no cgroup for you");
    const readText = () => {
      throw boom;
    };
    expect(() => new LoadSampler({ system: { ...f.system, readText } })).toThrow(boom);
    expect(f.state.ticks).toEqual([]);
  });

  it("on its timer, keeps the last readings when a call throws or answers garbage, says so once, and recovers", async () => {
    const f = fakeSystem();
    let broken: "throws" | "garbage" | undefined;
    const cpuUsage = () => {
      if (broken === "throws") throw new Error("cpuUsage is gone");
      if (broken === "garbage") return { user: Number.NaN, system: 0 };
      return f.system.cpuUsage();
    };
    const warnings: Error[] = [];
    const onWarning = (w: Error) => void warnings.push(w);
    process.on("warning", onWarning);
    try {
      const s = new LoadSampler({ system: { ...f.system, cpuUsage }, beta: 0.5 });
      f.pass(250, 250, 100);
      f.tick();
      expect([s.cpu, s.loop, s.failure]).toEqual([250, 200, undefined]);
      for (const how of ["throws", "garbage", "throws"] as const) {
        broken = how;
        f.pass(250, 500, 250);
        expect(() => f.tick()).not.toThrow(); // a throw here would be an uncaught exception
        expect([s.cpu, s.loop]).toEqual([250, 200]); // the last values, kept
        expect(s.failure).toBeInstanceOf(Error);
      }
      expect(String(s.failure)).toBe("Error: cpuUsage is gone");
      // A reading of one's own throws as it is.
      expect(() => s.sample()).toThrow("cpuUsage is gone");
      broken = undefined;
      f.pass(250, 500, 250);
      f.tick();
      expect(s.failure).toBeUndefined();
      // The gap since the last good reading counts whole: 1000 ms with both cores and the loop
      // full, weighed 1 − 0.5^(1000 / 250) against the last values.
      expect([s.cpu, s.loop]).toEqual([250 * 0.0625 + 1000 * 0.9375, 200 * 0.0625 + 1000 * 0.9375]);
      expect(s.running).toBe(true);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      expect(warnings.map((w) => [w.name, w.message])).toEqual([
        ["LoadSamplerWarning", "a reading failed; the load keeps its last value: Error: cpuUsage is gone"],
      ]);
      s.stop();
    } finally {
      process.off("warning", onWarning);
    }
  });
});

describe("LoadSampler on this process", () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const inRange = (s: LoadSampler) => [s.cpu, s.loop, s.load].every((x) => x >= 0 && x <= 1_000);

  it("reports [0, 1000] and rises under a bounded busy loop", async () => {
    // beta 0: each reading is the latest stretch alone; the timer is too slow to interfere.
    const s = new LoadSampler({ beta: 0, interval: 60_000 });
    try {
      // The quietest of three idle stretches: on a loaded machine one may not be quiet.
      const idle = { cpu: Infinity, loop: Infinity };
      for (let i = 0; i < 3; i++) {
        await sleep(100);
        s.sample();
        expect(inRange(s)).toBe(true);
        idle.cpu = Math.min(idle.cpu, s.cpu);
        idle.loop = Math.min(idle.loop, s.loop);
      }
      const until = performance.now() + 300;
      let spins = 0;
      while (performance.now() < until) spins++;
      s.sample();
      expect(spins).toBeGreaterThan(0);
      expect(inRange(s)).toBe(true);
      // The event loop was busy the whole 300 ms, however little CPU a loaded host gave it.
      expect(s.loop).toBeGreaterThan(900);
      expect(s.loop).toBeGreaterThan(idle.loop);
      expect(s.cpu).toBeGreaterThan(idle.cpu);
      expect(s.load).toBe(Math.max(s.cpu, s.loop));
    } finally {
      s.stop();
    }
  });

  it("samples on its own timer", async () => {
    let reads = 0;
    const s = new LoadSampler({ interval: 20, system: { now: () => (reads++, performance.now()) } });
    try {
      // The construction's read and at least two ticks; a loaded machine may delay the timer, so
      // wait for them (up to ten seconds) instead of asserting a count after a fixed sleep.
      for (let waited = 0; reads <= 2 && waited < 10_000; waited += 20) await sleep(20);
      expect(reads).toBeGreaterThan(2);
      expect(inRange(s)).toBe(true);
    } finally {
      s.stop();
    }
  });
});
