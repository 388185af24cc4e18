// The bits of a float, read through a shared buffer so hashing a time allocates nothing.
const float = new Float64Array(1);
const words = new Uint32Array(float.buffer);

/**
 * A running 64-bit hash of a run's events, two 32-bit lanes of murmur3's mixing: the run's
 * fingerprint. Two runs with the same hash made the same decisions at the same instants.
 */
export class TraceHash {
  #a = 0x9747b28c;
  #b = 0x85ebca6b;
  #n = 0;

  /** Folds one event in: its time (ms, every bit of it) and two small integers. */
  add(time: number, code: number, value: number): void {
    float[0] = time;
    this.#a = step(this.#a, words[0] ^ code);
    this.#b = step(this.#b, words[1] ^ Math.imul(value | 0, 0x27d4eb2d));
    this.#n++;
  }

  /** The hash so far, as sixteen hexadecimal digits. */
  digest(): string {
    let a = this.#a ^ this.#n;
    let b = this.#b ^ (this.#n * 0x9e3779b1);
    a = fmix(a ^ Math.imul(b, 0x85ebca6b));
    b = fmix(b ^ Math.imul(a, 0xc2b2ae35));
    return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
  }
}

function step(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
