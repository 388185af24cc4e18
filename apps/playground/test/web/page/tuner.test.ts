// The built page in Chromium (through playwright-core), served by the global setup (setup.ts):
// the tuner: a sweep, its front, copy as options, and a point opening its scenario.
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { scenario as simScenario } from "@tideward/sim";
import { haveChromium } from "../page";
import { WIDTHS, inChromium, knobSelector, settled, uncut } from "./browser";

describe.runIf(haveChromium())("the tuner in Chromium", () => {
  const chromium = inChromium();

  it(
    "the tuner: a sweep runs with its progress shown, the front is drawn, copy as options gives options that parse and reproduce the point, and a point opens the scenario at it",
    { timeout: 120_000 },
    async () => {
      // A sweep asked for and changed before it ends: the first is cancelled, the second runs whole.
      const page = await chromium.open("#tuner?of=retry-amplification&x=attempts&x0=1&x1=9&xn=90");
      expect(await page.locator("#notice li").allTextContents()).toEqual([
        "xn=90: not one the tuner can use, so 9 is used.",
      ]);
      await page.locator("#tune-xn").fill("3");
      await page.locator("#tune-xn").dispatchEvent("change");
      await page.waitForFunction(
        () => document.querySelector("#tune-status")?.textContent?.startsWith("Swept 3 points"),
        undefined,
        {
          timeout: 60_000,
        },
      );
      expect(await page.evaluate(() => location.hash)).toContain("xn=3");
      // Now over the retry budget's ratio: three points, the front through those none beats.
      await page.evaluate(
        () => (location.hash = "#tuner?of=retry-amplification&x=ratio&x0=0&x1=1&xn=3&run=0&cost=load"),
      );
      await page.waitForFunction(
        () => document.querySelector("#tune-status")?.textContent?.startsWith("Swept 3 points"),
        undefined,
        {
          timeout: 60_000,
        },
      );
      expect(await page.locator("#tune-progress").evaluate((p) => (p as HTMLProgressElement).value)).toBe(1);
      const dots = page.locator("svg.tuner-plot circle.point");
      expect(await dots.count()).toBe(3);
      expect(await page.locator("svg.tuner-plot polyline.front").count()).toBe(1);
      const sim = simScenario("retry-amplification");
      if (sim === undefined) throw new Error("no retry-amplification scenario");
      expect(await page.locator("#tune-run option").allTextContents()).toEqual(
        sim.run({}, { start: 0 }).runs.map((r) => r.label),
      );
      // Each point as the simulator gives it: its goodput in its label.
      const points = await dots.evaluateAll((cs) =>
        cs.map((c) => ({
          params: JSON.parse(c.getAttribute("data-params") ?? "{}") as Record<string, number>,
          label: c.getAttribute("aria-label") ?? "",
          front: c.classList.contains("on-front"),
        })),
      );
      for (const p of points) {
        const r = sim.run(p.params, { start: 0 }).runs[0];
        expect(p.label).toContain(`goodput ${((r?.summary.goodputRate ?? 0) * 100).toFixed(1)} %`);
      }
      expect(points.some((p) => p.front)).toBe(true);
      // Another run plotted reads the same sweep: no new one, the points moved to that run's figures.
      await page.locator("#tune-run").selectOption("1");
      expect(await page.locator("#tune-status").textContent()).toMatch(/^Swept 3 points/);
      expect(await page.locator("#tune-caption").textContent()).toContain(
        sim.run({}, { start: 0 }).runs[1]?.label ?? "?",
      );
      expect(await page.evaluate(() => location.hash)).toContain("run=1");
      await page.locator("#tune-run").selectOption("0");
      // Focus a point: copy as options gives guard options and a simulator run that parse, and reproduce it.
      await dots.nth(1).focus();
      const text = await page.locator("#tune-options").inputValue();
      const guardLine = text.split("\n").find((l) => l.startsWith("guard(fn, "));
      const runLine = text.split("\n").find((l) => l.startsWith("scenario("));
      if (guardLine === undefined || runLine === undefined) throw new Error(`no options in ${text}`);
      const options = JSON.parse(
        JSON.stringify(runInNewContext(`(${guardLine.slice("guard(fn, ".length, -1)})`)),
      ) as unknown;
      expect(points.map((p) => p.params.ratio)).toEqual([0, 0.5, 1]);
      expect(options).toEqual({ budget: { ratio: 0.5 } });
      const replayed = runInNewContext(runLine, { scenario: simScenario }) as ReturnType<typeof sim.run>;
      expect(((replayed.runs[0]?.summary.goodputRate ?? 0) * 100).toFixed(1)).toBe(
        /goodput (\d+\.\d) %/.exec(points[1]?.label ?? "")?.[1],
      );
      // Click it: the scenario's view at those knobs, its control showing them.
      await dots.nth(1).click();
      await page.waitForFunction(() => location.hash.startsWith("#retry-amplification"));
      await settled(page);
      expect(await page.evaluate(() => location.hash)).toBe("#retry-amplification?ratio=0.5");
      expect(await page.locator(knobSelector("ratio")).inputValue()).toBe("0.5");
      await page.close();
      expect(chromium.errors).toEqual([]);
    },
  );

  it(
    "the tuner: on first open it names what it sweeps and every run (no placeholder), lands its points on the values it lists and labels each, holds a typed end to the knob's steps and says so, and the selection text follows the highlighted point; nothing cut at either width",
    { timeout: 120_000 },
    async () => {
      const page = await chromium.open("#tuner", WIDTHS[0]);
      // Before any point is back: what is swept, in words, and the runs by name or role, never "run 1".
      const early = (await page.locator("#tune-status").textContent()) ?? "";
      expect(early).toMatch(/^Sweeping .+: \d+ points, each a whole run; \d+ done\.$/);
      expect(early).not.toMatch(/Running/);
      expect(await page.locator("#tune-run option").allTextContents()).not.toContain("run 1");
      // Stop is offered while a sweep runs, and only then.
      expect(await page.locator("#tune-stop").isEnabled()).toBe(true);
      await page.waitForFunction(
        () => document.querySelector("#tune-status")?.textContent?.startsWith("Swept"),
        undefined,
        {
          timeout: 90_000,
        },
      );
      expect(await page.locator("#tune-stop").isDisabled()).toBe(true);
      await page.locator("#tune-run").selectOption("1");
      expect(await page.locator("#tune-stop").isDisabled()).toBe(true);
      await page.locator("#tune-run").selectOption("0");
      await uncut(page, "the tuner");
      const listed = async (): Promise<number[]> =>
        ((await page.locator("#tune-x-values").textContent()) ?? "")
          .replace(/^At /, "")
          .split(", ")
          .map((v) => Number.parseFloat(v));
      const dots = page.locator("svg.tuner-plot circle.point[data-params]");
      const swept = async (): Promise<{ value: number; label: string }[]> =>
        dots.evaluateAll((cs) =>
          cs.map((c) => ({
            value: Object.values(JSON.parse(c.getAttribute("data-params") ?? "{}") as Record<string, number>)[0] ?? NaN,
            label: c.previousElementSibling?.textContent ?? "",
          })),
        );
      // The default sweep: five points on the knob's grid around its default, each labelled with its value.
      const first = await listed();
      expect(first).toHaveLength(5);
      expect((await swept()).map((d) => d.value).sort((a, b) => a - b)).toEqual(first);
      for (const d of await swept()) expect(d.label).toBe(String(d.value));
      // A typed end off the knob's steps: moved onto them, in the box and in words, and swept there.
      await page.evaluate(() => (location.hash = "#tuner?of=retry-amplification&x=ratio&xn=3"));
      await page.waitForFunction(() => document.querySelector("#tune-status")?.textContent?.startsWith("Swept"));
      await page.locator("#tune-x0").fill("0.12");
      await page.locator("#tune-x0").dispatchEvent("change");
      expect(await page.locator("#tune-note").textContent()).toBe("0.12 is not on this knob's steps, so 0.1 is used.");
      expect(await page.locator("#tune-x0").inputValue()).toBe("0.1");
      await page.waitForFunction(() => document.querySelector("#tune-status")?.textContent?.startsWith("Swept 3"));
      const asked = await listed();
      expect(asked[0]).toBe(0.1);
      expect((await swept()).map((d) => d.value).sort((a, b) => a - b)).toEqual(asked);
      // The selection text follows the point highlighted: hover one, then another.
      for (const i of [0, 2]) {
        await dots.nth(i).hover();
        const highlighted = await page
          .locator("svg.tuner-plot circle.point.selected")
          .evaluateAll((cs) =>
            cs.map((c) => JSON.parse(c.getAttribute("data-params") ?? "{}") as Record<string, number>),
          );
        expect(highlighted).toHaveLength(1);
        expect(await page.locator("#tune-selected").textContent()).toContain(`ratio = ${highlighted[0]?.ratio}:`);
      }
      await page.close();
      expect(chromium.errors).toEqual([]);
    },
  );
});
