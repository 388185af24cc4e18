// The quota engine's headline: an LLM gateway charges every request to three budgets at once (the
// user's requests, the tenant's tokens, the model's tokens). Checked one after another, a request
// refused by a later budget has already been debited from the earlier ones; checked as one atomic
// set, a refused request costs nothing. Same traffic, ten simulated seconds.
import { QuotaEngine, QuotaKey, charge, limitSpec } from "@tideward/quota-engine";
import { seededRandom } from "@tideward/time";

function gateway(): QuotaEngine {
  const engine = new QuotaEngine();
  engine.addLimit(limitSpec({ name: "user-requests", capacity: 5, refill: 2, window: 1_000 }));
  engine.addLimit(limitSpec({ name: "tenant-tokens", capacity: 20_000, refill: 4_000, window: 1_000 }));
  engine.addLimit(limitSpec({ name: "model-tokens", capacity: 12_000, refill: 3_000, window: 1_000 }));
  return engine;
}

/** Returns the lines this example prints, so a test can check them. */
export function main(): string[] {
  const users = ["ann", "bob", "cai", "dee"].map((u) => new QuotaKey("acme", u, "chat"));
  const tenant = new QuotaKey("acme", "*", "chat");
  const model = new QuotaKey("*", "*", "model-l");
  const draw = seededRandom(7);
  const traffic = Array.from({ length: 200 }, (_, i) => ({
    now: i * 50,
    user: users[Math.floor(draw() * users.length)],
    tokens: 200 + Math.floor(draw() * 1_800),
  }));

  const atomic = gateway();
  const sequential = gateway();
  let admittedAtomic = 0;
  let admittedSequential = 0;
  let leaked = 0; // tokens debited for requests that were refused anyway
  for (const { now, user, tokens } of traffic) {
    const report = atomic.checkAtomic(
      [
        charge(user, "user-requests", 1),
        charge(tenant, "tenant-tokens", tokens),
        charge(model, "model-tokens", tokens),
      ],
      now,
    );
    if (report.committed) admittedAtomic++;

    const u = sequential.checkTokenBucket(user, "user-requests", now);
    const t = u.allowed ? sequential.checkTokenBucket(tenant, "tenant-tokens", now, tokens) : undefined;
    const m = t?.allowed === true ? sequential.checkTokenBucket(model, "model-tokens", now, tokens) : undefined;
    if (m?.allowed === true) admittedSequential++;
    else if (t?.allowed === true) leaked += tokens; // the tenant paid for a request the model refused
  }
  return [
    `${traffic.length} requests over ${traffic.length * 50} ms`,
    `atomic:     ${admittedAtomic} admitted, 0 tokens charged for refused requests`,
    `sequential: ${admittedSequential} admitted, ${leaked} tenant tokens charged for refused requests`,
  ];
}
