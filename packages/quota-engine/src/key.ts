import { check } from "@tideward/time/internal";

/** The longest a part of a {@link QuotaKey} may be, in UTF-16 code units. */
export const MAX_KEY_PART = 1024;

function part(value: unknown, what: string): string {
  if (typeof value !== "string")
    throw new TypeError(`QuotaKey ${what} must be a string, got ${typeof value} ${check.describe(value)}`);
  if (value.length === 0) throw new RangeError(`QuotaKey ${what} must not be empty (use a placeholder such as "*")`);
  if (value.length > MAX_KEY_PART)
    throw new RangeError(`QuotaKey ${what} must be at most ${MAX_KEY_PART} characters, got ${value.length}`);
  return value;
}

let readSlot: (key: QuotaKey) => number;
let readHash: (key: QuotaKey) => number;
let readCurrent: (key: QuotaKey, token: object, stamp: number) => boolean;
let readAge: (key: QuotaKey, token: object, stamp: number) => number;
let writeSlot: (key: QuotaKey, slot: number, token: object, stamp: number) => void;
let branded: (value: unknown) => boolean;

/**
 * Whether `value` was made by the {@link QuotaKey} constructor: a brand check on its private
 * field, which `Object.create(QuotaKey.prototype)` or a look-alike object does not have, so a
 * forged key is refused before it can touch any state. For the engine; not exported by the package.
 */
export function isQuotaKey(value: unknown): value is QuotaKey {
  return branded(value);
}

/**
 * The slot `key` was last found at, in whichever table looked it up last, or -1: a hint that the
 * table confirms before use (see table.ts). For the engine's tables; not exported by the package.
 */
export function cachedSlot(key: QuotaKey): number {
  return readSlot(key);
}

/**
 * Whether the slot `key` remembers was found by the table whose identity is `token` when that
 * table's stamp was `stamp`: then, if the table's stamp is still `stamp`, the slot is the key's
 * without reading anything else (see table.ts).
 */
export function cachedFor(key: QuotaKey, token: object, stamp: number): boolean {
  return readCurrent(key, token, stamp);
}

/**
 * How far the stamp of the table whose identity is `token` has moved on (to `stamp`) since it
 * found the slot `key` remembers; Infinity when another table found it.
 */
export function cachedAge(key: QuotaKey, token: object, stamp: number): number {
  return readAge(key, token, stamp);
}

/** Remembers the slot a table (`token`, at `stamp`) found `key` at (see {@link cachedSlot}). */
export function cacheSlot(key: QuotaKey, slot: number, token: object, stamp: number): void {
  writeSlot(key, slot, token, stamp);
}

/** {@link hashId} of `key.id`, computed once when the key was made. For the engine's tables. */
export function keyHash(key: QuotaKey): number {
  return readHash(key);
}

/**
 * A 31-bit hash of an id, for the engine's own hash tables (table.ts): FNV-1a over its code units,
 * then murmur3's finaliser, so ids that differ in one digit land far apart.
 */
export function hashId(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 1;
}

/**
 * Who is charged, for what: a scope (a tenant, a region), a subject (a user, an API key, a job)
 * and a resource (an endpoint, a model). Every quota's state is kept per key.
 *
 * Build one per caller and reuse it: the constructor validates the parts and computes {@link
 * QuotaKey.id} once, so a check does no string work at all, and a key remembers where the
 * engine keeps its state, so a check with a reused key does not look its id up either.
 *
 * The id is length-prefixed (`"8:tenant-a5:alice3:llm"`), so no choice of parts can collide with
 * another: `a:b` + `c` and `a` + `b:c` have different ids, and separators, quotes or any other
 * character need no escaping. A key is frozen: its parts and id never change once made.
 *
 * @example
 * const alice = new QuotaKey("tenant-a", "alice", "llm");
 * alice.id; // "8:tenant-a5:alice3:llm"
 */
export class QuotaKey {
  /** The scope, such as a tenant; 1 to {@link MAX_KEY_PART} characters. */
  readonly scope: string;
  /** The subject, such as a user or an API key; 1 to {@link MAX_KEY_PART} characters. */
  readonly subject: string;
  /** The resource, such as an endpoint or a model; 1 to {@link MAX_KEY_PART} characters. */
  readonly resource: string;
  /** The stable, collision-free string form: each part prefixed by its length and a colon. */
  readonly id: string;
  // Where the last table that looked this key up keeps its state, and which table that was at
  // which stamp: a check with a key object the caller reuses then goes straight to its state, with
  // no lookup and no read to confirm it (at a million keys each is a cache miss). Private, so it
  // is no part of the key's value: not compared, listed or printed.
  #slot = -1;
  #token: object | undefined = undefined;
  #stamp = -1;
  // hashId(id), for the same tables: computed here once, so a check hashes nothing.
  readonly #hash: number;

  static {
    readSlot = (key) => key.#slot;
    readHash = (key) => key.#hash;
    readCurrent = (key, token, stamp) => key.#stamp === stamp && key.#token === token;
    readAge = (key, token, stamp) => (key.#token === token ? stamp - key.#stamp : Infinity);
    branded = (value) => typeof value === "object" && value !== null && #slot in value;
    writeSlot = (key, slot, token, stamp) => {
      key.#slot = slot;
      key.#token = token;
      key.#stamp = stamp;
    };
  }

  /**
   * A key of three parts.
   *
   * @throws TypeError when a part is not a string; RangeError when a part is empty or longer
   *   than {@link MAX_KEY_PART} characters
   */
  constructor(scope: string, subject: string, resource: string) {
    this.scope = part(scope, "scope");
    this.subject = part(subject, "subject");
    this.resource = part(resource, "resource");
    // Joined, not a template literal: V8 keeps a template literal as a tree of its pieces (a cons
    // string), which every Map lookup with a new key then walks to hash and compare, a cache miss
    // a piece at a million keys. A joined string is one flat piece, and smaller.
    this.id = [scope.length, ":", scope, subject.length, ":", subject, resource.length, ":", resource].join("");
    this.#hash = hashId(this.id);
    // Frozen, so an id the engine has filed state under can never be reassigned (the private
    // slot hint is no property, and stays writable).
    Object.freeze(this);
  }

  /**
   * The key whose {@link QuotaKey.id} is `id`: the inverse of `id`, for state read back by id.
   *
   * @throws RangeError when `id` is not exactly three length-prefixed parts
   */
  static parse(id: string): QuotaKey {
    if (typeof id !== "string")
      throw new TypeError(`QuotaKey id must be a string, got ${typeof id} ${check.describe(id)}`);
    const parts: string[] = [];
    let at = 0;
    while (at < id.length && parts.length < 3) {
      const colon = id.indexOf(":", at);
      const digits = colon < 0 ? "" : id.slice(at, colon);
      if (!/^[1-9][0-9]{0,5}$/.test(digits)) break;
      const length = Number(digits);
      if (colon + 1 + length > id.length) break;
      parts.push(id.slice(colon + 1, colon + 1 + length));
      at = colon + 1 + length;
    }
    if (parts.length !== 3 || at !== id.length)
      throw new RangeError(
        `QuotaKey id must be three length-prefixed parts such as "1:a1:b1:c", got ${check.describe(id)}`,
      );
    return new QuotaKey(parts[0], parts[1], parts[2]);
  }

  /** The three parts as a plain record, the shape snapshots store. */
  toJSON(): { scope: string; subject: string; resource: string } {
    return { scope: this.scope, subject: this.subject, resource: this.resource };
  }

  /** The id, so that a key reads well in a template string or a log line. */
  toString(): string {
    return this.id;
  }
}
