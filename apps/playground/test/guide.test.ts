import { describe, expect, it } from "vitest";
import { main } from "../examples/guide";

const lines = main();
const sections = lines
  .join("\n")
  .split("\n\n")
  .map((s) => s.split("\n"));
const section = (name: string): string[] => sections.find((s) => s[0]?.startsWith(name)) ?? [];
const after = (l: string | undefined, label: string): string => {
  const at = l?.indexOf(label) ?? -1;
  if (l === undefined || at < 0) throw new Error(`no "${label}" in ${l}`);
  return l.slice(at + label.length).trim();
};

describe("example: guide", () => {
  it("goes through every package in order, each section under its heading", () => {
    expect(sections.map((s) => s[0]?.split(":")[0])).toEqual([
      "What it is",
      "No clock, no dice",
      "The breaker",
      "The shedder",
      "A run",
      "Presets",
      "Backoff and Jitter",
      "Deadline and Window",
    ]);
  });

  it("asks each of the nine types its question once, and a fresh one answers yes", () => {
    const rows = section("What it is").slice(1);
    expect(rows.map((r) => r.trim().split(/ +/)[0])).toEqual([
      "Breaker",
      "Shedder",
      "Bucket",
      "Sliding",
      "Period",
      "Gate",
      "Backoff",
      "Deadline",
      "Window",
    ]);
    for (const r of rows.slice(0, 4)) expect(r).toMatch(/\? yes$/);
    expect(rows[4]).toMatch(/\? under$/);
    expect(rows[6]).toMatch(/again: yes, after 100 ms$/);
    expect(rows[7]).toMatch(/1500 ms of 2000 ms, 500 ms in$/);
  });

  it("decides the same way from the same rolls", () => {
    const [, call, twins] = section("No clock, no dice");
    expect(call).toMatch(/goes ahead; settled as a success: yes$/);
    expect(twins).toMatch(/decide alike: yes$/);
  });

  it("shows the breaker's formula: (10 − 5) / 11 after ten failures, nothing refused until more than a third fail", () => {
    const [, ten, third, twoFifths] = section("The breaker");
    expect(after(ten, "refusing")).toMatch(/^45\.5%/);
    expect(after(third, "refusing")).toBe("0.0%");
    expect(Number.parseFloat(after(twoFifths, "refusing"))).toBeGreaterThan(0);
  });

  it("shows the shedder refusing only when hot and full", () => {
    const [, capacity, spike, idle, both] = section("The shedder");
    expect(capacity).toMatch(/5 in flight at 300‰, 2\.5 at 950‰$/);
    expect(spike).toMatch(/nothing queued: admitted$/);
    expect(idle).toMatch(/idle CPU \(300‰\): admitted$/);
    expect(both).toMatch(/hot CPU \(950‰\): refused$/);
  });

  it("runs the burst table: 21, 20 and 40 of 40 in every burst", () => {
    const rows = section("A run").filter((l) => /^ {2}burst \d/.test(l));
    expect(rows).toHaveLength(4);
    for (const r of rows) expect(r.trim().split(/ {2,}/).slice(1)).toEqual(["21", "20", "40"]);
  });

  it("prints the presets and what changing one field does", () => {
    const [, s, sh, b, changed] = section("Presets");
    expect(s).toMatch(/k 1\.5 decaying to 1\.1, protection 5 calls, a probe after 1000 ms, 40 buckets over 10000 ms$/);
    expect(sh).toMatch(/50 buckets over 5000 ms, hot at 900‰/);
    expect(b).toMatch(/3 attempts, 100 ms multiplied by 2 to a 1000 ms cap, jitter spread 0\.2$/);
    const [atPreset, atTwo] = [...(changed ?? "").matchAll(/(\d+\.\d)% at k/g)].map((m) => Number(m[1]));
    expect(atPreset).toBeGreaterThan(0);
    expect(atTwo).toBe(0); // at k 2 a backend is left alone until half its calls fail
  });

  it("computes the backoff's ceilings, 168 ms for the second retry, and each jitter's wait within its range", () => {
    const [, ceilings, spread, more, jitters] = section("Backoff and Jitter");
    expect(after(ceilings, "1 to 5:")).toBe("100 ms, 200 ms, 400 ms, 800 ms, 1000 ms");
    expect(spread).toMatch(/: 168 ms/);
    expect(more).toMatch(/another\? yes; one that made 3\? no$/);
    const waits = Object.fromEntries(
      [...(jitters ?? "").matchAll(/(\w+(?:\(0\.2\))?) (\d+) ms/g)].map((m) => [m[1], Number(m[2])]),
    );
    expect(waits.rigid).toBe(200);
    expect(waits.full).toBe(50); // a quarter of [0, 200]
    expect(waits.equal).toBe(125); // a quarter of the way through [100, 200]
    expect(waits.decorrelated).toBe(150); // a quarter of [100, 300]
    expect(waits["spread(0.2)"]).toBe(180); // a quarter of [160, 240]
  });

  it("runs a deadline down and ages a window out", () => {
    const [, deadline, never, win] = section("Deadline and Window");
    expect(deadline).toMatch(/500 ms left, expired: no; at 2000 ms expired: yes$/);
    expect(never).toMatch(/expired after an hour: no$/);
    expect(win).toMatch(/holds 2 calls at 900 ms, 1 at 1200 ms, 0 at 1500 ms$/);
  });
});
