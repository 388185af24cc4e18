// The built page in Chromium (through playwright-core), served by the global setup (setup.ts):
// what the page says of a link's values it changed, a scenario it does not have and an old tab.
import { describe, expect, it } from "vitest";
import { scenarios } from "../../../src/sim-catalogue";
import type { Knob } from "../../../src/model";
import { shown } from "../../../src/state";
import { haveChromium } from "../page";
import { inChromium } from "./browser";

describe.runIf(haveChromium())("links in Chromium", () => {
  const chromium = inChromium();

  it("says which of a link's values it changed and to what, which scenario it showed for one it does not have, and where an old tab went", async () => {
    const outage = scenarios.find((x) => x.id === "breaker-outage");
    const knob = (key: string): Knob => {
      const k = outage?.knobs.find((x) => x.key === key);
      if (k === undefined || k.kind === "select") throw new Error(`breaker-outage has no numeric knob ${key}`);
      return k;
    };
    const [rate, duration, latency, baseRate] = [knob("rate"), knob("duration"), knob("latency"), knob("baseRate")];
    if (rate.kind === "select" || duration.kind === "select" || baseRate.kind === "select")
      throw new Error("not numbers");
    // Values that make a light run (the fewest calls for the shortest time), so the test waits for little.
    const page = await chromium.open("#breaker-outage?rate=1&duration=1&latency=abc&baseRate=0.9&nonsense=1");
    const notice = page.locator("#notice");
    expect(await notice.isVisible()).toBe(true);
    expect(await notice.locator("li").allTextContents()).toEqual([
      `${rate.label} (rate=1): below the least it goes to, so ${shown(rate, rate.min)} is used.`,
      `${duration.label} (duration=1): below the least it goes to, so ${shown(duration, duration.min)} is used.`,
      `${baseRate.label} (baseRate=0.9): above the most it goes to, so ${shown(baseRate, baseRate.max)} is used.`,
      `${latency.label} (latency=abc): not a number, so the default, ${shown(latency, latency.value)}, is used.`,
      `nonsense=1: ${outage?.title ?? ""} has no such knob, so it is ignored.`,
    ]);
    // The controls and the URL hold what is used; a value used as written stays.
    expect(await page.locator("#knob-rate-value").textContent()).toBe(shown(rate, rate.min));
    expect(await page.locator("#knob-latency-value").textContent()).toBe(shown(latency, latency.value));
    expect(await page.evaluate(() => location.hash)).toBe(
      `#breaker-outage?rate=${rate.min}&duration=${duration.min}&baseRate=${baseRate.max}`,
    );
    await page.click("#notice-close");
    expect(await notice.isVisible()).toBe(false);
    // A scenario the page does not have: the one it opens on, and a notice saying so.
    const opening = scenarios.find((x) => x.id === "metastable-overload");
    await page.evaluate(() => (location.hash = "#nope"));
    await page.waitForFunction((id) => location.hash === `#${id}`, opening?.id);
    expect(await notice.locator("li").allTextContents()).toEqual([
      `#nope: there is no such scenario, so ${opening?.title ?? ""} is shown.`,
    ]);
    expect(await page.locator("nav a[aria-current=page]").textContent()).toBe("Simulator scenarios");
    // A tab the page had before the catalogue replaced it: its successor, saying so.
    await page.evaluate(() => (location.hash = "#shedder?peak=700"));
    await page.waitForFunction(() => location.hash === "#shedder-ramp");
    expect(await notice.locator("li").allTextContents()).toEqual([
      `#shedder: that tab is now the simulator's ${scenarios.find((x) => x.id === "shedder-ramp")?.title ?? ""}, shown here at its defaults (its knobs are not the old tab's).`,
    ]);
    // The tabs that repeated the catalogue's scenarios are those scenarios now: one place for each.
    for (const [old, now] of [
      ["burst", "quota-bursts"],
      ["quota", "quota-atomic"],
    ] as const) {
      await page.evaluate((h) => (location.hash = h), `#${old}?calls=45`);
      await page.waitForFunction((h) => location.hash === h, `#${now}`);
      expect(await notice.locator("li").allTextContents()).toEqual([
        `#${old}: that tab is now the simulator's ${scenarios.find((x) => x.id === now)?.title ?? ""}, shown here at its defaults (its knobs are not the old tab's).`,
      ]);
    }
    // Choosing a tab is a link the page can read whole: the notice goes.
    await page.click('nav a[data-scenario="guard"]');
    await page.waitForFunction(() => location.hash === "#guard");
    expect(await notice.isVisible()).toBe(false);
    await page.close();
    expect(chromium.errors).toEqual([]);
  });
});
