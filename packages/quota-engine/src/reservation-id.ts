// The ids the engine makes for reservations: `#` and the reservation's sequence number, in
// decimal with no leading zero. A reserve makes one, so it is made without converting the whole
// number each time (a number-to-string conversion misses V8's small cache for a number never
// seen and calls into the runtime, which cost a reserve about as much as the rest of its record):
// the last three digits come from a table, the digits before them from a string made once every
// thousand ids.

/** "000" to "999", made once for every engine, on its first id past 999. */
let threes: string[] | undefined;

/** Makes the ids of one sequence, each number once, mostly in order. */
export class IdMaker {
  /** `#` and the digits before the last three, for the numbers from `#base` to `#base + 999`. */
  #prefix = "#";
  #base = 0;
  #threes: string[] = [];

  /** `#` and `seq` (a whole number from 0 to 2^53) in decimal. */
  id(seq: number): string {
    const rest = seq - this.#base;
    // Numbers come in order: the same thousand as the last one, but for one id in a thousand.
    if (rest >= 0 && rest < 1_000 && this.#base > 0) return this.#prefix + this.#threes[rest];
    if (seq < 1_000) return `#${seq}`;
    const thousands = Math.floor(seq / 1_000);
    this.#prefix = `#${thousands}`;
    this.#base = thousands * 1_000;
    this.#threes = threes ??= Array.from({ length: 1_000 }, (_, i) => String(i).padStart(3, "0"));
    return this.#prefix + this.#threes[seq - this.#base];
  }
}

/** The sequence number of an id the engine made (`#` and up to 15 digits, no leading zero), or -1. */
export function seqOf(id: string): number {
  const n = id.length;
  if (n < 2 || n > 16 || id.charCodeAt(0) !== 35 || id.charCodeAt(1) === 48) return -1;
  let seq = 0;
  for (let i = 1; i < n; i++) {
    const digit = id.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    seq = seq * 10 + digit;
  }
  return seq;
}
