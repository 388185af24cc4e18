// A number and its unit as the page prints them: "1 call", "2 calls", "1 call/s", "40 %". The
// units are written in the plural ("calls", "calls/s", "runs each"); after a number printed as
// exactly 1 their first word loses its plural s. Symbols ("ms", "s", "%", "‰") never change.

/** `unit` as it reads after `shown`, the number as printed: singular after exactly "1". */
export function unitAfter(shown: string, unit: string): string {
  if (shown !== "1" && shown !== "-1") return unit;
  // The first word, up to a space or a slash: "calls/s" → "call/s", "runs each" → "run each",
  // "retries" → "retry".
  return unit.replace(/^([a-z]{2,})ies(?=$|[\s/])/i, "$1y").replace(/^([a-z]{2,}[^s\s/])s(?=$|[\s/])/i, "$1");
}

/** The number as printed, then its unit (if any) in the right number: `withUnit("1", "calls")` is "1 call". */
export function withUnit(shown: string, unit: string): string {
  return unit === "" ? shown : `${shown} ${unitAfter(shown, unit)}`;
}

/** A count in words for a sentence: `counted(1, "calls")` is "1 call", `counted(3, "calls")` "3 calls". */
export function counted(n: number, unit: string, digits = 0): string {
  return withUnit(n.toFixed(digits), unit);
}

/** A span of time as the status line says it: "2 min", "36.4 s", "1.5 h" (ms in). */
export function duration(ms: number): string {
  if (ms >= 3_600_000) return `${(ms / 3_600_000).toFixed(ms % 3_600_000 === 0 ? 0 : 1)} h`;
  if (ms >= 60_000) return `${(ms / 60_000).toFixed(ms % 60_000 === 0 ? 0 : 1)} min`;
  return `${(ms / 1_000).toFixed(ms % 1_000 === 0 ? 0 : 1)} s`;
}
