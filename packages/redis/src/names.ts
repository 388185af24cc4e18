// The Redis key names of the engine's state and request ids, and the cluster slot rule they keep:
// every key of one charge set on one slot, through one hash tag.
import { MAX_KEY_PART } from "@tideward/quota-engine";
import type { QuotaKey } from "@tideward/quota-engine";
import type { Kind } from "@tideward/quota-engine/internal";
import { check } from "@tideward/time/internal";
import { slotOf } from "./slot";

/** Thrown when the keys of one charge set cannot share a Redis Cluster slot; nothing was sent. */
export class CrossSlotError extends RangeError {
  override readonly name = "CrossSlotError";
  /** The Redis keys of the set, each with its slot. */
  readonly keys: readonly { readonly key: string; readonly slot: number }[];
  constructor(keys: readonly { key: string; slot: number }[]) {
    super(
      `[tideward] [redis] a charge set's keys must share one cluster slot, and these do not: ${keys.map((k) => `${k.key} (slot ${k.slot})`).join(", ")}. Give them one hash tag (RedisPolicy.hashTag).`,
    );
    this.keys = keys;
  }
}

/** The hash tag of a name these made, braces included. */
function tagIn(name: string): string {
  return name.slice(name.indexOf("{"), name.indexOf("}") + 1);
}

/**
 * Names a key's state `prefix{tag}` + kind + limit + the key's id. With the scope as its tag (the
 * default) a name leaves the scope out, the tag saying it, and marks that with an upper-case kind:
 * shorter names cost Redis less memory. Either form is unambiguous: the limit and the subject
 * carry their lengths, the resource is the rest.
 */
export class Names {
  readonly #prefix: string;
  readonly #hashTag: (key: QuotaKey) => string;

  constructor(prefix: string, hashTag: (key: QuotaKey) => string) {
    this.#prefix = prefix;
    this.#hashTag = hashTag;
  }

  /**
   * The hash tag of `key`, braces left out: the policy's, with every `}` made `)` — Redis Cluster
   * ends a tag at its first `}`, so one inside would cut the tag (and the slot) short. The tag only
   * places a key on a slot; a name whose tag is not the scope itself carries the full id.
   *
   * @throws TypeError naming `RedisPolicy hashTag` when it answers other than a non-empty string
   *   (and what it throws, when it throws)
   */
  tag(key: QuotaKey): string {
    const tag = this.#hashTag(key);
    if (typeof tag !== "string" || tag.length === 0) {
      throw new TypeError(
        `RedisPolicy hashTag must return a non-empty string, got ${check.describe(tag)} for the key ${key.id}`,
      );
    }
    return tag.includes("}") ? tag.split("}").join(")") : tag;
  }

  /**
   * The name of `key`'s state for `limit` under `kind`, its tag `tag` (from {@link Names.tag}).
   * A token bucket of one number (`one`: its state an integer, see quota.lua) is kind `F`, not
   * `B`: the two forms never share a name, so a process of an earlier version never reads the
   * other's state as its own (each keeps its own bucket while both run). `version` is the limit's
   * version part (`Rule.suffix`: empty for a limit never replaced), after the kind's letter.
   */
  state(tag: string, kind: Kind, limit: string, key: QuotaKey, one = false, version = ""): string {
    const letter = kind === 0 && one ? 3 : kind;
    if (tag === key.scope)
      return (
        this.#prefix +
        "{" +
        tag +
        "}" +
        "BWGF"[letter] +
        version +
        limit.length +
        ":" +
        limit +
        key.subject.length +
        ":" +
        key.subject +
        key.resource
      );
    return this.#prefix + "{" + tag + "}" + "bwgf"[letter] + version + limit.length + ":" + limit + key.id;
  }

  /** The name reservation `id`'s record lives at, on the slot of `key`'s state (`id` checked by the caller). */
  record(key: QuotaKey, id: string): string {
    return this.#prefix + "{" + this.tag(key) + "}v" + id;
  }

  /** The name a request id's stored answer lives at, on the slot of `key`'s state. */
  request(key: QuotaKey, requestId: unknown): string {
    if (typeof requestId !== "string" || requestId.length === 0 || requestId.length > MAX_KEY_PART) {
      const what = `requestId must be a non-empty string of at most ${MAX_KEY_PART} characters, got`;
      if (typeof requestId === "string" && requestId.length > 0)
        throw new RangeError(`${what} ${requestId.length} characters`);
      throw new TypeError(`${what} ${check.describe(requestId)}`);
    }
    return this.#prefix + "{" + this.tag(key) + "}r" + requestId;
  }
}

/**
 * Throws a {@link CrossSlotError} unless every name maps to one slot. Names that share a hash tag
 * share a slot: the tags are compared, and hashed only when they differ.
 */
export function sameSlot(names: readonly string[]): void {
  if (names.length < 2) return;
  const shared = tagIn(names[0]);
  let same = true;
  for (let i = 1; i < names.length && same; i++) same = tagIn(names[i]) === shared;
  if (same) return;
  const first = slotOf(names[0]);
  for (let i = 1; i < names.length; i++) {
    if (slotOf(names[i]) !== first) throw new CrossSlotError(names.map((key) => ({ key, slot: slotOf(key) })));
  }
}
