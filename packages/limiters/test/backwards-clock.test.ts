// A clock that steps backwards (NTP, a VM resumed, two hosts' clocks compared) mints no tokens
// and reopens no period: whatever a limiter would admit at an earlier reading, it would admit
// at its latest one too, and a step back never raises what it reports as remaining.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Bucket, Gcra, Period, Sliding } from "@tideward/limiters";
import { arrivalsAt } from "./arrivals";
import { scales } from "./scales";

/** Every limiter behind one face: take at now, and how many cost-one calls remain at now. */
interface Subject {
  take(now: number): boolean;
  remaining(now: number): number;
}

const subjects: Record<string, () => Subject> = {
  bucket: () => {
    const b = new Bucket(20, { burst: 5 });
    return { take: (t) => b.take(t), remaining: (t) => b.rateLimit(t).remaining };
  },
  sliding: () => {
    const s = new Sliding(5, 250);
    return { take: (t) => s.take(t), remaining: (t) => s.left(t) };
  },
  period: () => {
    const p = new Period(5, 250);
    return { take: (t) => p.take(t) !== "over", remaining: (t) => p.left(t) };
  },
  "aligned period": () => {
    const p = new Period(5, 250, { align: true });
    return { take: (t) => p.take(t) !== "over", remaining: (t) => p.left(t) };
  },
  gcra: () => {
    const g = new Gcra(20, { burst: 5 });
    return { take: (t) => g.take(t), remaining: (t) => g.remaining(t) };
  },
};

describe.each(Object.keys(subjects))("%s, with a clock that steps back", (name) => {
  const make = subjects[name];

  it("admits nothing more after a step back than it would have at the latest reading", () => {
    const x = make();
    for (let i = 0; i < 5; i++) x.take(1_000);
    let passed = 0;
    for (let t = 999; t >= 0; t -= 10) if (x.take(t)) passed++;
    expect(passed).toBe(0);
  });

  it.each(scales)(
    "property: remaining at an earlier reading never exceeds remaining at the latest one, on %s",
    (_, origin) => {
      fc.assert(
        fc.property(
          arrivalsAt(origin, { shuffled: true, gap: 300 }),
          fc.double({ min: 0, max: 1_000, noNaN: true }),
          (events, back) => {
            const x = make();
            let latest = -Infinity;
            let bad = 0;
            for (const { t } of events) {
              x.take(t);
              latest = Math.max(latest, t);
              if (x.remaining(latest - back) > x.remaining(latest)) bad++;
            }
            return bad === 0;
          },
        ),
      );
    },
  );
});
