// The claims as Markdown, for the READMEs: `pnpm claims` writes these between the READMEs'
// markers, and a test checks that what is there is what claims.json gives.
import type { ClaimsData, SituationData } from "./data.ts";
import { atDefaults, all, best, range, tally, tallyText, verdictOf } from "./stats.ts";

/** The seeds as a span: "1–10". */
function seedSpan(seeds: readonly number[]): string {
  const lo = Math.min(...seeds);
  const hi = Math.max(...seeds);
  return lo === hi ? String(lo) : `${lo}–${hi}`;
}

/** The method, in a sentence. */
export function method(d: ClaimsData): string {
  const pct = d.factors.map((f) => Math.round(Math.abs(f - 1) * 100));
  return `Computed by \`pnpm claims\` on ${d.computed}: every situation on seeds ${seedSpan(d.seeds)}, at the scenario's defaults and with each of its main knobs ${[...new Set(pct)].join(" and ")} % below and above its default, one knob at a time. A range is the least to the most of those runs; two figures that print alike are a tie.`;
}

/** A situation's parameters beyond the scenario's defaults, as a reader would pass them. */
function own(s: SituationData): string {
  const p = s.settings[0]?.params ?? {};
  const text = Object.entries(p)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join(", ");
  return text === "" ? `\`${s.scenario}\`` : `\`${s.scenario}\`, \`{ ${text} }\``;
}

/** Where tideward's best is not what the guard ships (the first run), what the default gave: "; the guard's default: 5.1–6.3 s". */
export function defaultToo(s: SituationData, ours: SituationData["contenders"][number]): string {
  const shipped = s.contenders[0];
  return shipped === undefined || shipped === ours || shipped.side !== "tideward"
    ? ""
    : `; ${shipped.label}: ${range(s, all(shipped))}`;
}

/** The sentence comparing tideward's best configuration with the best baseline. */
export function comparison(s: SituationData): string {
  const ours = best(s, "tideward");
  const theirs = best(s, "baseline");
  if (!s.ranked || ours === undefined || theirs === undefined) return "";
  const t = tally(s, ours, theirs);
  const verdict = verdictOf(t);
  const word = verdict === "tie" ? "tied" : verdict === "mixed" ? "neither ahead nor behind throughout" : verdict;
  return `tideward's best here, ${ours.label}, against the best baseline, ${theirs.label}: ${word} (${tallyText(t)}, run for run).`;
}

/** One situation: what was measured and how, a table of every run's range, and the comparison. */
export function situationBlock(d: ClaimsData, s: SituationData): string {
  const runs = s.settings.length * d.seeds.length;
  const rows = s.contenders.map(
    (c) =>
      `| ${c.label}${c.side === "baseline" ? "" : ` (${c.side})`} | ${range(s, atDefaults(c))} | ${range(s, all(c))} |`,
  );
  return [
    `**${s.title}** (${own(s)}): ${s.figure.label}${s.ranked ? `, ${s.figure.better} is better` : ""}. At the defaults over ${d.seeds.length} seeds; then over ${runs} runs, the ${s.moved.join(", ")} also moved by 20 % either way.`,
    "",
    `| run | at the defaults | with the knobs moved too |`,
    `| --- | --- | --- |`,
    ...rows,
    "",
    [comparison(s), s.reason].filter((x) => x !== "").join(" "),
  ].join("\n");
}

/** tideward's best against the best baseline, in a clause: "against charge the bound: tied (tied in all 70 runs)." */
function versus(s: SituationData): string {
  const ours = best(s, "tideward");
  const theirs = best(s, "baseline");
  if (ours === undefined || theirs === undefined) return "";
  const t = tally(s, ours, theirs);
  return `${ours.label} against ${theirs.label}, run for run: ${verdictOf(t)} (${tallyText(t)}).`;
}

/**
 * Situations of one scenario that share their runs, side by side: a row a run, a column a
 * situation's figure, each cell its range over every run; then how tideward's best fared against
 * the best baseline on each, and why.
 */
export function sideBySide(d: ClaimsData, ids: readonly string[]): string {
  const ss = ids.map((id) => {
    const s = d.situations.find((x) => x.id === id);
    if (s === undefined) throw new Error(`claims.json has no situation ${id}`);
    return s;
  });
  const [first] = ss;
  if (first === undefined) throw new Error("sideBySide: no situations");
  const cell = (s: SituationData, id: string): string => {
    const c = s.contenders.find((x) => x.id === id);
    return c === undefined ? "–" : range(s, all(c));
  };
  const runs = first.settings.length * d.seeds.length;
  return [
    `\`${first.scenario}\`: ${runs} runs of each, on seeds ${seedSpan(d.seeds)} at the scenario's defaults and with each of the ${first.moved.join(", ")} 20 % below and above (\`pnpm claims\`, ${d.computed}). A range is the least to the most of those runs; figures that print alike are a tie.`,
    "",
    `| | ${ss.map((s) => `${s.figure.label}${s.ranked ? ` (${s.figure.better} is better)` : ""}`).join(" | ")} |`,
    `| --- | ${ss.map(() => "---").join(" | ")} |`,
    ...first.contenders.map((c) => `| ${c.label} | ${ss.map((s) => cell(s, c.id)).join(" | ")} |`),
    "",
    ...ss.filter((s) => s.ranked).map((s) => `- ${s.figure.label}: ${versus(s)} ${s.reason}`),
  ].join("\n");
}

/** Every situation, under the method. */
export function claimsBlock(d: ClaimsData): string {
  return [method(d), ...d.situations.map((s) => situationBlock(d, s))].join("\n\n");
}

/** The scoreboard: a row a situation the first screen shows, tideward's best against the best baseline. */
export function scoreboardBlock(d: ClaimsData): string {
  const rows = d.situations
    .filter((s) => s.scoreboard && s.ranked)
    .map((s) => {
      const ours = best(s, "tideward");
      const theirs = best(s, "baseline");
      if (ours === undefined || theirs === undefined) return "";
      const t = tally(s, ours, theirs);
      return `| ${s.title} | ${s.figure.label} (${s.figure.better} is better) | ${ours.label}: ${range(s, all(ours))}${defaultToo(s, ours)} | ${theirs.label}: ${range(s, all(theirs))} | ${verdictOf(t)}: ${tallyText(t)} |`;
    })
    .filter((r) => r !== "");
  return [
    "| situation | judged by | tideward's best | the best baseline | run for run |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    "",
    method(d),
  ].join("\n");
}

/** `text` with what is between `<!-- name -->` and `<!-- /name -->` replaced by `block`; an error when the markers are missing. */
export function between(text: string, name: string, block: string): string {
  const open = `<!-- ${name} -->`;
  const close = `<!-- /${name} -->`;
  const a = text.indexOf(open);
  const b = text.indexOf(close);
  if (a < 0 || b < a) throw new Error(`no ${open} … ${close} markers`);
  return `${text.slice(0, a + open.length)}\n${block}\n${text.slice(b)}`;
}

/** What is between a file's markers now. */
export function within(text: string, name: string): string | undefined {
  const open = `<!-- ${name} -->`;
  const close = `<!-- /${name} -->`;
  const a = text.indexOf(open);
  const b = text.indexOf(close);
  return a < 0 || b < a ? undefined : text.slice(a + open.length + 1, b - 1);
}
