// The built page in Chromium (through playwright-core), served by the global setup (setup.ts):
// the token-budget scenario's plots in tokens, against the simulator's run and the scenario's table.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scenario as simScenario } from "@tideward/sim";
import { chartsOf } from "../../../src/runs/sim";
import { artefacts, haveChromium } from "../page";
import { WIDTHS, csvFields, inChromium, legends } from "./browser";

describe.runIf(haveChromium())("token budgets in Chromium", () => {
  const chromium = inChromium();

  it(
    "token budgets: the scenario's plots in tokens lead the charts, each way named in their legends against the model's budget line, the axes in their units and an overrun below 0 in view, every point the simulator's, the deepest the table's worst overrun, and the scenario's table first",
    { timeout: 90_000 },
    async () => {
      const result = simScenario("token-budget")?.run({}, { start: 0 });
      const plots = result?.plots ?? [];
      if (result === undefined || plots.length === 0) throw new Error("token-budget plots nothing");
      const page = await chromium.open("#token-budget", WIDTHS[0]);
      const ways = result.runs.map((r) => r.label);
      const byId = (id: string) => {
        const p = plots.find((x) => x.id === id);
        if (p === undefined) throw new Error(`token-budget has no plot ${id}`);
        return p;
      };
      // Tokens served against the model's budget, then the budgets' levels, before the calls.
      const order = await page.$$eval(".chart", (cs) => cs.map((c) => c.getAttribute("data-chart-figure") ?? ""));
      expect(order.slice(0, 4)).toEqual(["plot-tokens", "plot-model-budget", "plot-tenant-budgets", "plot-overrun"]);
      expect(order.slice(4)).toEqual(
        chartsOf(result)
          .slice(4)
          .map((c) => c.id),
      );
      const drawn = await legends(page);
      for (const p of plots) {
        const id = `plot-${p.id}`;
        // The legend names each way, then the level it is read against.
        expect(drawn.find((l) => l.chart === id)?.shown, id).toEqual([...ways, ...(p.marks ?? []).map((m) => m.label)]);
        expect(await page.locator(`[data-chart-figure="${id}"] figcaption`).textContent(), id).toBe(p.title);
        const host = page.locator(`[data-chart="${id}"]`);
        expect(await host.getAttribute("data-x-label"), id).toBe("time (s)");
        expect(await host.getAttribute("data-y-label"), id).toBe(p.unit);
        // The y axis holds every point and level: from 0, or from below it where a budget was overrun.
        const values = [...p.runs.flat(), ...(p.marks ?? []).map((m) => m.value)].filter((v) => v !== null);
        expect(Number(await host.getAttribute("data-y-min")), id).toBeLessThanOrEqual(Math.min(0, ...values));
        expect(Number(await host.getAttribute("data-y-max")), id).toBeGreaterThanOrEqual(Math.max(...values));
      }
      // The axis makes room for its widest tick label (420,000 tokens), so its label covers none:
      // the budget's plot area starts further right than the calls'.
      const left = (id: string) =>
        page.locator(`[data-chart-figure="${id}"] .u-over`).evaluate((e) => e.getBoundingClientRect().left);
      expect(await left("plot-model-budget")).toBeGreaterThan(await left("admitted"));
      expect(byId("tokens").unit).toBe("tokens/s");
      expect(byId("model-budget").unit).toBe("tokens");
      // Charging after the response overran a tenant's budget: its axis goes below 0.
      const tenants = page.locator('[data-chart="plot-tenant-budgets"]');
      expect(Number(await tenants.getAttribute("data-y-min"))).toBeLessThan(0);

      // Every point the page plots, as its CSV gives it, is the simulator's; the budget line is the
      // model's rate at every second.
      const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-csv")]);
      const path = join(artefacts, "downloads", "token-budget.csv");
      await download.saveAs(path);
      const lines = new Map<string, number[]>();
      for (const [chart, series, , v] of readFileSync(path, "utf8").trimEnd().split("\n").slice(1).map(csvFields))
        if (chart !== "figure")
          lines.set(`${chart} / ${series}`, [...(lines.get(`${chart} / ${series}`) ?? []), Number(v)]);
      const line = (id: string, label: string) => lines.get(`${byId(id).title} / ${label}`) ?? [];
      for (const p of plots) {
        // The same run in Chromium's engine: a level reached by another path of floating-point
        // arithmetic (a response's time drawn through Math.exp) may differ in its last digit.
        result.runs.forEach((r, i) => {
          const drawnLine = line(p.id, r.label);
          expect(drawnLine, `${p.id} / ${r.label}`).toHaveLength(p.runs[i]?.length ?? -1);
          p.runs[i]?.forEach((v, j) =>
            expect(Math.abs((drawnLine[j] ?? NaN) - (v ?? NaN)), `${p.id} / ${r.label} at ${j} s`).toBeLessThanOrEqual(
              1e-9 * Math.max(1, Math.abs(v ?? 0)),
            ),
          );
        });
        for (const m of p.marks ?? [])
          expect(new Set(line(p.id, m.label)), `${p.id} / ${m.label}`).toEqual(new Set([m.value]));
      }
      const budget = byId("tokens").marks?.[0];
      expect(budget?.value).toBe(result.params.modelTokens);
      expect(line("tokens", budget?.label ?? "")).toHaveLength(result.runs[0]?.series.t.length ?? -1);

      // What the charts show is what the scenario's table prints: each way's worst overrun of any
      // budget (in max_tokens) is the highest point of its overrun, the deepest level drawn below 0.
      const table = (
        await page.$$eval("#figures table", (ts) =>
          ts.map((t) => ({
            caption: t.querySelector("caption")?.textContent ?? "",
            columns: [...t.querySelectorAll("thead th")].map((c) => c.textContent ?? ""),
            rows: [...t.querySelectorAll("tbody tr")].map((r) => [...r.children].map((c) => c.textContent ?? "")),
          })),
        )
      )[0];
      // The scenario's own table leads the page's tables, with what a user judges a way by first.
      expect(table?.caption).toBe(result.tables[0]?.title);
      expect(table?.columns.slice(1, 5)).toEqual([
        "tokens served",
        "of the oracle's",
        "tenants under quota refused",
        "worst overrun (in max_tokens)",
      ]);
      const bound = Number(result.params.maxTokens);
      result.runs.forEach((r, i) => {
        const row = table?.rows[i] ?? [];
        expect(row[0]).toBe(r.label);
        const deepest = Math.max(...line("overrun", r.label));
        expect(deepest, r.label).toBe(
          Math.max(0, ...[...line("model-budget", r.label), ...line("tenant-budgets", r.label)].map((v) => -v)),
        );
        expect(row[4], r.label).toBe((deepest / bound).toFixed(1));
      });

      // Under the cursor, the legend reads each way's tokens that second, as the simulator counted them.
      const over = page.locator('[data-chart-figure="plot-tokens"] .u-over');
      await over.scrollIntoViewIfNeeded();
      const box = await over.boundingBox();
      if (box === null) throw new Error("no plot area");
      await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
      const hovered = await page
        .locator('[data-chart-figure="plot-tokens"] .u-legend .u-series')
        .evaluateAll((rows) => rows.map((r) => r.querySelector(".u-value")?.textContent ?? ""));
      const at = Number(hovered[0]);
      expect(Number.isInteger(at), hovered.join(" | ")).toBe(true);
      const shown = (v: number | null | undefined) =>
        (v ?? 0).toLocaleString("en-GB", {
          maximumFractionDigits: Math.abs(v ?? 0) >= 100 ? 0 : Math.abs(v ?? 0) >= 10 ? 1 : 2,
        });
      expect(hovered.slice(1)).toEqual([...byId("tokens").runs.map((l) => shown(l[at])), shown(budget?.value)]);
      await page.mouse.move(box.x + box.width / 2, box.y + box.height + 200);
      mkdirSync(join(artefacts, "screenshots"), { recursive: true });
      for (const p of plots)
        await page
          .locator(`[data-chart-figure="plot-${p.id}"]`)
          .screenshot({ path: join(artefacts, "screenshots", `token-budget-${p.id}.png`) });
      await page.close();
      expect(chromium.errors).toEqual([]);
    },
  );
});
