// The first screen's answer to "why tideward, and when not": for each situation of the catalogue
// the claims cover, the figure users judge it by, tideward's best configuration against the best
// baseline, each as its range over seeds and nearby settings, how the two fare run for run, and
// why, linking to the scenario. Losses are rows like the wins. The figures are claims.json's,
// measured by `pnpm claims`; the page fetches the file (data, not script) and works them out with
// the same functions the READMEs are written with.
import claimsUrl from "./claims/claims.json?url";
import type { ClaimsData, SituationData } from "./claims/data.ts";
import { defaultToo, method } from "./claims/markdown.ts";
import { all, atDefaults, best, range, tally, tallyText, verdictOf } from "./claims/stats.ts";
import { el } from "./dom.ts";

/** The claims, as `pnpm claims` last wrote them. */
export async function loadClaims(): Promise<ClaimsData> {
  const res = await fetch(claimsUrl);
  if (!res.ok) throw new Error(`the scoreboard's figures did not load (${res.status})`);
  return (await res.json()) as ClaimsData;
}

/** The link to a situation's scenario: its own parameters, but the ones that only thin a run for the claims (seeds to average over). */
export function linkOf(s: SituationData): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(s.settings[0]?.params ?? {}))
    if (k !== "seeds" && k !== "spreadSeeds") q.set(k, String(v));
  const query = q.toString();
  return `#${s.scenario}${query === "" ? "" : `?${query}`}`;
}

/** `text` with backticks turned into code. */
function inline(text: string): (Node | string)[] {
  return text.split(/`([^`]*)`/).map((part, i) => (i % 2 === 1 ? el("code", {}, part) : part));
}

/** A contender's cell: its name, its range over every run, and at the defaults; for tideward's best, what the guard ships when that is another. */
function side(s: SituationData, c: SituationData["contenders"][number]): HTMLElement {
  const shipped = c.side === "tideward" ? defaultToo(s, c) : "";
  return el(
    "td",
    { "data-contender": c.id },
    el("span", { class: "who" }, c.label),
    " ",
    el("span", { class: "range", "data-range": "all" }, range(s, all(c))),
    " ",
    el("small", { "data-range": "defaults" }, `(${range(s, atDefaults(c))} at the defaults)`),
    ...(shipped === "" ? [] : [el("small", { class: "shipped" }, shipped.replace(/^; /, " "))]),
  );
}

/** The scoreboard's rows: the situations it shows that one side can win. */
export function rowsOf(d: ClaimsData): SituationData[] {
  return d.situations.filter((s) => s.scoreboard && s.ranked);
}

/** Draws the scoreboard into `host`. */
export function renderScoreboard(host: HTMLElement, d: ClaimsData): void {
  const rows = rowsOf(d).flatMap((s) => {
    const ours = best(s, "tideward");
    const theirs = best(s, "baseline");
    if (ours === undefined || theirs === undefined) return [];
    const t = tally(s, ours, theirs);
    const verdict = verdictOf(t);
    return [
      el(
        "tr",
        { "data-situation": s.id, "data-verdict": verdict },
        el(
          "th",
          { scope: "row" },
          el("a", { href: linkOf(s) }, s.title),
          el("small", { class: "judged" }, `${s.figure.label}, ${s.figure.better} is better`),
        ),
        side(s, ours),
        side(s, theirs),
        el(
          "td",
          { class: "verdict" },
          el("span", { class: `badge ${verdict.replace("mostly ", "")}` }, verdict === "tie" ? "tied" : verdict),
          " ",
          tallyText(t),
        ),
        el("td", {}, s.reason),
      ),
    ];
  });
  host.replaceChildren(
    el("p", { class: "method" }, ...inline(method(d))),
    el(
      "div",
      { class: "scroll" },
      el(
        "table",
        { class: "figures scoreboard" },
        el("caption", {}, "tideward's best configuration against the best baseline, situation by situation"),
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            ...[
              "situation, and the figure it is judged by",
              "tideward's best",
              "the best baseline",
              "run for run",
              "why",
            ].map((c) => el("th", { scope: "col" }, c)),
          ),
        ),
        el("tbody", {}, ...rows),
      ),
    ),
  );
}
