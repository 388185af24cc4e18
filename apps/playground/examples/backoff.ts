// Retries on simulated time: a herd of clients that failed together, retrying with and without
// jitter, and the same herd in an outage with and without a shared retry budget.
import { Backoff, Jitter, RetryBudget, retry } from "@tideward/backoff";
import { ManualClock, seededRandom } from "@tideward/time";

const CLIENTS = 1_000;

/** The busiest 10 ms slot when every client retries once after failing at t = 0. */
function peak(jitter: Jitter): number {
  const b = new Backoff({ base: 1_000, cap: 1_000, attempts: 2, jitter });
  const draw = seededRandom(1);
  const slots = new Map<number, number>();
  for (let i = 0; i < CLIENTS; i++) {
    const slot = Math.floor((b.delay(1, { random: draw() }) as number) / 10);
    slots.set(slot, (slots.get(slot) ?? 0) + 1);
  }
  return Math.max(...slots.values());
}

/** Calls made by the herd against a backend that is down, each client allowed four attempts. */
async function outage(budget?: RetryBudget): Promise<number> {
  const clock = new ManualClock(0);
  let calls = 0;
  for (let i = 0; i < CLIENTS; i++) {
    await retry(
      () => {
        calls++;
        throw new Error("503");
      },
      {
        backoff: { attempts: 4, jitter: Jitter.full },
        clock: clock.now,
        sleep: clock.sleep,
        random: seededRandom(i),
        budget,
      },
    ).catch(() => undefined);
  }
  return calls;
}

/** Returns the lines this example prints, so a test can check them. */
export async function main(): Promise<string[]> {
  const lines = [
    `${CLIENTS} clients fail at t = 0 and retry once, within a 1 s ceiling; retries landing in the busiest 10 ms, by jitter:`,
  ];
  for (const [name, jitter] of [
    ["rigid", Jitter.rigid],
    ["full", Jitter.full],
    ["equal", Jitter.equal],
    ["spread(0.2)", Jitter.spread(0.2)],
  ] as const) {
    lines.push(`  ${`${name}:`.padEnd(13)} ${peak(jitter)} of ${CLIENTS} retries`);
  }
  lines.push(`the backend stays down; each of the ${CLIENTS} clients may make four attempts (full jitter):`);
  lines.push(`  no retry budget:          ${await outage()} calls reach the backend`);
  lines.push(
    `  a shared budget of 0.2:   ${await outage(new RetryBudget({ ratio: 0.2, minPerSecond: 0, window: 3_600_000 }))} calls reach the backend`,
  );
  return lines;
}
