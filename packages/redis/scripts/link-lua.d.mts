/** One script of src/lua as Redis runs it: the file's name, its text, and the parts in it. */
export interface LinkedScript {
  readonly name: string;
  readonly file: string;
  readonly source: string;
  readonly parts: readonly string[];
}
/** Every script of `dir` (src/lua), built from the script and the parts it names (src/lua/parts). */
export function linkScripts(dir: string): LinkedScript[];
/** The parts of `dir/parts`, by name: a value (`fn` false) or a function written out at its calls. */
export function readParts(
  dir: string,
): Map<string, { readonly name: string; readonly file: string; readonly fn: boolean }>;
/** A line of Lua as shipped: its comment dropped and no space a token does not need. */
export function squeeze(line: string): string;
/** A part written out at more than one place, held once: its text given the names its locals take. */
export interface SharedPart {
  readonly name: string;
  readonly part: string;
  readonly file: string;
  /** The locals whose names differ between the places it is written out: its parameters. */
  readonly holes: readonly string[];
  readonly fill: (names: readonly string[]) => string;
}
/** The scripts as the module holds them: each a run of text and calls of shared parts. */
export function shareParts(scripts: LinkedScript[]): {
  templates: SharedPart[];
  scripts: { name: string; chunks: (string | { template: SharedPart; args: string[] })[] }[];
};
