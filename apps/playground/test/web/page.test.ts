// The built page in a real browser (Debian's Chromium through playwright-core), served on a free
// loopback port by this test and stopped after it. Figures are read as the page prints them,
// never from pixels; a screenshot of each scenario is left in .artefacts/screenshots.
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scenario as simScenario } from "@tideward/sim";
import { pageScenarios } from "../../src/catalogue";
import { scenarios } from "../../src/sim-catalogue";
import type { Knob, Scenario } from "../../src/model";
import { shown } from "../../src/state";
import { isSim, simScenarios } from "../../src/sim-catalogue";
import { serve } from "../../scripts/serve";
import type { Served } from "../../scripts/serve";
import { artefacts, buildPage, chromiumArgs, chromiumPath, haveChromium, runSnippets } from "./page";

/** The gzipped JavaScript the page may load, in bytes: main script and worker together. */
const BUDGET = 150 * 1024;

/** The knob each of the page's own scenarios moves in its test, with the keys that move it. */
const pageMoves: Record<string, { key: string; press: string }> = {
  burst: { key: "quota", press: "ArrowRight" },
  quota: { key: "rate", press: "ArrowRight" },
  guard: { key: "limit.quota", press: "ArrowRight" },
};

/**
 * The knob a scenario's test moves: for one of the simulator's, whichever its catalogue lists,
 * its first slider after the seed (so a scenario added there is tested with no change here).
 */
function moveOf(s: Scenario): { key: string; press: string } {
  const own = pageMoves[s.id];
  if (own !== undefined) return own;
  const knob = s.knobs.find((k) => k.kind === "range" && k.key !== "seed");
  if (knob === undefined) throw new Error(`${s.id} has no slider to move`);
  return { key: knob.key, press: "ArrowRight" };
}

/** A count of one in the plural ("1 calls"). */
const onePlural =
  /(?<![\d.,])1 (calls|clients|workers|keys|tokens|requests|bursts|runs|attempts|failures|buckets|users|retries|points)\b/;

/** The CSS selector of a knob's control: its id, with the dots of a grouped key (`shed.cpu`) escaped. */
const knobSelector = (key: string): string => `#knob-${key.replaceAll(".", "\\.")}`;

let dist: string;
let served: Served | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  dist = await buildPage();
  served = await serve(dist, 0);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
});

describe("the built page", () => {
  it(`loads at most ${BUDGET / 1024} KB of gzipped JavaScript, from its own origin only`, () => {
    const assets = join(dist, "assets");
    const js = readdirSync(assets).filter((f) => f.endsWith(".js"));
    expect(js.length).toBeGreaterThanOrEqual(2); // the page and its worker
    const gzipped = js.reduce((sum, f) => sum + gzipSync(readFileSync(join(assets, f)), { level: 9 }).length, 0);
    expect(gzipped).toBeLessThan(BUDGET);
    // Works offline: nothing in the page or its scripts is fetched from elsewhere.
    const html = readFileSync(join(dist, "index.html"), "utf8");
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("serves the page on loopback", async () => {
    const res = await fetch(served?.url ?? "");
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<title>tideward playground</title>");
  });
});

describe.runIf(haveChromium())("the page in Chromium", () => {
  /** Console errors and uncaught exceptions of the page open in the current test. */
  let errors: string[] = [];

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
  }, 60_000);

  async function open(hash: string): Promise<Page> {
    if (browser === undefined || served === undefined) throw new Error("no browser or server");
    errors = [];
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`${hash}: ${m.text()}`);
    });
    page.on("pageerror", (e) => errors.push(`${hash}: ${e.message}`));
    await page.goto(`${served.url}${hash}`);
    await settled(page);
    return page;
  }

  /** Waits until the page has drawn the answer to its latest request. */
  async function settled(page: Page): Promise<void> {
    await page.waitForSelector("body[data-busy=false]", { timeout: 30_000 });
  }

  /** Each chart's legend: its text, the series names it shows, and the names it should (every series but the x axis). */
  async function legends(page: Page): Promise<{ chart: string; text: string; shown: string[]; labels: string[] }[]> {
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
  async function figures(page: Page): Promise<Record<string, string>> {
    const pairs = await page.$$eval("[data-figure]", (cells) =>
      cells.map((c) => [(c as HTMLElement).dataset.figure ?? "", c.textContent ?? ""] as const),
    );
    return Object.fromEntries(pairs);
  }

  const moved: Record<string, { hash: string; figures: Record<string, string>; snippet: string }> = {};

  /** Opens `hash` in the page already open (a hash change, as a tab or the picker makes), and waits for its answer. */
  async function go(page: Page, hash: string, title: string): Promise<void> {
    await page.evaluate((h) => (location.hash = h), hash);
    await page.waitForFunction(
      (t) => document.querySelector("h2#title")?.textContent === t && document.body.dataset.busy === "false",
      title,
      { timeout: 60_000 },
    );
  }

  it(
    `every scenario, the simulator's catalogue (${simScenarios.length}) and the page's own (${pageScenarios.length}), one after another in one page: no console errors, labelled controls, legends and figures, a screenshot; moving a knob from the keyboard changes the figures, and the URL says so`,
    { timeout: 240_000 },
    async () => {
      const page = await open(`#${scenarios[0]?.id ?? ""}`);
      for (const scenario of scenarios) {
        const id = scenario.id;
        await go(page, `#${id}`, scenario.title);
        expect(await page.locator("#status").textContent(), id).toMatch(/^Simulated .* in \d+ ms, in a worker\.$/);
        // A scenario of the simulator is chosen in the picker, under the one tab they share.
        expect(await page.locator("nav a[aria-current=page]").textContent(), id).toBe(
          isSim(id) ? "Simulator scenarios" : scenario.tab,
        );
        if (isSim(id)) expect(await page.locator("#picker").inputValue()).toBe(id);
        // Every knob has a control with a label naming it, reachable from the keyboard.
        for (const knob of scenario.knobs) {
          const control = page.locator(knobSelector(knob.key));
          expect(await control.count(), `${id}: ${knob.key}`).toBe(1);
          expect(await page.locator(`label[for="knob-${knob.key}"]`).textContent()).toBe(knob.label);
          expect(await control.getAttribute("tabindex")).not.toBe("-1");
        }
        const shown = await figures(page);
        expect(Object.keys(shown).length, id).toBeGreaterThan(0);
        for (const [fid, text] of Object.entries(shown))
          expect(text, `${id}: ${fid}`).toMatch(/^-?\d+(\.\d+)?( \S.*)?$/);
        // Charts over time, unless the run is one bucket (a finite job measured whole).
        const result = isSim(id) ? simScenario(id)?.run({}, { start: 0 }) : undefined;
        const overTime = result === undefined || (result.runs[0]?.series.t.length ?? 0) > 1;
        expect((await page.locator("canvas").count()) > 0, id).toBe(overTime);
        // Untouched, each chart's legend names its series, with no "--" for a value not yet hovered.
        for (const legend of await legends(page)) {
          expect(legend.text, `${id}: ${legend.chart}`).not.toContain("--");
          expect(legend.shown, `${id}: ${legend.chart}`).toEqual(legend.labels);
        }
        if (isSim(id)) {
          // Rendered from the result alone: the scenario's report and every one of its tables, as it printed them.
          if (result === undefined) throw new Error(`no scenario ${id}`);
          expect(await page.locator("#notes pre.report").textContent()).toBe(result.report);
          const tables = await page.$$eval("table.text", (ts) =>
            ts.map((t) => [...t.querySelectorAll("tbody tr")].map((r) => [...r.children].map((c) => c.textContent))),
          );
          expect(tables, id).toEqual(result.tables.map((t) => t.rows.map((r) => r.map(String))));
          // Goodput per second of every run, and backend load against the capacity when the scenario states one.
          const charts = await legends(page);
          if (overTime)
            expect(charts.find((c) => c.chart === "goodput")?.labels, id).toEqual(result.runs.map((r) => r.label));
          const backend = charts.find((c) => c.chart === "backend");
          if (result.figures.capacity !== undefined) expect(backend?.labels, id).toContain("capacity");
        }
        // Counts of one read in the singular, everywhere on the page ("1 call", never "1 calls").
        expect(await page.locator("main").innerText(), id).not.toMatch(onePlural);
        mkdirSync(join(artefacts, "screenshots"), { recursive: true });
        await page.screenshot({ path: join(artefacts, "screenshots", `${id}.png`), fullPage: true });
        // A knob moved from the keyboard: other figures, and a URL that says so.
        const move = moveOf(scenario);
        const control = page.locator(knobSelector(move.key));
        await control.focus();
        for (let i = 0; i < 3; i++) await control.press(move.press);
        await page.waitForFunction(() => document.body.dataset.busy === "false");
        const after = await figures(page);
        expect(after, `${id}: moving ${move.key} changes a figure`).not.toEqual(shown);
        const hash = await page.evaluate(() => location.hash);
        expect(hash).toMatch(new RegExp(`^#${id}\\?(.*&)?${move.key.replace(".", "\\.")}=`));
        moved[id] = { hash, figures: after, snippet: await page.locator("#snippet").inputValue() };
      }
      await page.close();
      expect(errors).toEqual([]);
    },
  );

  it("shows the burst table under the burst plot: 21, 20 and 40 of 40, labelled; at 45 calls the same, with more refused, and the note says why", async () => {
    const page = await open("#burst");
    // The offered line runs along the aligned period's (it lets every call through): both show on
    // the canvas, the offered line's grey dots over the period's purple.
    const pixels = await page.$eval(".plot canvas", (canvas) => {
      const c = canvas as HTMLCanvasElement;
      const px = c.getContext("2d")?.getImageData(0, 0, c.width, c.height).data ?? new Uint8ClampedArray();
      const near = (i: number, rgb: readonly number[]): boolean =>
        rgb.every((v, j) => Math.abs((px[i + j] ?? 0) - v) < 12);
      let grey = 0;
      let purple = 0;
      for (let i = 0; i < px.length; i += 4) {
        if (near(i, [0x6b, 0x72, 0x80])) grey++;
        if (near(i, [0x7c, 0x3a, 0xed])) purple++;
      }
      return { grey, purple };
    });
    expect(pixels.grey, "the offered line's grey").toBeGreaterThan(300);
    expect(pixels.purple, "the period line's purple").toBeGreaterThan(300);
    const shown = await figures(page);
    for (const k of [0, 1, 2, 3]) {
      expect([shown[`burst${k}.bucket`], shown[`burst${k}.sliding`], shown[`burst${k}.period`]]).toEqual([
        "21",
        "20",
        "40",
      ]);
    }
    const table = page.locator("table", { has: page.locator('[data-figure="burst0.bucket"]') });
    expect(await table.locator("caption").textContent()).toMatch(/40 offered .* quota 20 a second/);
    expect(await table.locator("thead th").allTextContents()).toEqual(["burst", "bucket", "sliding", "period"]);
    // "Calls in a burst" 40 → 45: every limiter is already at its bound, so the table stays,
    // the refusals grow by 5 a burst, and the note says so.
    const calls = page.locator(knobSelector("calls"));
    await calls.focus();
    for (let i = 0; i < 5; i++) await calls.press("ArrowRight");
    await settled(page);
    const at45 = await figures(page);
    expect(await page.locator("#knob-calls-value").textContent()).toBe("45 calls");
    for (const k of [0, 1, 2, 3])
      expect([at45[`burst${k}.bucket`], at45[`burst${k}.sliding`], at45[`burst${k}.period`]]).toEqual([
        "21",
        "20",
        "40",
      ]);
    for (const limiter of ["bucket", "sliding", "period"])
      expect(Number(at45[`${limiter}.refused`]), limiter).toBe(Number(shown[`${limiter}.refused`]) + 4 * 5);
    const notes = await page.locator("#notes").innerText();
    expect(notes).toContain("The first burst's figures, 21 / 20 / 40, are these bounds");
    expect(notes).toContain("more calls in a burst add only refusals; the bucket's figure moves at 68 calls");
    await page.close();
    expect(errors).toEqual([]);
  });

  it("legends name the series until the cursor is on a plot, then show the values under it, then the names again", async () => {
    const page = await open("#breaker-outage");
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
    expect(errors).toEqual([]);
  });

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
    const page = await open("#breaker-outage?rate=1&duration=1&latency=abc&baseRate=0.9&nonsense=1");
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
    // A scenario the page does not have: the first one, and a notice saying so.
    await page.evaluate(() => (location.hash = "#nope"));
    await page.waitForFunction((id) => location.hash === `#${id}`, scenarios[0]?.id);
    expect(await notice.locator("li").allTextContents()).toEqual([
      `#nope: there is no such scenario, so ${scenarios[0]?.title ?? ""} is shown.`,
    ]);
    expect(await page.locator("nav a[aria-current=page]").textContent()).toBe("Simulator scenarios");
    // A tab the page had before the catalogue replaced it: its successor, saying so.
    await page.evaluate(() => (location.hash = "#shedder?peak=700"));
    await page.waitForFunction(() => location.hash === "#shedder-ramp");
    expect(await notice.locator("li").allTextContents()).toEqual([
      `#shedder: that tab is now the simulator's ${scenarios.find((x) => x.id === "shedder-ramp")?.title ?? ""}, shown here at its defaults (its knobs are not the old tab's).`,
    ]);
    // Choosing a tab is a link the page can read whole: the notice goes.
    await page.click('nav a[data-scenario="burst"]');
    await page.waitForFunction(() => location.hash === "#burst");
    expect(await notice.isVisible()).toBe(false);
    await page.close();
    expect(errors).toEqual([]);
  });

  it(
    "keeps the tab row where it is whichever tab or scenario is selected, wide or narrow",
    { timeout: 60_000 },
    async () => {
      // The runs each click starts are not waited for: the tab row is laid out as the hash changes.
      const page = await open("#burst");
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
      expect(errors).toEqual([]);
    },
  );

  it(
    "guard: the table under the plot compares the three runs; a tighter per-key limit and another limiter kind change what it shows, and their URL reproduces it",
    { timeout: 60_000 },
    async () => {
      const page = await open("#guard");
      const before = await figures(page);
      const table = page.locator("table", { has: page.locator('[data-figure="guarded.topShare"]') });
      expect(await table.locator("thead th").allTextContents()).toEqual([
        "",
        "guard",
        "guard without the per-key limit",
        "no policy",
      ]);
      const rows = await table.locator("tbody th").allTextContents();
      expect(rows).toContain("the heaviest key's share of admissions (%)");
      expect(rows).toContain("latency p99 (ms)");
      expect(await table.locator("caption").textContent()).toMatch(/4 workers, 16 ms a call: 250 calls\/s/);
      // At the defaults the guard refuses by each reason, and the limit holds the heaviest key below its share.
      for (const reason of ["shed", "gate", "rate"])
        expect(Number(before[`guarded.${reason}`]), reason).toBeGreaterThan(0);
      expect(Number(before["guarded.topShare"])).toBeLessThan(Number(before["unlimited.topShare"]));
      expect(Number(before["guarded.p99"])).toBeLessThan(Number(before["unprotected.p99"]));
      // Per-key quota 20 → 10, from the keyboard.
      const quota = page.locator(knobSelector("limit.quota"));
      await quota.focus();
      for (let i = 0; i < 10; i++) await quota.press("ArrowLeft");
      await settled(page);
      const tighter = await figures(page);
      expect(Number(tighter["guarded.rate"])).toBeGreaterThan(Number(before["guarded.rate"]));
      expect(Number(tighter["guarded.topShare"])).toBeLessThan(Number(before["guarded.topShare"]));
      // The runs without the limit are untouched by it.
      expect(tighter["unlimited.admitted"]).toBe(before["unlimited.admitted"]);
      expect(tighter["unprotected.p99"]).toBe(before["unprotected.p99"]);
      await page.locator(knobSelector("limit.kind")).selectOption("sliding");
      await settled(page);
      const sliding = await figures(page);
      expect(sliding["guarded.rate"]).not.toBe(tighter["guarded.rate"]);
      const hash = await page.evaluate(() => location.hash);
      expect(hash.split("?")[0]).toBe("#guard");
      expect(Object.fromEntries(new URLSearchParams(hash.split("?")[1]))).toEqual({
        "limit.quota": "10",
        "limit.kind": "sliding",
      });
      await page.close();
      const again = await open(hash);
      expect(await figures(again)).toEqual(sliding);
      expect(await again.locator(knobSelector("limit.kind")).inputValue()).toBe("sliding");
      await again.close();
      expect(errors).toEqual([]);
    },
  );

  it(
    "exports the run as CSV (every plotted point and figure) and the charts as one PNG",
    { timeout: 60_000 },
    async () => {
      const page = await open("#burst");
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
      expect(figureRows.filter((r) => r.includes("burst 0, period"))).toEqual([
        'figure,"burst 0, period: calls let through",,40',
      ]);
      // Every plotted point: four series (offered and the three limiters) over the chart's x values.
      const points = csv.length - 1 - figureRows.length;
      expect(points % 4).toBe(0);
      expect(points).toBeGreaterThan(4 * 100);

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
      expect(errors).toEqual([]);
    },
  );

  it(
    "every scenario: opening the URL of a moved run (a fresh load) shows the same figures and the moved control",
    { timeout: 180_000 },
    async () => {
      const page = await open("#burst");
      for (const scenario of scenarios) {
        const run = moved[scenario.id];
        if (run === undefined) throw new Error(`the knob test of ${scenario.id} did not run`);
        await page.goto("about:blank");
        await page.goto(`${served?.url ?? ""}${run.hash}`);
        await settled(page);
        expect(await figures(page), scenario.id).toEqual(run.figures);
        const move = moveOf(scenario);
        expect(await page.locator(knobSelector(move.key)).inputValue()).toBe(
          new URLSearchParams(run.hash.split("?")[1]).get(move.key),
        );
      }
      await page.close();
      expect(errors).toEqual([]);
    },
  );

  it(
    "copy as test: each scenario's test, as the page wrote it, passes in a vitest of its own",
    { timeout: 120_000 },
    () => {
      const files = Object.entries(moved).map(([id, run]) => ({ name: `${id}.page.test.ts`, code: run.snippet }));
      expect(files).toHaveLength(scenarios.length);
      for (const f of files) expect(f.code).toContain('from "@tideward/sim"');
      const result = runSnippets("page-snippets", files);
      expect(result.failed, result.output).toBe(0);
      expect(result.passed, result.output).toBe(files.length);
    },
  );

  it(
    "the tuner: a sweep runs with its progress shown, the front is drawn, copy as options gives options that parse and reproduce the point, and a point opens the scenario at it",
    { timeout: 120_000 },
    async () => {
      // A sweep asked for and changed before it ends: the first is cancelled, the second runs whole.
      const page = await open("#tuner?of=retry-amplification&x=attempts&x0=1&x1=9&xn=90");
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
      expect(errors).toEqual([]);
    },
  );
});
