// The quota benches' three-dimension charge set and the floor under a reserve, shared by the
// reserve race (quota.bench.ts) and the instruction count (quota-count.ts), so both weigh the
// same set against the same floor.
import { QuotaEngine, QuotaKey, charge, perSecond } from "@tideward/quota-engine";
import { BUCKET, GCRA, IdMaker, WINDOW } from "@tideward/quota-engine/internal";

/** A user's limit: 100 a second (its capacity the same). */
export const USER_RATE = 100;

/** `n` user keys: scope `t` + i % 1 000, subject `u` + i, resource `api`. */
export function userKeys(n: number): QuotaKey[] {
  const keys = new Array<QuotaKey>(n);
  for (let i = 0; i < n; i++) keys[i] = new QuotaKey("t" + (i % 1_000), "u" + i, "api");
  return keys;
}

/** The 1 000 tenants the user keys belong to. */
export const tenants: readonly QuotaKey[] = Array.from({ length: 1_000 }, (_, i) => new QuotaKey("t" + i, "*", "api"));
/** The 10 models. */
export const models: readonly QuotaKey[] = Array.from({ length: 10 }, (_, i) => new QuotaKey("*", "*", "model-" + i));

/** A charge set of three: user `i` (cost 1), its tenant (10) and a model (10). */
export type ChargeSet = (i: number) => ReturnType<typeof charge>[];

/**
 * An engine with the three limits (user 100 a second, tenant 1 000 000, model 10 000 000) and the
 * charge set on `keys`, every user charged once at instant 0 so that every key has its slot.
 */
export function chargeSetEngine(
  keys: readonly QuotaKey[],
  policy?: ConstructorParameters<typeof QuotaEngine>[0],
): { engine: QuotaEngine; set: ChargeSet } {
  const engine = new QuotaEngine(policy);
  engine.addLimit(perSecond("user", USER_RATE));
  engine.addLimit(perSecond("tenant", 1_000_000));
  engine.addLimit(perSecond("model", 10_000_000));
  const set: ChargeSet = (i) => [
    charge(keys[i], "user"),
    charge(tenants[i % 1_000], "tenant", 10),
    charge(models[i % 10], "model", 10),
  ];
  for (let i = 0; i < keys.length; i++) engine.checkAtomic(set(i), 0);
  return { engine, set };
}

/** What a settle of set `i` reports as used, per limit: about half the tokens back. */
export const settleTokens = (i: number): { user: number; tenant: number; model: number } => ({
  user: 1,
  tenant: 5 + (i & 3),
  model: 5 + (i & 3),
});

// What a reservation's record costs at the least, for a floor under reserve: each charge's key,
// limit name, kind, cost and window end written into a ring of typed arrays at the position of
// its sequence number (no free list, no map from ids: all records live as long, so the oldest is
// the next to expire), the record that expired dropped, and its id made by the engine's own
// IdMaker. It trusts its caller (every record expires in the order made; nothing is settled) and
// checks nothing, so it is not a reservation table: only what any table must at least write.
export class RecordFloor {
  static readonly LENGTH = 4_096; // positions, a power of two above the records held
  readonly refs = new Array<unknown>(RecordFloor.LENGTH * 8).fill(undefined);
  readonly nums = new Float64Array(RecordFloor.LENGTH * 12);
  readonly expires = new Float64Array(RecordFloor.LENGTH);
  readonly sizes = new Int32Array(RecordFloor.LENGTH);
  readonly ids = new IdMaker();
  made = 0;
  oldest = 1;

  /** Keeps a record of `charges` until `expiresAt` (ms), the oldest dropped if expired at `now` (ms); returns its id. */
  keep(
    charges: readonly { key: QuotaKey; limit: string; cost: number; kind?: string }[],
    expiresAt: number,
    now: number,
  ): string {
    const mask = RecordFloor.LENGTH - 1;
    // The oldest record, once expired, is dropped; its references stay until its position is
    // written again, as the engine's do.
    if (this.oldest <= this.made && this.expires[this.oldest & mask] <= now) this.oldest++;
    const seq = ++this.made;
    const p = seq & mask;
    const n = charges.length;
    this.expires[p] = expiresAt;
    this.sizes[p] = n;
    for (let i = 0, r = p * 8, x = p * 12; i < n; i++, r += 2, x += 3) {
      const c = charges[i];
      const kind = c.kind === "window" ? WINDOW : c.kind === "gcra" ? GCRA : BUCKET;
      this.refs[r] = c.key;
      this.refs[r + 1] = c.limit;
      this.nums[x] = kind;
      this.nums[x + 1] = c.cost;
      this.nums[x + 2] = 0;
    }
    return this.ids.id(seq);
  }
}
