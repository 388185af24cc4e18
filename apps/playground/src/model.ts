// What a scenario is to the page: knobs going in, charts, figures and tables coming out. Plain
// data throughout, so an outcome crosses from the worker to the page by structured clone and the
// same modules run under Node.js in the tests.

/** A knob's value: a number, or for a select the option's value. */
export type Value = number | string;

/** The knobs' values by key. */
export type Params = Readonly<Record<string, Value>>;

interface KnobBase {
  /** The name in the URL and in `Params`, short and stable. */
  readonly key: string;
  /** What the control's label says. */
  readonly label: string;
  /** The fieldset it sits in (`"traffic"`, `"tideward breaker"`, `"classic breaker"` …). */
  readonly group: string;
  /** A sentence on what it does, shown as the control's description. */
  readonly help?: string;
  /** The run reads it only when the select knob `key` has the value `is`; otherwise its control is disabled, saying so. */
  readonly when?: { readonly key: string; readonly is: string };
}

/** A number chosen on a slider between `min` and `max` in steps of `step`. */
export interface RangeKnob extends KnobBase {
  readonly kind: "range";
  readonly min: number;
  readonly max: number;
  readonly step: number;
  readonly value: number;
  /** The unit shown after the value (`"ms"`, `"calls/s"`, `"%"`), empty for none. */
  readonly unit: string;
}

/** A number typed in a box, held to `[min, max]` and rounded to `step`. */
export interface NumberKnob extends KnobBase {
  readonly kind: "number";
  readonly min: number;
  readonly max: number;
  readonly step: number;
  readonly value: number;
  readonly unit: string;
}

/** One of a few named choices. */
export interface SelectKnob extends KnobBase {
  readonly kind: "select";
  readonly options: readonly { readonly value: string; readonly label: string }[];
  readonly value: string;
}

export type Knob = RangeKnob | NumberKnob | SelectKnob;

/** One line (or set of bars) on a chart. */
export interface Series {
  readonly label: string;
  /** Values at the chart's x positions; `null` where there is nothing to plot. */
  readonly values: readonly (number | null)[];
  /** Which side of a comparison it belongs to: drawn solid for tideward, dashed for a baseline. */
  readonly side?: "tideward" | "baseline";
  /** A CSS colour; the page picks one when left out. */
  readonly color?: string;
  /**
   * Drawn dotted. Without a `side`, it is a reference line (what is offered, a capacity, a
   * threshold), drawn over the policies' lines so that one running along it does not hide it.
   */
  readonly dash?: boolean;
}

/** How a series is drawn: a tideward line solid, a baseline's dashed, a reference (`dash` and no side) dotted, another of tideward's (`dash` with a side) in short dashes. */
export type LineStyle = "solid" | "dashed" | "dotted" | "short";

export function lineStyle(s: Series): LineStyle {
  if (s.side === "baseline") return "dashed";
  if (s.dash === true) return s.side === undefined ? "dotted" : "short";
  return "solid";
}

/** A chart: one x axis, a few series. */
export interface Chart {
  readonly id: string;
  readonly title: string;
  /** The x axis: its label, the values the series are at, and the ends it spans when wider than them (a run's last bucket). */
  readonly x: {
    readonly label: string;
    readonly values: readonly number[];
    readonly min?: number;
    readonly max?: number;
  };
  /** The y axis: its label, fixed ends if any, and whether it is logarithmic (for latencies). */
  readonly y: { readonly label: string; readonly min?: number; readonly max?: number; readonly log?: boolean };
  readonly series: readonly Series[];
  /** Lines by default; bars for a histogram. */
  readonly kind?: "line" | "bars";
}

/** A number the page shows, labelled, and the expression that replays it in a test. */
export interface Figure {
  /** Stable within a scenario: the browser test and the CSV refer to it. */
  readonly id: string;
  readonly label: string;
  readonly value: number;
  /** The unit after the number (`"calls"`, `"ms"`, `"%"`), empty for a plain count. */
  readonly unit: string;
  /** Decimal places shown (and asserted by "copy as test"). */
  readonly digits: number;
  /** A TypeScript expression over the replay's variables that evaluates to `value`. */
  readonly expr: string;
}

/** A labelled table of figures, as the seed prints its burst table. */
export interface Table {
  readonly caption: string;
  /** Shown folded, its caption the summary to open it by: for a long table a reader rarely needs. */
  readonly folded?: boolean;
  readonly columns: readonly string[];
  /** Each row: a label, then one figure per remaining column. */
  readonly rows: readonly { readonly label: string; readonly cells: readonly Figure[] }[];
}

/**
 * How "copy as test" replays the run: the statements that define the variables the figures'
 * expressions read. The imports are worked out from the names they use.
 */
export interface Replay {
  /** Statements, in order, that rebuild the run. */
  readonly body: readonly string[];
  /** Assertions beyond the figures' (a table's text, a report), each a whole `expect(…)` statement. */
  readonly asserts?: readonly string[];
}

/** A table of text as a run printed it (the simulator's tables): a heading row, then rows whose first cell names them. */
export interface TextTable {
  readonly caption: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** What a scenario's run gives the page. */
export interface Outcome {
  readonly charts: readonly Chart[];
  /** The headline figures, in the order shown. */
  readonly figures: readonly Figure[];
  readonly tables: readonly Table[];
  /** Tables of text, shown after the tables of figures. */
  readonly texts?: readonly TextTable[];
  /** A report as the run printed it (columns aligned by spaces): its tables are shown as tables, its prose as `prose`; "copy as test" asserts it whole. */
  readonly report?: string;
  /** The report's sentences, paragraph by paragraph: shown after the tables they speak of. */
  readonly prose?: readonly string[];
  /** A sentence or two saying what the run shows, in terms of its figures. */
  readonly notes: readonly string[];
  readonly replay: Replay;
  /**
   * What was simulated, for the status line: how many runs, how long each (ms), and the calls
   * offered in all; for a finite job (every call at once, run until done) `ms` is 0 and `done`
   * is when the slowest run's last call ended (ms).
   */
  readonly simulated: { readonly runs: number; readonly ms: number; readonly calls: number; readonly done?: number };
}

/**
 * A named experiment and its knobs: what the page needs to draw its controls. The run lives
 * apart (see `runs.ts`), in the worker's bundle, so the page's own script stays small.
 */
export interface Scenario {
  readonly id: string;
  /** The tab's name: a word or two, so the tab row stays one line. */
  readonly tab: string;
  readonly title: string;
  /** A sentence: what is compared with what. */
  readonly blurb: string;
  readonly knobs: readonly Knob[];
}

/** How far a run has got: calls offered so far, and the calls it was estimated to offer (`null` without an estimate). */
export interface RunProgress {
  readonly done: number;
  readonly total: number | null;
}

/** Runs a scenario with the knobs' values: the worker calls it (told how far it has got, where the run can say), and so do the tests. */
export type Run = (params: Params, onProgress?: (progress: RunProgress) => void) => Outcome;

/** Every figure of an outcome, headline and table cells, in display order. */
export function allFigures(outcome: Outcome): Figure[] {
  return [...outcome.figures, ...outcome.tables.flatMap((t) => t.rows.flatMap((r) => r.cells))];
}

/** A figure's value as the page prints it. */
export function formatValue(f: Pick<Figure, "value" | "digits">): string {
  return Number.isFinite(f.value) ? f.value.toFixed(f.digits) : String(f.value);
}
