// What of a .lua file is sent to Redis: its first line (which names the script in SCRIPT and
// SLOWLOG output) and its code, without the lines that are only a comment or blank, nor the
// indentation (no script has a string spanning lines). The comments and the indentation stay in
// src/lua for the reader; shipped, they were a third of the package.
/** @param {string} source */
export function stripLua(source) {
  const [first = "", ...rest] = source.split("\n");
  const code = rest.map((line) => line.trimStart()).filter((line) => line !== "" && !line.startsWith("--"));
  return [first, ...code].join("\n") + "\n";
}
