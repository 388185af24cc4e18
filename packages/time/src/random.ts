import { finite } from "./check";

/** Draws a number in [0, 1). `Math.random` is one. */
export type Random = () => number;

/** The platform's random source, `Math.random`: a draw in [0, 1). */
export const systemRandom: Random = Math.random;

/**
 * A reproducible random source: the same seed gives the same sequence of draws in [0, 1).
 *
 * The generator is sfc32 (Chris Doty-Humphrey's Small Fast Counting generator, which passes
 * PractRand and BigCrush) with its 128-bit state spread from the seed by splitmix32, so seeds
 * that differ in one bit still give unrelated sequences.
 *
 * @param seed - any finite number; only its low 32 bits after truncation matter
 * @throws RangeError when the seed is NaN or infinite
 */
export function seededRandom(seed: number): Random {
  let s = finite(seed, "seededRandom seed") >>> 0;
  const split = (): number => {
    s = (s + 0x9e3779b9) | 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split();
  let b = split();
  let c = split();
  let d = split();
  const next: Random = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4_294_967_296;
  };
  // The first few outputs of a fresh state are the least mixed; discard them as the authors advise.
  for (let i = 0; i < 12; i++) next();
  return next;
}
