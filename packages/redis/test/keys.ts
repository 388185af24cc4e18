// The keys the engine's tests charge.
import { QuotaKey } from "@tideward/quota-engine";

export const alice = new QuotaKey("acme", "alice", "api");
export const bob = new QuotaKey("acme", "bob", "api");
export const carol = new QuotaKey("acme", "carol", "api");
