// `pnpm bench claims`: the claims the scoreboard and the READMEs state, measured as ranges over
// seeds and ±20 % of each scenario's main knobs. The program lives with the page that shows its
// output (apps/playground/scripts/claims.ts, also `pnpm claims`); this runs it from the bench.
import "../../apps/playground/scripts/claims.ts";
