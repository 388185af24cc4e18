// Every package in one program, from the simplest question to the composed ones: what each type
// answers, no clock and no dice, the breaker, the shedder, a run, the presets, then the backoff,
// jitter, deadline and window. Every line printed is a value the packages computed just now.
import { Backoff, Jitter, backoff } from "@tideward/backoff";
import type { Jitter as JitterType } from "@tideward/backoff";
import { Breaker, sre } from "@tideward/breaker";
import { Bucket, Gate, Period, Sliding } from "@tideward/limiters";
import { Shedder, shed } from "@tideward/shedder";
import type { Ticket } from "@tideward/shedder";
import { Deadline, seededRandom } from "@tideward/time";
import { Tally, Window } from "@tideward/window";
import { main as limitersRun } from "./limiters.ts";

const yes = (b: boolean): string => (b ? "yes" : "no");
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

function whatItIs(): string[] {
  const win = new Window(() => new Tally(), { size: 10, window: 1_000, now: 0 });
  return [
    "What it is: nine types, each answering one question (asked once here, of a fresh one)",
    `  Breaker   is this backend likely to work? ${yes(new Breaker().allow(0, 0.5) !== undefined)}`,
    `  Shedder   should this server take on another call? ${yes(new Shedder().allow(0, 300) !== undefined)}`,
    `  Bucket    is this call within a rate? ${yes(new Bucket(20).take(0))}`,
    `  Sliding   is it within a quota over any window-long stretch? ${yes(new Sliding(20, 1_000).take(0))}`,
    `  Period    is it within a quota this period? ${new Period(20, 1_000).take(0)}`,
    `  Gate      is there room right now? ${yes(new Gate(2).enter())}`,
    `  Backoff   when to try again, and how long first? again: ${yes(backoff.more(1))}, after ${backoff.delay(1, { random: 0.5 })} ms`,
    `  Deadline  how much of the budget is left? ${Deadline.start(2_000, 0).remaining(500)} ms of 2000 ms, 500 ms in`,
    `  Window    what does the rolling window hold? ${win.size} buckets of ${win.width} ms`,
  ];
}

function noClockNoDice(): string[] {
  const breaker = new Breaker();
  const now = 0;
  const call = breaker.allow(now, 0.42);
  call?.pass(now);
  // The same failures and the same rolls give the same decisions: two breakers agree call for call.
  const decide = (): string => {
    const b = new Breaker();
    const roll = seededRandom(3);
    let out = "";
    for (let t = 0; t < 2_000; t += 20) {
      const p = b.allow(t, roll());
      out += p === undefined ? "r" : "a";
      p?.fail(t);
    }
    return out;
  };
  return [
    "No clock, no dice: now and the roll are arguments",
    `  allow(now ${now} ms, roll 0.42): ${call === undefined ? "refused" : "goes ahead"}; settled as a success: ${yes(call?.settled === true)}`,
    `  two breakers fed the same 100 failing calls and the same seeded rolls decide alike: ${yes(decide() === decide())}`,
  ];
}

function theBreaker(): string[] {
  const tenFailures = new Breaker();
  for (let i = 0; i < 10; i++) tenFailures.allow(0, 0.5)?.fail(0);
  /** The standing throttle after `calls` calls in one second with `failing` of every `of` failing, at k = `k`. */
  const throttle = (failing: number, of: number, k = sre.k, calls = 300): number => {
    const b = new Breaker({ k });
    for (let i = 0; i < calls; i++) {
      const t = (i * 1_000) / calls;
      const p = b.allow(t, 0.999);
      if (i % of < failing) p?.fail(t);
      else p?.pass(t);
    }
    return b.ratio(1_000);
  };
  return [
    "The breaker: a refusal fraction that grows with the failures, no open, half-open and closed",
    `  after 10 failed calls at 0 ms: refusing ${pct(tenFailures.ratio(0))} ((10 − 5 protection) / 11)`,
    `  a third of 300 calls failing, k ${sre.k}: refusing ${pct(throttle(1, 3))}`,
    `  two in five of 300 calls failing, k ${sre.k}: refusing ${pct(throttle(2, 5))}`,
  ];
}

function theShedder(): string[] {
  /** A shedder that has seen a second of calls taking 50 ms, one every 10 ms: 5 in flight is its capacity. */
  const learned = (): { shedder: Shedder; running: Ticket[] } => {
    const shedder = new Shedder({}, 0);
    let running: { end: number; ticket: Ticket }[] = [];
    for (let t = 0; t < 1_000; t += 10) {
      for (const r of running.filter((r) => r.end <= t)) r.ticket.pass(r.end);
      running = running.filter((r) => r.end > t);
      const ticket = shedder.allow(t, 300);
      if (ticket !== undefined) running.push({ end: t + 50, ticket });
    }
    return { shedder, running: running.map((r) => r.ticket) };
  };
  const admitted = (t: Ticket | undefined): string => (t === undefined ? "refused" : "admitted");

  const spike = learned();
  for (const t of spike.running) t.pass(1_050); // nothing queued
  const idleQueue = learned();
  const both = learned();
  both.shedder.allow(1_000, 850); // one more in flight: a queue over the capacity
  return [
    `The shedder: refuses only when hot (CPU at or over ${shed.cpu}‰) and full (more in flight than it has shown it can finish)`,
    `  capacity learned from a second of 50 ms calls: ${both.shedder.capacity(1_000, 300)} in flight at 300‰, ${both.shedder.capacity(1_000, 950)} at 950‰`,
    `  a CPU spike (1000‰) with nothing queued: ${admitted(spike.shedder.allow(1_100, 1_000))}`,
    `  a queue (${idleQueue.shedder.flying} in flight) on an idle CPU (300‰): ${admitted(idleQueue.shedder.allow(1_000, 300))}`,
    `  a queue (${both.shedder.flying} in flight) on a hot CPU (950‰): ${admitted(both.shedder.allow(1_000, 950))}`,
  ];
}

function aRun(): string[] {
  return [
    "A run: one burst of forty calls every two seconds through the three quotas",
    ...limitersRun().map((l) => `  ${l}`),
  ];
}

function presets(): string[] {
  const fortyPercent = (k: number): number => {
    const b = new Breaker({ k });
    for (let i = 0; i < 300; i++) {
      const t = (i * 1_000) / 300;
      const p = b.allow(t, 0.999);
      if (i % 5 < 2) p?.fail(t);
      else p?.pass(t);
    }
    return b.ratio(1_000);
  };
  return [
    "Presets: each policy is a record with a preset of the same name",
    `  sre: k ${sre.k} decaying to ${sre.floor}, protection ${sre.protection} calls, a probe after ${sre.probe} ms, ${sre.size} buckets over ${sre.window} ms`,
    `  shed: ${shed.size} buckets over ${shed.window} ms, hot at ${shed.cpu}‰, ${shed.latency} ms assumed response time, average weighted ${shed.beta}, ${shed.cool} ms to cool, never under ${shed.floor} of capacity`,
    `  backoff: ${backoff.attempts} attempts, ${backoff.base} ms multiplied by ${backoff.factor} to a ${backoff.cap} ms cap, jitter ${backoff.jitter.kind} ${"fraction" in backoff.jitter ? backoff.jitter.fraction : ""}`.trimEnd(),
    `  change one field, { ...sre, k: 2 }: two in five calls failing is refused ${pct(fortyPercent(sre.k))} at k ${sre.k}, ${pct(fortyPercent(2))} at k 2`,
  ];
}

function theBackoff(): string[] {
  const jitters: [string, JitterType][] = [
    ["rigid", Jitter.rigid],
    ["full", Jitter.full],
    ["equal", Jitter.equal],
    ["decorrelated", Jitter.decorrelated],
    ["spread(0.2)", Jitter.spread(0.2)],
  ];
  const waits = jitters.map(
    ([name, jitter]) => `${name} ${new Backoff({ jitter }).delay(2, { random: 0.25, previous: 100 })} ms`,
  );
  return [
    "Backoff and Jitter: when to try again, and how long to wait first",
    `  ceilings of retries 1 to 5: ${[1, 2, 3, 4, 5].map((n) => `${backoff.ceiling(n)} ms`).join(", ")}`,
    `  the preset's second wait with a draw of 0.1: ${backoff.delay(2, { random: 0.1 })} ms (200 ms spread by a fifth)`,
    `  may a call that made 2 attempts make another? ${yes(backoff.more(2))}; one that made 3? ${yes(backoff.more(3))}`,
    `  the second wait with a draw of 0.25 (the last wait 100 ms), by jitter: ${waits.join(", ")}`,
  ];
}

function deadlineAndWindow(): string[] {
  const d = Deadline.start(2_000, 0);
  const never = Deadline.start(0, 0);
  const win = new Window(() => new Tally(), { size: 10, window: 1_000, now: 0 });
  win.slot(0).add("success");
  win.slot(450).add("failure");
  const count = (now: number): number => {
    let total = 0;
    win.each(now, (t) => (total += t.total));
    return total;
  };
  return [
    "Deadline and Window",
    `  a 2000 ms deadline at 1500 ms: ${d.remaining(1_500)} ms left, expired: ${yes(d.expired(1_500))}; at 2000 ms expired: ${yes(d.expired(2_000))}`,
    `  a budget of 0 ms never expires: expired after an hour: ${yes(never.expired(3_600_000))}`,
    `  a 1000 ms window of 10 buckets with calls at 0 ms and 450 ms holds ${count(900)} calls at 900 ms, ${count(1_200)} at 1200 ms, ${count(1_500)} at 1500 ms`,
  ];
}

/** Returns the lines this example prints, so a test can check them. */
export function main(): string[] {
  const sections = [
    whatItIs(),
    noClockNoDice(),
    theBreaker(),
    theShedder(),
    aRun(),
    presets(),
    theBackoff(),
    deadlineAndWindow(),
  ];
  return sections.flatMap((s, i) => (i === 0 ? s : ["", ...s]));
}
