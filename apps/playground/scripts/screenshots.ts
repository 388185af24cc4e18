// `pnpm screenshots`: the README's pictures of the page, made from the built page in Chromium (as
// the page tests drive it), so they are regenerated with the page and never drawn by hand. Builds
// the page, serves it on a free loopback port, and writes three PNGs into screenshots/: the first
// screen (the scoreboard over the scenario the page opens on), a scenario's charts, and the tuner
// after its first sweep. Each is 1400 px wide, as a laptop shows the page.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Page } from "playwright-core";
import { build } from "vite";
import { chromiumArgs, chromiumPath } from "../test/web/page.ts";
import { serve } from "./serve.ts";

const app = join(import.meta.dirname, "..");
const out = join(app, "screenshots");
const dist = join(app, ".artefacts", "screenshots-dist");
const WIDTH = 1400;

await build({
  root: app,
  configFile: join(app, "vite.config.ts"),
  logLevel: "error",
  build: { outDir: dist, emptyOutDir: true },
});
const served = await serve(dist, 0);
const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
try {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  /** `selector`'s box on the page, cut to `height` px from its top. */
  const shoot = async (page: Page, selector: string, height: number, name: string): Promise<void> => {
    const box = await page.locator(selector).boundingBox();
    if (box === null) throw new Error(`no ${selector} to photograph`);
    await page.screenshot({
      path: join(out, name),
      fullPage: true,
      clip: { x: 0, y: box.y, width: WIDTH, height: Math.min(height, box.height) },
    });
  };
  const open = async (hash: string, height: number): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width: WIDTH, height } });
    page.on("pageerror", (e) => {
      throw e;
    });
    await page.goto(`${served.url}${hash}`);
    await page.waitForSelector("body[data-busy=false]", { timeout: 120_000 });
    return page;
  };
  // The first screen, as a reader first sees it: the window's height, no more.
  const first = await open("", 900);
  await first.waitForSelector("table.scoreboard tbody tr");
  await first.screenshot({ path: join(out, "first-screen.png") });
  await first.close();
  // A scenario: its knobs and first charts, the scoreboard folded above.
  const scenario = await open("#metastable-overload", 1_100);
  await shoot(scenario, "#scenario", 1_050, "scenario.png");
  await scenario.close();
  // The tuner, once its first sweep is done.
  const tuner = await open("#tuner", 1_100);
  await tuner.waitForFunction(
    () => document.querySelector("#tune-status")?.textContent?.startsWith("Swept"),
    undefined,
    {
      timeout: 180_000,
    },
  );
  await shoot(tuner, "#scenario", 1_000, "tuner.png");
  await tuner.close();
  console.log(`wrote first-screen.png, scenario.png and tuner.png in ${out}`);
} finally {
  await browser.close();
  await served.close();
}
