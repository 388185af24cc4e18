// uPlot behind one function: draw a Chart into a container, or redraw it in place when only
// the numbers changed (a knob moved), which keeps the redraw cheap and the legend where it was.
// Two choices serve every chart: the legend names the series until the cursor is on the plot,
// then shows the values under it; and the reference lines (what is offered, a capacity, a
// threshold: a Series with `dash` and no `side`) are drawn last, as dots, over the lines that
// may run along them.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { palette } from "./colours.ts";
import { lineStyle } from "./model.ts";
import type { Chart } from "./model.ts";

interface Drawn {
  plot: uPlot;
  /** What the chart's structure was when it was built: another structure rebuilds it. */
  shape: string;
  /** Each series' label and colour, for the PNG's legend. */
  legend: { label: string; color: string }[];
}

const drawn = new WeakMap<HTMLElement, Drawn>();

function shapeOf(chart: Chart): string {
  return JSON.stringify([
    chart.kind,
    chart.x.label,
    chart.x.min,
    chart.x.max,
    chart.y,
    chart.series.map((s) => [s.label, s.side, s.color, s.dash]),
  ]);
}

const isReference = (s: Chart["series"][number]): boolean => lineStyle(s) === "dotted";

/** The series in the order they are drawn: the policies' lines first, the reference lines over them. */
function drawOrder(chart: Chart): Chart["series"] {
  return [...chart.series.filter((s) => !isReference(s)), ...chart.series.filter(isReference)];
}

function data(chart: Chart): uPlot.AlignedData {
  return [chart.x.values.slice(), ...drawOrder(chart).map((s) => s.values.slice())] as uPlot.AlignedData;
}

/** A value under the cursor, to a precision that suits its size. */
function legendValue(v: number | null): string {
  if (v === null || !Number.isFinite(v)) return "—";
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return v.toLocaleString("en-GB", { maximumFractionDigits: digits });
}

/** Marks the plot idle (no cursor on it), which the page's style turns into a legend of names alone. */
function markIdle(u: uPlot): void {
  u.root.classList.toggle("idle", u.cursor.idx == null);
}

/** Writes each axis's drawn ends on the plot's container (`data-x-min`, `data-x-max`, `data-y-min`, `data-y-max`), for a reader of the page's markup and its test. */
function markScale(u: uPlot, key: string): void {
  const host = u.root.parentElement;
  const { min, max } = u.scales[key] ?? {};
  if ((key === "x" || key === "y") && host !== null && min != null && max != null) {
    host.dataset[`${key}Min`] = String(min);
    host.dataset[`${key}Max`] = String(max);
  }
}

/** A series' colour: its own, or the palette's by its place in the chart (so drawing order does not change it). */
function colorOf(chart: Chart, s: Chart["series"][number]): string {
  return s.color ?? palette[chart.series.indexOf(s) % palette.length] ?? "#374151";
}

function width(host: HTMLElement): number {
  return Math.max(320, Math.floor(host.clientWidth || 720));
}

/** A series' dash pattern in canvas pixels: uPlot scales a line's width to the screen's pixel ratio but not its dashes. */
function dashOf(s: Chart["series"][number]): number[] | undefined {
  const style = lineStyle(s);
  const css = style === "dashed" ? [6, 4] : style === "dotted" ? [0, 8] : style === "short" ? [2, 3] : undefined;
  const ratio = typeof window === "undefined" ? 1 : window.devicePixelRatio || 1;
  return css?.map((d) => d * ratio);
}

/** The y axis's least width, CSS px: the tick labels of a rate or a share fit it. */
const Y_AXIS = 60;

/**
 * The y axis's width for its widest tick label (a budget's 420,000 tokens is wider than a rate's
 * 30), so that the axis's label beside them never covers one.
 */
function ySize(u: uPlot, values: readonly string[] | null, axisIdx: number, cycle: number): number {
  const axis = u.axes[axisIdx] as (uPlot.Axis & { _size?: number; font?: unknown }) | undefined;
  // uPlot sizes the axes again until they settle: past the second pass, keep the width it has.
  if (axis === undefined || (cycle > 1 && axis._size !== undefined)) return axis?._size ?? Y_AXIS;
  const widest = (values ?? []).reduce((a, v) => (v.length > a.length ? v : a), "");
  // Once drawn, uPlot holds an axis's font as [css, size].
  const font: unknown = Array.isArray(axis.font) ? (axis.font as unknown[])[0] : axis.font;
  if (typeof font === "string") u.ctx.font = font;
  const text = u.ctx.measureText(widest).width / (window.devicePixelRatio || 1);
  const ticks = (axis.ticks?.size ?? 10) + (axis.gap ?? 5);
  return Math.max(Y_AXIS, Math.ceil(text + ticks + 4));
}

function options(chart: Chart, w: number): uPlot.Options {
  const bars = chart.kind === "bars" ? uPlot.paths.bars?.({ size: [0.9, 40], align: 0 }) : undefined;
  return {
    width: w,
    height: 260,
    scales: {
      // The axis covers the run, its last bucket included, not only the buckets' starts.
      x: { time: false, range: (_u, lo, hi) => [chart.x.min ?? lo, chart.x.max ?? hi] },
      y:
        chart.y.log === true
          ? { distr: 3, log: 10 }
          : { range: (_u, lo, hi) => [chart.y.min ?? Math.min(0, lo), chart.y.max ?? (hi > 0 ? hi * 1.05 : 1)] },
    },
    axes: [
      { label: chart.x.label, stroke: "#374151", grid: { stroke: "#e5e7eb" } },
      { label: chart.y.label, stroke: "#374151", grid: { stroke: "#e5e7eb" }, size: ySize },
    ],
    // The legend's marker is drawn as its line is (CSS border styles: a short dash reads as dotted).
    legend: {
      live: true,
      markers: {
        dash: (_u: uPlot, i: number) => {
          const s = drawOrder(chart)[i - 1];
          const style = s === undefined ? "solid" : lineStyle(s);
          return style === "short" ? "dotted" : style;
        },
      },
    },
    cursor: { drag: { x: false, y: false } },
    hooks: { setLegend: [markIdle], setScale: [markScale] },
    series: [
      { label: chart.x.label, value: (_u, v: number | null) => legendValue(v) },
      ...drawOrder(chart).map((s) => ({
        label: s.label,
        value: (_u: uPlot, v: number | null) => legendValue(v),
        stroke: colorOf(chart, s),
        // A reference line is a row of round dots, so that over a line it runs along both show.
        width: isReference(s) ? 3.5 : 2,
        cap: isReference(s) ? ("round" as const) : undefined,
        dash: dashOf(s),
        fill: bars === undefined ? undefined : `${colorOf(chart, s)}66`,
        paths: bars,
        points: { show: false },
        spanGaps: false,
      })),
    ],
  };
}

/** Draws `chart` into `host`, reusing the plot already there when the chart's structure is the same. */
export function draw(host: HTMLElement, chart: Chart): uPlot {
  const old = drawn.get(host);
  const shape = shapeOf(chart);
  if (old !== undefined && old.shape === shape) {
    old.plot.setData(data(chart));
    return old.plot;
  }
  old?.plot.destroy();
  host.replaceChildren();
  // The axes' labels, which uPlot draws on its canvas, in the markup too.
  host.dataset.xLabel = chart.x.label;
  host.dataset.yLabel = chart.y.label;
  const plot = new uPlot(options(chart, width(host)), data(chart), host);
  markIdle(plot);
  drawn.set(host, { plot, shape, legend: drawOrder(chart).map((s) => ({ label: s.label, color: colorOf(chart, s) })) });
  return plot;
}

/** Fits every plot to its container's width (after the window is resized). */
export function refit(hosts: Iterable<HTMLElement>): void {
  for (const host of hosts) {
    const d = drawn.get(host);
    if (d !== undefined) d.plot.setSize({ width: width(host), height: 260 });
  }
}

/** The plots' canvases stacked into one PNG, each under its title and over its legend, on a white ground. */
export function toPng(charts: readonly { title: string; host: HTMLElement }[], heading: string): Promise<Blob | null> {
  const items = charts.flatMap((c) => {
    const d = drawn.get(c.host);
    return d === undefined ? [] : [{ title: c.title, plot: d.plot, legend: d.legend }];
  });
  const ratio = window.devicePixelRatio || 1;
  const gap = Math.round(28 * ratio);
  const legend = Math.round(22 * ratio);
  const canvases = items.map((i) => i.plot.ctx.canvas);
  const w = Math.max(...canvases.map((c) => c.width), 1);
  const h = canvases.reduce((sum, c) => sum + gap + c.height + legend, gap);
  const out = document.createElement("canvas");
  out.width = w;
  out.height = h;
  const ctx = out.getContext("2d");
  if (ctx === null) return Promise.resolve(null);
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, w, h);
  ctx.fillStyle = "#111827";
  ctx.font = `${Math.round(15 * ratio)}px system-ui, sans-serif`;
  ctx.fillText(heading, 8 * ratio, 19 * ratio);
  let y = gap;
  items.forEach((item, i) => {
    const c = canvases[i];
    ctx.fillStyle = "#111827";
    ctx.font = `${Math.round(13 * ratio)}px system-ui, sans-serif`;
    ctx.fillText(item.title, 8 * ratio, y + 16 * ratio);
    y += gap;
    ctx.drawImage(c, 0, y);
    y += c.height;
    // The legend, as the page shows it under the plot: a swatch and a label per series.
    let x = 8 * ratio;
    ctx.font = `${Math.round(12 * ratio)}px system-ui, sans-serif`;
    for (const { label, color } of item.legend) {
      ctx.fillStyle = color;
      ctx.fillRect(x, y + 6 * ratio, 12 * ratio, 4 * ratio);
      ctx.fillStyle = "#111827";
      ctx.fillText(label, x + 16 * ratio, y + 12 * ratio);
      x += 16 * ratio + ctx.measureText(label).width + 14 * ratio;
    }
    y += legend;
  });
  return new Promise((resolve) => out.toBlob(resolve, "image/png"));
}
