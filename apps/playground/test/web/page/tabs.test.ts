// The built page in Chromium (through playwright-core), served by the global setup (setup.ts):
// the tab row stays where it is whichever tab or scenario is chosen, wide or narrow.
import { describe, expect, it } from "vitest";
import { pageScenarios } from "../../../src/catalogue";
import { simScenarios } from "../../../src/sim-catalogue";
import { haveChromium } from "../page";
import { inChromium } from "./browser";

describe.runIf(haveChromium())("the tab row in Chromium", () => {
  const chromium = inChromium();

  it(
    "keeps the tab row where it is whichever tab or scenario is selected, wide or narrow",
    { timeout: 60_000 },
    async () => {
      // The runs each click starts are not waited for: the tab row is laid out as the hash changes.
      const page = await chromium.open("#guard");
      const tabs = await page.$$eval("nav a", (as) => as.map((a) => a.getAttribute("data-scenario") ?? ""));
      expect(tabs).toEqual(["sim", ...pageScenarios.map((s) => s.id), "tuner"]);
      for (const width of [1280, 700, 380]) {
        await page.setViewportSize({ width, height: 900 });
        const boxes: string[] = [];
        const row = async (): Promise<string> =>
          (
            await page.$$eval("nav a", (as) =>
              as.map((a) => {
                const r = a.getBoundingClientRect();
                return [r.x, r.y, r.width, r.height].map((v) => v.toFixed(1)).join(",");
              }),
            )
          ).join(" ");
        for (const tab of tabs) {
          await page.click(`nav a[data-scenario="${tab}"]`);
          await page.waitForSelector(`nav a[data-scenario="${tab}"][aria-current=page]`);
          boxes.push(await row());
        }
        // The simulator's scenarios, chosen in the picker, leave the row as it is too.
        for (const s of simScenarios.slice(0, 3)) {
          await page.click('nav a[data-scenario="sim"]');
          await page.locator("#picker").selectOption(s.id);
          await page.waitForFunction((id) => location.hash.startsWith(`#${id}`), s.id);
          boxes.push(await row());
        }
        expect(new Set(boxes).size, `at ${width} px: ${boxes.join("\n")}`).toBe(1);
        // Wide, and at a tablet's width, the tabs fit on one row; the picker is on screen at every width.
        if (width >= 700) expect(new Set(boxes[0]?.split(" ").map((b) => b.split(",")[1])).size).toBe(1);
        const picker = await page.locator("#picker").boundingBox();
        expect(picker, `at ${width} px`).not.toBeNull();
        expect((picker?.x ?? 0) + (picker?.width ?? 0), `at ${width} px`).toBeLessThanOrEqual(width);
      }
      await page.close();
      expect(chromium.errors).toEqual([]);
    },
  );
});
