// The fields of a refusal by per-key limits beside a quota set whose store answers later: each
// stage that reports fields and was reached shows them, as it stands for this request when the
// verdict is written — whatever other requests asked of the shared stages meanwhile, at the
// clock's reading once the store answered. At clocks near 0 and near Date.now().
import { describe, expect, it } from "vitest";
import { admit } from "@tideward/guard";
import type { Field, Verdict } from "@tideward/guard";
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import type { AtomicReport, QuotaCharge, QuotaStore } from "@tideward/quota-engine";
import { limits } from "./fields";

/** Every line of the field `name`, joined as a recipient joins them. */
const field = (headers: readonly Field[], name: string): string =>
  headers
    .filter(([n]) => n === name)
    .map(([, v]) => v)
    .join(", ");

describe.each([0, 1_700_000_000_123.375])("admit's refusal fields, the clock at %d", (start) => {
  /** Per-key limits of 3 an hour beside a tenant's quota of `capacity` an hour, its store answering when told. */
  const setup = (capacity: number) => {
    const engine = new QuotaEngine();
    const spec = limitSpec({ name: "tenant", capacity, refill: capacity, window: 3_600_000 });
    engine.addLimit(spec);
    const answers: (() => void)[] = [];
    const store = {
      limit: (name: string) => engine.limit(name),
      checkAtomic: (c: readonly QuotaCharge[], now: number) =>
        new Promise<AtomicReport>((resolve) => answers.push(() => resolve(engine.checkAtomic(c, now)))),
    } as Pick<QuotaStore, "checkAtomic" | "limit"> as QuotaStore;
    const clock = { now: start };
    const a = admit({
      clock: () => clock.now,
      problem: true,
      limits: [{ name: "per-ip", quota: 3, window: 3_600_000 }],
      quota: { store, limits: [spec], charges: () => [charge(new QuotaKey("acme", "*", "api"), "tenant")] },
    });
    /** Checks `key`, the store answering once `before` has run. */
    const check = async (key: string, before = () => {}): Promise<Verdict> => {
      const v = a.check(key);
      before();
      for (const answer of answers.splice(0)) answer();
      return v;
    };
    return { a, answers, clock, check };
  };
  const members = (v: Verdict) => limits(field(v.headers, "RateLimit")).map((m) => [m.name, m.r, m.t]);

  it("a key's last unit taken by another request while the store answered: refused by the key's limit, the fields both policies'", async () => {
    const { a, answers } = setup(100);
    for (let i = 0; i < 2; i++) {
      const v = a.check("ip1");
      answers.splice(0).forEach((answer) => answer());
      expect((await v).status).toBe(200);
    }
    const first = a.check("ip1");
    const second = a.check("ip1");
    answers.splice(0).forEach((answer) => answer());
    const [won, lost] = await Promise.all([first, second]);
    expect([won.status, lost.status, lost.reason]).toEqual([200, 429, "rate"]);
    // Charged once the quota set committed: the tenant's unit is spent, and the fields show it (a
    // unit of each back in an hour over its quota: 1 200 s, 36 s).
    expect(members(lost)).toEqual([
      ["per-ip", 0, 1_200],
      ["tenant", 96, 36],
    ]);
    expect(JSON.parse(lost.body ?? "")).toMatchObject({ status: 429, "violated-policies": ["per-ip"] });
  });

  it("the quota refuses a fresh key while another key's request looked at the per-key limits: the fields are the fresh key's", async () => {
    const { a, answers, check } = setup(1);
    expect((await check("ip2")).status).toBe(200);
    // Both wait for the store; the second looked at its own key last.
    const fresh = a.check("ip1");
    const spent = a.check("ip2");
    answers.splice(0).forEach((answer) => answer());
    const [f, s] = await Promise.all([fresh, spent]);
    expect([f.status, f.reason, s.status, s.reason]).toEqual([429, "quota", 429, "quota"]);
    expect(members(f)).toEqual([
      ["per-ip", 3, 0],
      ["tenant", 0, 3_600],
    ]);
    expect(members(s)).toEqual([
      ["per-ip", 2, 1_200],
      ["tenant", 0, 3_600],
    ]);
    expect(JSON.parse(f.body ?? "")).toMatchObject({ status: 429, "violated-policies": ["tenant"] });
  });

  it("the quota refuses once the clock moved on while the store answered: the key's fields at the clock then", async () => {
    const { clock, check } = setup(1);
    expect((await check("ip2")).status).toBe(200);
    const v = await check("ip2", () => (clock.now += 10_000));
    expect([v.status, v.reason]).toEqual([429, "quota"]);
    // The tenant's as the store saw it when asked; the key's ten seconds on.
    expect(members(v)).toEqual([
      ["per-ip", 2, 1_190],
      ["tenant", 0, 3_600],
    ]);
  });
});
