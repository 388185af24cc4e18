import { describe, expect, it } from "vitest";
import { every, main, stretches } from "../examples/minimal";

interface Line {
  served: number;
  failed: number;
  refused: number;
  throttle: number;
}

function parse(line: string): Line {
  const m = /served (\d+), failed (\d+), refused (\d+); throttle now (\d\.\d\d)$/.exec(line);
  if (m === null) throw new Error(`unexpected line: ${line}`);
  return { served: Number(m[1]), failed: Number(m[2]), refused: Number(m[3]), throttle: Number(m[4]) };
}

describe("example: minimal", () => {
  const lines = main();
  const [up, down, back, after] = lines.map(parse);

  it("prints four lines, one per stretch, accounting for every call offered", () => {
    expect(lines).toHaveLength(4);
    const offered = stretches.map((s) => (s.to - s.from) / every);
    expect(lines.map(parse).map((l) => l.served + l.failed + l.refused)).toEqual(offered);
    stretches.forEach((s, i) => expect(lines[i]?.startsWith(`${s.from / 1_000}–${s.to / 1_000} s`)).toBe(true));
  });

  it("leaves a healthy backend alone", () => {
    expect(up).toEqual({ served: 200, failed: 0, refused: 0, throttle: 0 });
  });

  it("throttles the backend while it is down, yet keeps probing it", () => {
    expect(down?.served).toBe(0); // whatever reached it failed
    expect(down?.refused).toBeGreaterThan(0);
    expect(down?.failed).toBeGreaterThanOrEqual(10); // at least a probe a second
    expect(down?.throttle).toBeGreaterThan(0.9);
  });

  it("lets traffic back as the backend recovers, and stops refusing within about a window", () => {
    expect(back?.failed).toBe(0);
    expect(back?.served).toBeGreaterThan(0);
    expect(back?.throttle).toBeLessThan(down?.throttle ?? 0);
    expect(after?.failed).toBe(0);
    expect(after?.refused).toBeLessThan((back?.refused ?? 0) / 10);
    expect(after?.throttle).toBe(0);
  });

  it("prints the same thing every run", () => {
    expect(main()).toEqual(lines);
  });
});
