// The program quota-count.ts counts under callgrind (bundled, not run on its own): `W` warm-up
// calls of reserve and of checkAtomic in turn (and of the counted case, for the floor, the bare
// reserve and the settle), then `K` calls of the case `MODE` (atomic, floor, reserve, bare or
// settle) on 10 000 keys, on a clock advancing 1 µs a call. Every counted call must commit.
import { RecordFloor, chargeSetEngine, settleTokens, userKeys } from "./quota-floor";

const N = 10_000;
const K = Number(process.env.K ?? 0);
const W = Number(process.env.W ?? 40_000);
const MODE = process.env.MODE ?? "";
if (!["atomic", "floor", "reserve", "bare", "settle"].includes(MODE))
  throw new Error(`MODE must be atomic, floor, reserve, bare or settle; got ${JSON.stringify(MODE)}`);

// The policy's time to live is the one the calls give, so a reserve given none (bare) is the same.
const { engine, set } = chargeSetEngine(userKeys(N), { reservationTtl: 1 });
const floor = new RecordFloor();
let now = 10_000;
let j = 0;
// Each reservation expires 1 ms later, as in the reserve race: about 1 000 held.
const reserve = (): boolean => engine.reserve(set(j++ % N), (now += 0.001), { ttl: 1 }).committed;
const bare = (): boolean => engine.reserve(set(j++ % N), (now += 0.001)).committed;
const atomic = (): boolean => engine.checkAtomic(set(j++ % N), (now += 0.001)).committed;
const floored = (): boolean => {
  const charges = set(j++ % N);
  return engine.checkAtomic(charges, (now += 0.001)).committed && floor.keep(charges, now + 1, now) !== "";
};
const settled = (): boolean => {
  const i = j++ % N;
  const r = engine.reserve(set(i), (now += 0.001), { ttl: 1 });
  return r.committed && engine.settle(r.id, settleTokens(i), now).ok;
};
const counted = { atomic, floor: floored, reserve, bare, settle: settled }[MODE as "atomic"];

let warm = 0;
for (let i = 0; i < W; i++) if (reserve() && atomic()) warm++;
if (counted === floored || counted === settled || counted === bare) for (let i = 0; i < W; i++) if (counted()) warm++;
let passed = 0;
for (let i = 0; i < K; i++) if (counted()) passed++;
if (passed !== K || warm === 0) throw new Error(`${MODE}: ${passed} of ${K} counted calls committed (${warm} warm)`);
