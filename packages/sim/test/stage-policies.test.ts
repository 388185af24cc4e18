// policy.breaker, policy.shedder, policy.gate and policy.bucket (one for all traffic) run the
// guard's own stages: the breaker rolls its random stream only while it throttles, as a guard's
// breaker does (the simulator's own wrapper drew a roll on every call), and each decides, settles
// and releases as the primitive it wraps, at clocks near 0 and near Date.now().
import { describe, expect, it } from "vitest";
import { Breaker } from "@tideward/breaker";
import { Bucket, Gate } from "@tideward/limiters";
import { Priorities } from "@tideward/concurrency";
import { Shedder } from "@tideward/shedder";
import type { Ticket } from "@tideward/shedder";
import { policy } from "@tideward/sim";
import type { PolicyContext } from "@tideward/sim";

function context(start: number, random: () => number, cpu = (_now: number) => 0): PolicyContext {
  return { start, random, keys: 1, keyName: String, cpu };
}

describe.each([0, 1_700_000_000_000.375])("policies on the guard's stages, the clock at %d", (t0) => {
  it("a breaker draws only while it throttles, and decides as a Breaker handed the same source", () => {
    let draws = 0;
    const counted = (): number => {
      draws++;
      return (draws * 0.618) % 1;
    };
    const a = policy.breaker({}).create(context(t0, counted));
    let mirrorDraws = 0;
    const mirror = new Breaker({}, t0);
    const mirrored = (): number => {
      mirrorDraws++;
      return (mirrorDraws * 0.618) % 1;
    };
    // Healthy: no draw at all.
    for (let i = 0; i < 200; i++) {
      const now = t0 + i;
      const token = a.admit(now, 0, 1);
      expect(token).not.toBeUndefined();
      a.settle(token, now + 0.5, true);
      mirror.allow(now, mirrored)?.pass(now + 0.5);
    }
    expect(draws).toBe(0);
    // Failing: it throttles, and then draws, refusing exactly where the Breaker refuses.
    for (let i = 200; i < 2_000; i++) {
      const now = t0 + i;
      const token = a.admit(now, 0, 1);
      const permit = mirror.allow(now, mirrored);
      expect(token === undefined).toBe(permit === undefined);
      if (token !== undefined) a.settle(token, now + 0.5, false);
      permit?.fail(now + 0.5);
    }
    expect(draws).toBeGreaterThan(0);
    expect(draws).toBe(mirrorDraws);
    expect(a.stats?.().ratio).toBe(mirror.ratio(t0 + 1_999));
  });

  it("a shedder reads the backend's CPU at the admission's instant, and a refusal further on gives its ticket back", () => {
    const seen: number[] = [];
    const a = policy.shedder({}).create(
      context(
        t0,
        () => 0.5,
        (now) => {
          seen.push(now);
          return 100;
        },
      ),
    );
    const token = a.admit(t0 + 3, 0, 1);
    expect(token).not.toBeUndefined();
    expect(seen).toEqual([t0 + 3]);
    expect(a.held?.()).toBe(1);
    a.release?.(token, t0 + 4);
    expect(a.held?.()).toBe(0);
    const again = a.admit(t0 + 5, 0, 1);
    a.settle(again, t0 + 6, true);
    expect(a.held?.()).toBe(0);
    // The same decisions as a Shedder asked by hand.
    const s = new Shedder({}, t0);
    expect(s.allow(t0 + 3, 100)).not.toBeUndefined();
  });

  it("a shedder with levels judges each call at its priority as a Shedder with them does", () => {
    const levels = () => new Priorities({ levels: ["user", "prefetch"], shares: [0.5, 0.5], fallback: "user" });
    // Cool for two seconds, then hot: twenty calls in flight, user and prefetch in turn.
    const cpu = (now: number) => (now - t0 < 2_000 ? 100 : 900);
    const a = policy.shedder({}, { priorities: levels() }).create(context(t0, () => 0.5, cpu));
    const s = new Shedder({}, t0, levels());
    const mine: unknown[] = [];
    const theirs: (Ticket | undefined)[] = [];
    const refused = { user: 0, prefetch: 0 };
    for (let k = 0; k < 3_000; k++) {
      const now = t0 + 2 * k;
      const p = k % 2 === 0 ? "user" : "prefetch";
      const token = a.admit(now, 0, 1, p);
      const ticket = s.allow(now, cpu(now), p);
      expect(token === undefined, `call ${k}`).toBe(ticket === undefined);
      if (token === undefined) refused[p]++;
      else {
        mine.push(token);
        theirs.push(ticket);
      }
      if (mine.length > 20) {
        a.settle(mine.shift(), now, true);
        theirs.shift()?.pass(now);
      }
    }
    // Hot, the prefetch half is refused, user calls not.
    expect(refused).toEqual({ user: 0, prefetch: 1_000 });
    expect(() => policy.shedder({}, { priorities: 5 as never })).toThrow(
      /^Shedder priorities must have level\(\) and room\(\)/,
    );
  });

  it("a gate holds a place until its attempt settles or is released, and refuses when full", () => {
    const a = policy.gate(2).create(context(t0, () => 0.5));
    const g = new Gate(2);
    const first = a.admit(t0, 0, 1);
    const second = a.admit(t0, 0, 1);
    expect([first, second, a.admit(t0, 0, 1)].map((x) => x !== undefined)).toEqual([g.enter(), g.enter(), g.enter()]);
    expect(a.held?.()).toBe(2);
    a.settle(first, t0 + 1, false);
    a.release?.(second, t0 + 1);
    expect(a.held?.()).toBe(0);
  });

  it("a bucket for all traffic takes each call's cost as a Bucket does, and a token once taken stays spent", () => {
    const a = policy.bucket(10, { burst: 3 }).create(context(t0, () => 0.5));
    const b = new Bucket(10, { burst: 3, now: t0 });
    const costs = [1, 2, 1, 3, 1, 1, 2, 1, 1, 1, 3, 2];
    const got = costs.map((cost, k) => {
      const now = t0 + k * 37.5;
      const token = a.admit(now, 0, cost);
      // A refusal further on releases nothing: the bucket's token is spent.
      if (token !== undefined) a.release?.(token, now);
      return token !== undefined;
    });
    expect(got).toEqual(costs.map((cost, k) => b.take(t0 + k * 37.5, cost)));
    expect(got).toContain(false);
    expect(got).toContain(true);
  });
});
