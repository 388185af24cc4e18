// What of a .lua file is sent to Redis: its first line (which names the script in SCRIPT and
// SLOWLOG output) and its code, without the lines that are only a comment or blank. The comments
// stay in src/lua for the reader; shipped, they were a third of the package.
/** @param {string} source */
export function stripLua(source) {
  const [first = "", ...rest] = source.split("\n");
  return [first, ...rest.filter((line) => line.trim() !== "" && !line.trimStart().startsWith("--"))].join("\n") + "\n";
}
