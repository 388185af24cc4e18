// The built page in Chromium (through playwright-core), served by the global setup (setup.ts):
// a long run: its progress, its cancel, and the run after it.
import { describe, expect, it } from "vitest";
import { haveChromium } from "../page";
import { figures, inChromium, settled } from "./browser";

describe.runIf(haveChromium())("a long run in Chromium", () => {
  const chromium = inChromium();

  it(
    "a long run shows how far it has got and offers a cancel after a moment; cancelling stops it mid-run, says so, keeps the last figures, and the next run runs",
    { timeout: 90_000 },
    async () => {
      const page = await chromium.open("#breaker-outage?rate=10&duration=30&spreadSeeds=0");
      const before = await figures(page);
      expect(await page.locator("#long-run").isVisible()).toBe(false);
      // Five thousand calls a second for three minutes through six breakers: seconds of work.
      await page.evaluate(() => (location.hash = "#breaker-outage?rate=5000&spreadSeeds=0"));
      await page.waitForSelector("#cancel", { state: "visible", timeout: 10_000 });
      expect(await page.evaluate(() => document.body.dataset.busy)).toBe("true");
      // How far it has got, as the simulator tells the worker: a share of the calls it will offer.
      await page.waitForFunction(() => Number(document.querySelector<HTMLElement>("#run-progress")?.dataset.done) > 0);
      const progress = await page.locator("#run-progress").evaluate((p) => (p as HTMLProgressElement).value);
      expect(progress).toBeGreaterThan(0);
      expect(progress).toBeLessThan(1);
      await page.click("#cancel");
      expect(await page.locator("#status").textContent()).toMatch(
        /^Cancelled after \d+\.\d s: this run of Breaker under an outage did not finish, and the figures below are the last run's\./,
      );
      expect(await page.evaluate(() => document.body.dataset.busy)).toBe("false");
      expect(await page.locator("#long-run").isVisible()).toBe(false);
      expect(await figures(page)).toEqual(before);
      // The page's next run is answered: a fresh worker took the cancelled one's place.
      await page.evaluate(() => (location.hash = "#breaker-outage?rate=20&duration=30&spreadSeeds=0"));
      await settled(page);
      expect(await page.locator("#status").textContent()).toMatch(/^Simulated 6 runs of 30 s of traffic each/);
      expect(await figures(page)).not.toEqual(before);
      await page.close();
      expect(chromium.errors).toEqual([]);
    },
  );
});
