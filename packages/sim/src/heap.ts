/**
 * A binary heap of indices, the one that `before` puts first on top: the sweeps that build
 * schedules keep the windows begun in one, dropping ended ones lazily as they surface.
 */
export class IndexHeap {
  readonly #h: number[] = [];
  readonly #before: (a: number, b: number) => boolean;

  constructor(before: (a: number, b: number) => boolean) {
    this.#before = before;
  }

  get size(): number {
    return this.#h.length;
  }

  /** The index on top; only when {@link size} is above 0. */
  get top(): number {
    return this.#h[0];
  }

  push(v: number): void {
    const h = this.#h;
    let i = h.length;
    h.push(v);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#before(v, h[p])) break;
      h[i] = h[p];
      i = p;
    }
    h[i] = v;
  }

  /** Removes the index on top. */
  pop(): void {
    const h = this.#h;
    const last = h.pop() as number;
    if (h.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const c = l + 1 < h.length && this.#before(h[l + 1], h[l]) ? l + 1 : l;
      if (!this.#before(h[c], last)) break;
      h[i] = h[c];
      i = c;
    }
    h[i] = last;
  }
}

/**
 * The index of the breakpoint in force at `offset`: the last of `edges` (ascending, the first 0)
 * at or before it, the first for an offset before them all, the last for NaN.
 */
export function edgeAt(edges: Float64Array, offset: number): number {
  // The first edge past `offset`, by halving; the one before it is in force.
  let lo = 1;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (edges[mid] > offset) hi = mid;
    else lo = mid + 1;
  }
  return lo - 1;
}
