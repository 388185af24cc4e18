// What the page test files share: the built page's address (the global setup serves it), a
// Chromium for the file with the console errors of the page open in it, and what the tests read
// off the page as it prints it.
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, inject } from "vitest";
import { overflowing } from "../inspect";
import { chromiumArgs, chromiumPath } from "../page";

/** The built page's address, served by the global setup (setup.ts). */
export const pageUrl = (): string => inject("pageUrl");

/** The widths every scenario and tab is read at: a wide screen and a narrow laptop's. */
export const WIDTHS = [1400, 1000] as const;

/** The CSS selector of a knob's control: its id, with the dots of a grouped key (`shed.cpu`) escaped. */
export const knobSelector = (key: string): string => `#knob-${key.replaceAll(".", "\\.")}`;

/** The fields of one CSV line, unquoted. */
export function csvFields(line: string): string[] {
  return [...line.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g)].map(
    (m) => m[1]?.replaceAll('""', '"') ?? m[2] ?? "",
  );
}

/** A Chromium for the test file, and the page it opens. */
export interface Chromium {
  /** Opens the page at `hash` in a new tab `width` px wide, and waits for its answer. */
  open(hash: string, width?: number): Promise<Page>;
  /** Console errors and uncaught exceptions of the page opened last (by {@link Chromium.open}). */
  readonly errors: string[];
}

/** Launches Chromium before the calling suite's tests and closes it after the file's. */
export function inChromium(): Chromium {
  let browser: Browser | undefined;
  const session = {
    errors: [] as string[],
    async open(hash: string, width = 1280): Promise<Page> {
      if (browser === undefined) throw new Error("no browser");
      session.errors = [];
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      page.on("console", (m) => {
        if (m.type() === "error") session.errors.push(`${hash}: ${m.text()}`);
      });
      page.on("pageerror", (e) => session.errors.push(`${hash}: ${e.message}`));
      await page.goto(`${pageUrl()}${hash}`);
      await settled(page);
      return page;
    },
  };
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  return session;
}

/** Waits until the page has drawn the answer to its latest request. */
export async function settled(page: Page): Promise<void> {
  await page.waitForSelector("body[data-busy=false]", { timeout: 30_000 });
}

/** Each chart's legend: its text, the series names it shows, and the names it should (every series but the x axis). */
export async function legends(
  page: Page,
): Promise<{ chart: string; text: string; shown: string[]; labels: string[] }[]> {
  return page.$$eval(".chart", (charts) =>
    charts.map((c) => {
      const rows = [...c.querySelectorAll<HTMLElement>(".u-legend .u-series")];
      const visible = (e: HTMLElement): boolean => e.offsetParent !== null && e.offsetWidth > 0;
      return {
        chart: c.getAttribute("data-chart-figure") ?? "",
        text: rows
          .filter(visible)
          .map((r) => r.innerText)
          .join(" | "),
        shown: rows.filter(visible).map((r) => r.querySelector(".u-label")?.textContent ?? ""),
        labels: rows.slice(1).map((r) => r.querySelector(".u-label")?.textContent ?? ""),
      };
    }),
  );
}

/** The figures the page shows, by id, as printed. */
export async function figures(page: Page): Promise<Record<string, string>> {
  const pairs = await page.$$eval("[data-figure]", (cells) =>
    cells.map((c) => [(c as HTMLElement).dataset.figure ?? "", c.textContent ?? ""] as const),
  );
  return Object.fromEntries(pairs);
}

/** Nothing cut at the right edge, at each of {@link WIDTHS}; the page is left at the first. */
export async function uncut(page: Page, what: string): Promise<void> {
  for (const width of [...WIDTHS.slice(1), WIDTHS[0]]) {
    await page.setViewportSize({ width, height: 900 });
    // The charts refit on the resize event; a frame later the layout is settled.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect(await overflowing(page), `${what} at ${width} px`).toEqual([]);
  }
}
