// What a situation's figures say, worked out the one way the scoreboard, the READMEs and the
// tests share: the range over seeds and settings, tideward's best configuration and the best
// baseline (by the median over every run), and how often one beats the other run for run, two
// figures that print alike counting as a tie.
import type { ContenderData, SituationData } from "./data.ts";

/** What follows a number of the figure's unit: " s", " %", "×", nothing for a count. */
function suffix(unit: string): string {
  return unit === "" ? "" : unit === "×" ? "×" : ` ${unit}`;
}

/** A figure as printed: its digits and its unit; `null` reads as the figure's `none` ("never"). */
export function printed(s: Pick<SituationData, "figure">, v: number | null, unit = true): string {
  if (v === null) return s.figure.none ?? "none";
  return `${v.toFixed(s.figure.digits)}${unit ? suffix(s.figure.unit) : ""}`;
}

/** −1 when `a` is better than `b`, 1 when worse, 0 when they print alike (a tie); `null` is worse than any figure. */
export function compare(s: Pick<SituationData, "figure">, a: number | null, b: number | null): -1 | 0 | 1 {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  const [x, y] = [Number(a.toFixed(s.figure.digits)), Number(b.toFixed(s.figure.digits))];
  if (x === y) return 0;
  const better = s.figure.better === "lower" ? x < y : x > y;
  return better ? -1 : 1;
}

/** Every run's figure of a contender, in one list: settings `from` to `to` (all by default), every seed. */
export function all(c: ContenderData, from = 0, to = c.values.length): (number | null)[] {
  return c.values.slice(from, to).flat();
}

/** A contender's figures at the defaults alone (every seed). */
export const atDefaults = (c: ContenderData): (number | null)[] => all(c, 0, 1);

/** The least and the most of some figures as printed ("0–6 s", "3.2–4.0 %"), with how many runs had none ("never in 3 of 70"). */
export function range(s: Pick<SituationData, "figure">, xs: readonly (number | null)[]): string {
  const values = xs.filter((x): x is number => x !== null);
  const nones = xs.length - values.length;
  if (values.length === 0) return `${printed(s, null)} (all ${xs.length})`;
  const lo = printed(s, Math.min(...values), false);
  const hi = printed(s, Math.max(...values), false);
  const unit = suffix(s.figure.unit);
  const span = lo === hi ? `${lo}${unit}` : `${lo}–${hi}${unit}`;
  return nones === 0 ? span : `${span}, ${printed(s, null)} in ${nones} of ${xs.length}`;
}

/** The median of some figures, a `null` counted as the worst. */
function median(s: Pick<SituationData, "figure">, xs: readonly (number | null)[]): number {
  const worst = s.figure.better === "lower" ? Infinity : -Infinity;
  const sorted = xs.map((x) => x ?? worst).sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 === 1
    ? (sorted[Math.floor(mid)] ?? worst)
    : ((sorted[mid - 1] ?? worst) + (sorted[mid] ?? worst)) / 2;
}

/** The contender of `side` with the best median over every run (the first listed of those that tie). */
export function best(s: SituationData, side: ContenderData["side"]): ContenderData | undefined {
  let found: ContenderData | undefined;
  let score = 0;
  for (const c of s.contenders.filter((x) => x.side === side)) {
    const m = median(s, all(c));
    const better = s.figure.better === "lower" ? m < score : m > score;
    if (found === undefined || better) {
      found = c;
      score = m;
    }
  }
  return found;
}

/** How `a` fares against `b` run for run (same setting, same seed). */
export interface Tally {
  readonly ahead: number;
  readonly tied: number;
  readonly behind: number;
  readonly runs: number;
}

export function tally(s: SituationData, a: ContenderData, b: ContenderData): Tally {
  const xs = all(a);
  const ys = all(b);
  let ahead = 0;
  let tied = 0;
  let behind = 0;
  xs.forEach((x, i) => {
    const c = compare(s, x, ys[i] ?? null);
    if (c < 0) ahead++;
    else if (c > 0) behind++;
    else tied++;
  });
  return { ahead, tied, behind, runs: xs.length };
}

/**
 * The word for a tally: ahead (or behind) in every run it was not tied, tied in all, mostly ahead
 * (or behind) when one side won at least three times as many runs as the other, else mixed.
 */
export type Verdict = "ahead" | "behind" | "tie" | "mostly ahead" | "mostly behind" | "mixed";

export function verdictOf(t: Tally): Verdict {
  if (t.ahead === 0 && t.behind === 0) return "tie";
  if (t.behind === 0) return "ahead";
  if (t.ahead === 0) return "behind";
  if (t.ahead >= 3 * t.behind) return "mostly ahead";
  if (t.behind >= 3 * t.ahead) return "mostly behind";
  return "mixed";
}

/** A tally in words: "ahead in 40, tied in 20, behind in 10 of 70 runs". */
export function tallyText(t: Tally): string {
  const parts = [
    t.ahead > 0 ? `ahead in ${t.ahead}` : "",
    t.tied > 0 ? `tied in ${t.tied}` : "",
    t.behind > 0 ? `behind in ${t.behind}` : "",
  ].filter((x) => x !== "");
  const said = parts.length === 1 ? parts[0]?.replace(/ in \d+$/, " in all") : parts.join(", ");
  return `${said ?? ""} ${parts.length === 1 ? `${t.runs} runs` : `of ${t.runs} runs`}`;
}
