// The built page in Chromium (through playwright-core), served by the global setup (setup.ts):
// the first screen: the scoreboard over the scenario the page opens on.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scenario as simScenario } from "@tideward/sim";
import type { ClaimsData } from "../../../src/claims/data";
import { all, best, range, tally, tallyText, verdictOf } from "../../../src/claims/stats";
import { linkOf, rowsOf } from "../../../src/scoreboard";
import { artefacts, haveChromium } from "../page";
import { WIDTHS, inChromium, uncut } from "./browser";

describe.runIf(haveChromium())("the first screen in Chromium", () => {
  const chromium = inChromium();

  it(
    "the first screen: the scoreboard, every situation's tideward best against the best baseline with its range and its run-for-run count, losses as plainly as wins, each linking to its scenario, over the scenario the page opens on; folded when a link names a scenario",
    { timeout: 90_000 },
    async () => {
      const claims = JSON.parse(
        readFileSync(join(import.meta.dirname, "../../../src/claims/claims.json"), "utf8"),
      ) as ClaimsData;
      const page = await chromium.open("", WIDTHS[0]);
      await page.waitForSelector("table.scoreboard tbody tr");
      expect(await page.locator("#why-details").evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
      // Opens on a situation tideward's defaults exist for.
      expect(await page.locator("h2#title").textContent()).toBe(simScenario("metastable-overload")?.title);
      // On the first screen: the scoreboard's table starts within the window.
      const box = await page.locator("table.scoreboard").boundingBox();
      expect(box?.y ?? Infinity).toBeLessThan(900);
      const rows = await page.$$eval("table.scoreboard tbody tr", (trs) =>
        trs.map((tr) => ({
          id: tr.getAttribute("data-situation") ?? "",
          href: tr.querySelector("th a")?.getAttribute("href") ?? "",
          cells: [...tr.querySelectorAll("td")].map((td) => td.textContent ?? ""),
          badge: tr.querySelector(".badge")?.textContent ?? "",
        })),
      );
      const expected = rowsOf(claims);
      expect(rows.map((r) => r.id)).toEqual(expected.map((s) => s.id));
      for (const s of expected) {
        const row = rows.find((r) => r.id === s.id);
        const ours = best(s, "tideward");
        const theirs = best(s, "baseline");
        if (row === undefined || ours === undefined || theirs === undefined) throw new Error(`no row for ${s.id}`);
        expect(row.href, s.id).toBe(linkOf(s));
        expect(row.cells[0], s.id).toContain(`${ours.label} ${range(s, all(ours))}`);
        expect(row.cells[1], s.id).toContain(`${theirs.label} ${range(s, all(theirs))}`);
        const t = tally(s, ours, theirs);
        const verdict = verdictOf(t);
        expect(row.badge, s.id).toBe(verdict === "tie" ? "tied" : verdict);
        expect(row.cells[2], s.id).toContain(tallyText(t));
      }
      await uncut(page, "the first screen");
      mkdirSync(join(artefacts, "screenshots"), { recursive: true });
      await page.screenshot({ path: join(artefacts, "screenshots", "first-screen.png") });
      // A row's link opens its scenario, brought into view.
      const target = expected.find((s) => s.scenario !== "metastable-overload");
      if (target === undefined) throw new Error("every situation is the opening scenario's");
      await page.click(`tr[data-situation="${target.id}"] th a`);
      await page.waitForFunction(
        (t) => document.querySelector("h2#title")?.textContent === t,
        simScenario(target.scenario)?.title,
      );
      const title = await page.locator("h2#title").boundingBox();
      expect(title?.y ?? Infinity).toBeLessThan(900);
      await page.close();
      // A link to a scenario opens it with the scoreboard folded.
      const linked = await chromium.open("#guard");
      expect(await linked.locator("#why-details").evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
      await linked.close();
      expect(chromium.errors).toEqual([]);
    },
  );
});
