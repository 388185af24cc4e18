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
