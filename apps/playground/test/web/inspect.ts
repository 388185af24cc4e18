// What the page tests read off the rendered page, apart from what they assert: which blocks are
// cut at their right edge, how each chart's legend draws its series, and the colours and dashes
// two series of one chart must not share.
import type { Page } from "playwright-core";
import { DISTINCT, difference } from "../../src/colours";

/** The blocks a reader reads whole: text, tables and their parts, captions, labels, the knobs' rows. */
const BLOCKS = [
  "p",
  "li",
  "h1",
  "h2",
  "summary",
  "label",
  "small",
  "figcaption",
  "pre",
  "table",
  "caption",
  "th",
  "td",
  ".scroll",
  ".knob",
  "fieldset",
  "form",
  "#results",
  "#tables",
  "#figures",
  "#notes",
  "#tuner",
  "nav",
].join(", ");

/**
 * Every visible block that is wider inside than its box (`scrollWidth > clientWidth`: its text or
 * a table cut at the right edge, or scrolled sideways), every drop-down whose chosen option's text
 * is wider than the box shows, and the page itself when it scrolls sideways; each described for a
 * failure message. Empty when nothing is cut.
 */
export async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate((selector) => {
    const out: string[] = [];
    const name = (e: Element): string =>
      `${e.tagName.toLowerCase()}${e.id === "" ? "" : `#${e.id}`}${[...e.classList].map((c) => `.${c}`).join("")} "${(e.textContent ?? "").trim().slice(0, 60)}"`;
    const visible = (e: HTMLElement): boolean =>
      e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
    for (const e of document.querySelectorAll<HTMLElement>(selector)) {
      if (!visible(e) || e.closest(".u-legend, .uplot, svg") !== null) continue;
      if (e.scrollWidth > e.clientWidth + 1) out.push(`${name(e)}: ${e.scrollWidth} px in a box of ${e.clientWidth}`);
    }
    const ctx = document.createElement("canvas").getContext("2d");
    for (const s of document.querySelectorAll<HTMLSelectElement>("select")) {
      if (!visible(s) || ctx === null) continue;
      const style = getComputedStyle(s);
      ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const text = s.selectedOptions[0]?.text ?? "";
      // The box shows the text between its paddings, less the arrow's room (about 20 px).
      const room = s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
      const wide = ctx.measureText(text).width;
      if (wide > room + 1)
        out.push(`select#${s.id} "${text}": ${Math.ceil(wide)} px of text in ${Math.floor(room)} px`);
    }
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth + 1)
      out.push(`the page: ${root.scrollWidth} px wide in a window of ${root.clientWidth}`);
    return out;
  }, BLOCKS);
}

/** How a chart's legend draws one series: its label, its marker's colour (as `#rrggbb`) and line style. */
export interface LegendEntry {
  readonly label: string;
  readonly colour: string;
  readonly dash: string;
}

/** Every chart's legend as drawn, by chart id. */
export async function legendStyles(page: Page): Promise<{ chart: string; series: LegendEntry[] }[]> {
  return page.$$eval(".chart[data-chart-figure]", (charts) =>
    charts.map((c) => ({
      chart: c.getAttribute("data-chart-figure") ?? "",
      // The first row is the x axis.
      series: [...c.querySelectorAll<HTMLElement>(".u-legend .u-series")].slice(1).map((row) => {
        const marker = row.querySelector<HTMLElement>(".u-marker");
        const style = marker === null ? undefined : getComputedStyle(marker);
        const rgb = (style?.borderTopColor ?? "").match(/\d+/g)?.slice(0, 3).map(Number) ?? [0, 0, 0];
        return {
          label: row.querySelector(".u-label")?.textContent ?? "",
          colour: `#${rgb.map((v) => v.toString(16).padStart(2, "0")).join("")}`,
          dash: style?.borderTopStyle ?? "",
        };
      }),
    })),
  );
}

/** Pairs of series one chart draws alike: colours less than {@link DISTINCT} apart (CIEDE2000), or the same colour and dash. */
export function alike(series: readonly LegendEntry[]): string[] {
  const out: string[] = [];
  series.forEach((a, i) => {
    for (const b of series.slice(i + 1)) {
      const d = difference(a.colour, b.colour);
      if (d < DISTINCT)
        out.push(
          `"${a.label}" (${a.colour}, ${a.dash}) and "${b.label}" (${b.colour}, ${b.dash}): ${d.toFixed(1)} apart`,
        );
    }
  });
  return out;
}
