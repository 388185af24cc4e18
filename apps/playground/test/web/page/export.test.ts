// The built page in Chromium (through playwright-core), served by the global setup (setup.ts):
// a run exported as CSV and its charts as one PNG.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { simOutcome } from "../../../src/runs/sim";
import { artefacts, haveChromium } from "../page";
import { csvFields, inChromium } from "./browser";

describe.runIf(haveChromium())("the exports in Chromium", () => {
  const chromium = inChromium();

  it(
    "exports the run as CSV (every plotted point and figure) and the charts as one PNG",
    { timeout: 60_000 },
    async () => {
      const page = await chromium.open("#quota-bursts");
      const save = async (button: string): Promise<Buffer> => {
        const [download] = await Promise.all([page.waitForEvent("download"), page.click(button)]);
        const path = join(artefacts, "downloads", download.suggestedFilename());
        await download.saveAs(path);
        return readFileSync(path);
      };
      const csv = (await save("#export-csv")).toString("utf8").trimEnd().split("\n");
      expect(csv[0]).toBe("chart,series,x,value");
      // The figure rows carry the values the page shows, in its order.
      const shown = await page.$$eval("[data-figure]", (cells) =>
        cells.map((c) => Number((c as HTMLElement).dataset.value)),
      );
      const figureRows = csv.filter((r) => r.startsWith("figure,"));
      expect(figureRows.map((r) => Number(r.split(",").at(-1)))).toEqual(shown);
      // Each names its run: the period let through all 160 of the calls offered.
      expect(figureRows.filter((r) => r.startsWith("figure,period: calls admitted"))).toEqual([
        "figure,period: calls admitted (calls),,160",
      ]);
      // Every plotted point: each series of each chart over the chart's x values.
      const outcome = simOutcome("quota-bursts", {});
      const points = csv.length - 1 - figureRows.length;
      expect(points).toBe(outcome.charts.reduce((n, c) => n + c.series.length * c.x.values.length, 0));
      // Each burst drawn as the spike it is, to the run's last call (7.03 s): for every limiter the
      // busiest point of admissions is many times its mean, and the points run past that call.
      const admitted = new Map<string, { x: number; v: number }[]>();
      for (const [chart, series, x, v] of csv.slice(1).map(csvFields))
        if (chart?.startsWith("Calls admitted") === true)
          admitted.set(series ?? "", [...(admitted.get(series ?? "") ?? []), { x: Number(x), v: Number(v) }]);
      expect([...admitted.keys()]).toEqual(["bucket", "sliding window", "period"]);
      for (const [series, pts] of admitted) {
        const mean = pts.reduce((a, p) => a + p.v, 0) / pts.length;
        expect(Math.max(...pts.map((p) => p.v)), series).toBeGreaterThan(5 * mean);
        expect(Math.max(...pts.map((p) => p.x)), series).toBeGreaterThan(7.03);
      }

      const png = await save("#export-png");
      expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
      const width = png.readUInt32BE(16);
      const height = png.readUInt32BE(20);
      const canvas = await page.$eval(".plot canvas", (c) => ({
        width: (c as HTMLCanvasElement).width,
        height: (c as HTMLCanvasElement).height,
      }));
      expect(width).toBe(canvas.width);
      expect(height).toBeGreaterThan(canvas.height);
      await page.close();
      expect(chromium.errors).toEqual([]);
    },
  );
});
