// `pnpm bench claims-concurrency`: the head-to-head of @tideward/concurrency's README, the
// prefetch-spike and capacity-shift scenarios over seeds 1–10 and ±20 % of their main knobs, and
// the capacity shift at a backend of 64 workers timing how long each limit takes to settle, counted
// against the workers and against its own steady level (Vegas's opt-in drain and grow beside the
// presets). Not a benchmark: it writes the README's block between its markers (`--check`: only
// says whether it is up to date). The program lives with the simulator's tests, whose scenarios it runs.
//   flock /tmp/tideward-bench.lock nice pnpm bench claims-concurrency
import "../../packages/sim/test/concurrency-head-to-head.ts";
