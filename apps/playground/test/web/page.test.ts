// The built page in a real browser (Debian's Chromium through playwright-core), served on a free
// loopback port by this test and stopped after it. Figures are read as the page prints them,
// never from pixels; a screenshot of each scenario is left in .artefacts/screenshots.
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scenarios } from "../../src/catalogue";
import { serve } from "../../scripts/serve";
import type { Served } from "../../scripts/serve";
import { artefacts, buildPage, chromiumArgs, chromiumPath, haveChromium, runSnippets } from "./page";

/** The gzipped JavaScript the page may load, in bytes: main script and worker together. */
const BUDGET = 150 * 1024;

/** The knob each scenario's test moves, with the keys that move it. */
const moves: Record<string, { key: string; press: string }> = {
  breaker: { key: "rate", press: "ArrowRight" },
  shedder: { key: "peak", press: "ArrowRight" },
  burst: { key: "quota", press: "ArrowRight" },
  herd: { key: "clients", press: "ArrowRight" },
  quota: { key: "rate", press: "ArrowRight" },
  sweep: { key: "clients", press: "ArrowRight" },
  guard: { key: "limit.quota", press: "ArrowRight" },
};

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

  it.each(scenarios.map((s) => [s.id, s] as const))(
    "%s loads with no console errors, labelled controls, legends and figures, and a screenshot; moving a knob from the keyboard changes the figures, and the URL says so",
    { timeout: 60_000 },
    async (id, scenario) => {
      const page = await open(`#${id}`);
      expect(await page.locator("h2#title").textContent()).toBe(scenario.title);
      expect(await page.locator("#status").textContent()).toMatch(/^Simulated .* in \d+ ms, in a worker\.$/);
      // Every knob has a control with a label naming it, reachable from the keyboard.
      for (const knob of scenario.knobs) {
        const control = page.locator(knobSelector(knob.key));
        expect(await control.count(), knob.key).toBe(1);
        expect(await page.locator(`label[for="knob-${knob.key}"]`).textContent()).toBe(knob.label);
        expect(await control.getAttribute("tabindex")).not.toBe("-1");
      }
      const shown = await figures(page);
      expect(Object.keys(shown).length).toBeGreaterThan(0);
      for (const [fid, text] of Object.entries(shown)) expect(text, fid).toMatch(/^-?\d+(\.\d+)?( \S.*)?$/);
      expect(await page.locator("canvas").count()).toBeGreaterThan(0);
      // Untouched, each chart's legend names its series, with no "--" for a value not yet hovered.
      for (const legend of await legends(page)) {
        expect(legend.text, legend.chart).not.toContain("--");
        expect(legend.shown, legend.chart).toEqual(legend.labels);
      }
      // Counts of one read in the singular, everywhere on the page ("1 call", never "1 calls").
      expect(await page.locator("main").innerText()).not.toMatch(onePlural);
      mkdirSync(join(artefacts, "screenshots"), { recursive: true });
      await page.screenshot({ path: join(artefacts, "screenshots", `${id}.png`), fullPage: true });
      // A knob moved from the keyboard: other figures, and a URL that says so.
      const move = moves[id];
      if (move === undefined) throw new Error(`no knob to move for ${id}`);
      const control = page.locator(knobSelector(move.key));
      await control.focus();
      for (let i = 0; i < 3; i++) await control.press(move.press);
      await settled(page);
      const after = await figures(page);
      expect(after).not.toEqual(shown);
      const hash = await page.evaluate(() => location.hash);
      expect(hash).toMatch(new RegExp(`^#${id}\\?(.*&)?${move.key}=`));
      moved[id] = { hash, figures: after, snippet: await page.locator("#snippet").inputValue() };
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
    const page = await open("#breaker");
    const legend = page.locator('[data-chart-figure="through"] .u-legend');
    const over = page.locator('[data-chart-figure="through"] .u-over');
    const box = await over.boundingBox();
    if (box === null) throw new Error("no plot area");
    // Halfway along the 180 s run: the x value is a time near 90 s, each series a number of calls/s.
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const hovered = await legend
      .locator(".u-series")
      .evaluateAll((rows) =>
        rows.map((r) => [
          r.querySelector(".u-label")?.textContent ?? "",
          r.querySelector(".u-value")?.textContent ?? "",
        ]),
      );
    expect(hovered.map(([label]) => label)).toEqual(["time (s)", "tideward breaker", "classic breaker", "offered"]);
    expect(Math.abs(Number(hovered[0]?.[1]) - 90)).toBeLessThan(3);
    for (const [label, value] of hovered.slice(1)) expect(value, label).toMatch(/^\d+(\.\d+)?$/);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height + 200);
    expect((await legends(page)).find((l) => l.chart === "through")).toMatchObject({
      shown: ["tideward breaker", "classic breaker", "offered"],
    });
    expect(await legend.innerText()).not.toContain("--");
    expect(await legend.locator(".u-value:visible").count()).toBe(0);
    // A count of one, singular; of two, plural.
    const probes = page.locator(knobSelector("probes"));
    expect(await page.locator("#knob-probes-value").textContent()).toBe("1 call");
    await probes.focus();
    await probes.press("ArrowRight");
    expect(await page.locator("#knob-probes-value").textContent()).toBe("2 calls");
    await page.close();
    expect(errors).toEqual([]);
  });

  it("says which of a link's values it changed and to what, and which scenario it showed for one it does not have", async () => {
    const page = await open("#breaker?rate=99999&duration=30&latency=abc&brown=3&nonsense=1");
    const notice = page.locator("#notice");
    expect(await notice.isVisible()).toBe(true);
    expect(await notice.locator("li").allTextContents()).toEqual([
      "Calls offered (rate=99999): above the most it goes to, so 1000 calls/s is used.",
      "Simulated time (duration=30): below the least it goes to, so 60 s is used.",
      "Backend latency (latency=abc): not a number, so the default, 20 ms, is used.",
      "nonsense=1: Breaker under an outage has no such knob, so it is ignored.",
    ]);
    // The controls and the URL hold what is used; a value used as written stays.
    expect(await page.locator("#knob-rate-value").textContent()).toBe("1000 calls/s");
    expect(await page.locator("#knob-latency-value").textContent()).toBe("20 ms");
    expect(await page.evaluate(() => location.hash)).toBe("#breaker?rate=1000&duration=60&brown=3");
    await page.click("#notice-close");
    expect(await notice.isVisible()).toBe(false);
    // A scenario the page does not have: the first tab, and a notice saying so.
    await page.evaluate(() => (location.hash = "#nope"));
    await page.waitForFunction(() => location.hash === "#breaker");
    expect(await notice.locator("li").allTextContents()).toEqual([
      "#nope: there is no such scenario, so Breaker under an outage is shown.",
    ]);
    expect(await page.locator("nav a[aria-current=page]").textContent()).toBe("Breaker");
    // Choosing a tab is a link the page can read whole: the notice goes.
    await page.click('nav a[data-scenario="herd"]');
    await page.waitForFunction(() => location.hash === "#herd");
    expect(await notice.isVisible()).toBe(false);
    await page.close();
    expect(errors).toEqual([]);
  });

  it("disables a knob the run does not read, saying when it does, and enables it when it does", async () => {
    const page = await open("#sweep?points=3");
    const clientsMax = page.locator(knobSelector("clientsMax"));
    const failureMax = page.locator(knobSelector("failureMax"));
    expect([await clientsMax.isDisabled(), await failureMax.isDisabled()]).toEqual([true, false]);
    expect(await page.locator(".knob.unused small.when").allInnerTexts()).toEqual([
      "Used only when Knob swept is client count.",
      "Used only when Knob swept is client count.",
    ]);
    await page.locator(knobSelector("knob")).selectOption("clients");
    expect([await clientsMax.isDisabled(), await failureMax.isDisabled()]).toEqual([false, true]);
    expect(await page.locator(".knob.unused small.when").allInnerTexts()).toEqual([
      "Used only when Knob swept is backend failure rate.",
      "Used only when Knob swept is backend failure rate.",
    ]);
    await page.close();
    expect(errors).toEqual([]);
  });

  it("keeps the tab row where it is whichever tab is selected, wide or narrow", { timeout: 60_000 }, async () => {
    // The runs each click starts are not waited for: the tab row is laid out as the hash changes.
    const page = await open("#burst");
    for (const width of [1280, 700]) {
      await page.setViewportSize({ width, height: 900 });
      const boxes: string[] = [];
      for (const s of scenarios) {
        await page.click(`nav a[data-scenario="${s.id}"]`);
        await page.waitForSelector(`nav a[data-scenario="${s.id}"][aria-current=page]`);
        const tabs = await page.$$eval("nav a", (as) =>
          as.map((a) => {
            const r = a.getBoundingClientRect();
            return [r.x, r.y, r.width, r.height].map((v) => v.toFixed(1)).join(",");
          }),
        );
        boxes.push(tabs.join(" "));
      }
      expect(new Set(boxes).size, `at ${width} px: ${boxes.join("\n")}`).toBe(1);
      // At the test's usual width the tabs fit on one row.
      if (width === 1280) expect(new Set(boxes[0]?.split(" ").map((b) => b.split(",")[1])).size).toBe(1);
    }
    await page.close();
    expect(errors).toEqual([]);
  });

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

  it.each(scenarios.map((s) => [s.id] as const))(
    "%s: opening the URL of a moved run shows the same figures",
    { timeout: 60_000 },
    async (id) => {
      const run = moved[id];
      if (run === undefined) throw new Error(`the knob test of ${id} did not run`);
      const page = await open(run.hash);
      expect(await figures(page)).toEqual(run.figures);
      const move = moves[id];
      expect(await page.locator(knobSelector(move?.key ?? "")).inputValue()).toBe(
        new URLSearchParams(run.hash.split("?")[1]).get(move?.key ?? ""),
      );
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
});
