// The built page in Chromium (through playwright-core), served by the global setup (setup.ts):
// the charts' legends under the cursor and off it, and a count of one in the singular.
import { describe, expect, it } from "vitest";
import { scenario as simScenario } from "@tideward/sim";
import { haveChromium } from "../page";
import { inChromium, knobSelector, legends } from "./browser";

describe.runIf(haveChromium())("legends in Chromium", () => {
  const chromium = inChromium();

  it("legends name the series until the cursor is on a plot, then show the values under it, then the names again", async () => {
    const page = await chromium.open("#breaker-outage");
    const legend = page.locator('[data-chart-figure="goodput"] .u-legend');
    const over = page.locator('[data-chart-figure="goodput"] .u-over');
    const box = await over.boundingBox();
    if (box === null) throw new Error("no plot area");
    // Halfway along the run: the x value is a time near its middle, each series a number of calls/s.
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const hovered = await legend
      .locator(".u-series")
      .evaluateAll((rows) =>
        rows.map((r) => [
          r.querySelector(".u-label")?.textContent ?? "",
          r.querySelector(".u-value")?.textContent ?? "",
        ]),
      );
    const result = simScenario("breaker-outage")?.run({}, { start: 0 });
    const labels = result?.runs.map((r) => r.label) ?? [];
    expect(labels.length).toBeGreaterThan(1);
    expect(hovered.map(([label]) => label)).toEqual(["time (s)", ...labels]);
    const half = (result?.runs[0]?.duration ?? 0) / 2_000;
    expect(Math.abs(Number(hovered[0]?.[1]) - half)).toBeLessThan(3);
    for (const [label, value] of hovered.slice(1)) expect(value, label).toMatch(/^\d+(\.\d+)?$/);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height + 200);
    expect((await legends(page)).find((l) => l.chart === "goodput")).toMatchObject({ shown: labels });
    expect(await legend.innerText()).not.toContain("--");
    expect(await legend.locator(".u-value:visible").count()).toBe(0);
    // A count of one, singular; of two, plural (the classic breaker's threshold, 5 calls, down to 1).
    const threshold = page.locator(knobSelector("threshold"));
    expect(await page.locator("#knob-threshold-value").textContent()).toBe("5 calls");
    await threshold.focus();
    for (let i = 0; i < 4; i++) await threshold.press("ArrowLeft");
    expect(await page.locator("#knob-threshold-value").textContent()).toBe("1 call");
    await threshold.press("ArrowRight");
    expect(await page.locator("#knob-threshold-value").textContent()).toBe("2 calls");
    await page.close();
    expect(chromium.errors).toEqual([]);
  });
});
