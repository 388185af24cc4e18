/** Clocks near 0 and near Date.now(), fractional: every promise must hold at both. */
export const STARTS = [0, 1_700_000_000_123.375];
