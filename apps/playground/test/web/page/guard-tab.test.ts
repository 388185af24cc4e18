// The built page in Chromium (through playwright-core), served by the global setup (setup.ts):
// the guard's tab, its table of three runs, and a moved knob's URL reproducing it.
import { describe, expect, it } from "vitest";
import { haveChromium } from "../page";
import { figures, inChromium, knobSelector, settled } from "./browser";

describe.runIf(haveChromium())("the guard's tab in Chromium", () => {
  const chromium = inChromium();

  it(
    "guard: the table under the plot compares the three runs; a tighter per-key limit and another limiter kind change what it shows, and their URL reproduces it",
    { timeout: 60_000 },
    async () => {
      const page = await chromium.open("#guard");
      const before = await figures(page);
      const table = page.locator("table", { has: page.locator('[data-figure="guarded.topShare"]') });
      expect(await table.locator("thead th").allTextContents()).toEqual([
        "",
        "guard",
        "guard without the per-key limit",
        "no policy",
      ]);
      const rows = await table.locator("tbody th").allTextContents();
      expect(rows).toContain("the heaviest key's share of admissions (%)");
      expect(rows).toContain("latency p99 (ms)");
      expect(await table.locator("caption").textContent()).toMatch(/4 workers, 16 ms a call: 250 calls\/s/);
      // At the defaults the guard refuses by each reason, and the limit holds the heaviest key below its share.
      for (const reason of ["shed", "gate", "rate"])
        expect(Number(before[`guarded.${reason}`]), reason).toBeGreaterThan(0);
      expect(Number(before["guarded.topShare"])).toBeLessThan(Number(before["unlimited.topShare"]));
      expect(Number(before["guarded.p99"])).toBeLessThan(Number(before["unprotected.p99"]));
      // Per-key quota 20 → 10, from the keyboard.
      const quota = page.locator(knobSelector("limit.quota"));
      await quota.focus();
      for (let i = 0; i < 10; i++) await quota.press("ArrowLeft");
      await settled(page);
      const tighter = await figures(page);
      expect(Number(tighter["guarded.rate"])).toBeGreaterThan(Number(before["guarded.rate"]));
      expect(Number(tighter["guarded.topShare"])).toBeLessThan(Number(before["guarded.topShare"]));
      // The runs without the limit are untouched by it.
      expect(tighter["unlimited.admitted"]).toBe(before["unlimited.admitted"]);
      expect(tighter["unprotected.p99"]).toBe(before["unprotected.p99"]);
      await page.locator(knobSelector("limit.kind")).selectOption("sliding");
      await settled(page);
      const sliding = await figures(page);
      expect(sliding["guarded.rate"]).not.toBe(tighter["guarded.rate"]);
      const hash = await page.evaluate(() => location.hash);
      expect(hash.split("?")[0]).toBe("#guard");
      expect(Object.fromEntries(new URLSearchParams(hash.split("?")[1]))).toEqual({
        "limit.quota": "10",
        "limit.kind": "sliding",
      });
      await page.close();
      const again = await chromium.open(hash);
      expect(await figures(again)).toEqual(sliding);
      expect(await again.locator(knobSelector("limit.kind")).inputValue()).toBe("sliding");
      await again.close();
      expect(chromium.errors).toEqual([]);
    },
  );
});
