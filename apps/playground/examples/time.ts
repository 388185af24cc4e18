// The time core: spans written the way people write them, a clock that moves only when told,
// and a deadline whose remaining budget a caller can hand to whatever it calls next.
import { Deadline, ManualClock, formatSpan, parseSpan, seededRandom } from "@tideward/time";

/** Returns the lines this example prints, so a test can check them. */
export function main(): string[] {
  const lines: string[] = [];
  for (const text of ["250ms", "1.5s", "1h30m"])
    lines.push(`${text.padEnd(6)} = ${parseSpan(text)} ms = ${formatSpan(parseSpan(text))}`);

  const clock = new ManualClock(0);
  const deadline = Deadline.start(parseSpan("2s"), clock.now());
  const draw = seededRandom(1);
  while (!deadline.expired(clock.now())) {
    const step = Math.round(300 + draw() * 400); // a call taking 300–700 ms
    clock.advance(step);
    lines.push(
      `call took ${formatSpan(step)}, ${formatSpan(deadline.remaining(clock.now()) ?? Infinity)} of the budget left`,
    );
  }
  return lines;
}
