import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_KEY_PART, QuotaEngine, QuotaKey, perSecond } from "@tideward/quota-engine";

const part = fc.string({
  minLength: 1,
  maxLength: 12,
  unit: fc.constantFrom("a", "b", ":", "|", "1", "9", '"', "'", "\\", "\0", "é", " "),
});

describe("QuotaKey", () => {
  it("prefixes each part with its length", () => {
    expect(new QuotaKey("tenant-a", "alice", "llm").id).toBe("8:tenant-a5:alice3:llm");
  });

  it("does not collide when a separator moves between parts", () => {
    const ids = [
      new QuotaKey("a:b", "c", "x").id,
      new QuotaKey("a", "b:c", "x").id,
      new QuotaKey("a", "b", "c:x").id,
      new QuotaKey("a:b:c", "x", "y").id,
    ];
    expect(new Set(ids).size).toBe(4);
    expect(new QuotaKey("1:a", "b", "c").id).not.toBe(new QuotaKey("1", "a", "b").id);
  });

  it("keeps quotes, backslashes, digits and colons as they are", () => {
    const key = new QuotaKey('say "hi"', "3:x", "a\\b'c");
    expect(QuotaKey.parse(key.id)).toEqual(key);
    expect(String(key)).toBe(key.id);
    expect(JSON.parse(JSON.stringify(key))).toEqual({ scope: 'say "hi"', subject: "3:x", resource: "a\\b'c" });
  });

  it("ids are equal exactly when all three parts are (property)", () => {
    fc.assert(
      fc.property(part, part, part, part, part, part, (a, b, c, d, e, f) => {
        const same = a === d && b === e && c === f;
        return (new QuotaKey(a, b, c).id === new QuotaKey(d, e, f).id) === same;
      }),
      { numRuns: 2_000 },
    );
  });

  it("parse is the inverse of id (property)", () => {
    fc.assert(
      fc.property(part, part, part, (a, b, c) => {
        const key = QuotaKey.parse(new QuotaKey(a, b, c).id);
        return key.scope === a && key.subject === b && key.resource === c;
      }),
    );
  });

  it("accepts parts up to MAX_KEY_PART characters and refuses longer ones", () => {
    const long = "x".repeat(MAX_KEY_PART);
    expect(QuotaKey.parse(new QuotaKey(long, long, long).id).resource).toBe(long);
    expect(() => new QuotaKey("a", long + "x", "c")).toThrow(
      new RangeError(`QuotaKey subject must be at most ${MAX_KEY_PART} characters, got ${MAX_KEY_PART + 1}`),
    );
  });

  it("refuses empty parts and non-strings, naming the part", () => {
    expect(() => new QuotaKey("", "b", "c")).toThrow(RangeError);
    expect(() => new QuotaKey("a", "", "c")).toThrow(
      'QuotaKey subject must not be empty (use a placeholder such as "*")',
    );
    expect(() => new QuotaKey("a", "b", 7 as unknown as string)).toThrow(
      new TypeError("QuotaKey resource must be a string, got number 7"),
    );
  });

  it("parse refuses anything but three length-prefixed parts", () => {
    for (const bad of [
      "",
      "1:a1:b",
      "1:a1:b1:c1:d",
      "2:a1:b1:c",
      "1:a1:b1:cd",
      "0:1:b1:c",
      "01:a1:b1:c",
      "a:b:c",
      "-1:a1:b1:c",
    ]) {
      expect(() => QuotaKey.parse(bad), bad).toThrow(RangeError);
    }
  });

  it("is frozen: its parts and id cannot be reassigned, so snapshot() keeps working", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 5));
    const key = new QuotaKey("t", "alice", "api");
    engine.checkTokenBucket(key, "r", 1_000, 2);
    expect(Object.isFrozen(key)).toBe(true);
    expect(() => {
      (key as { id: string }).id = "garbage";
    }).toThrow(TypeError);
    expect(() => Object.defineProperty(key, "id", { value: "garbage" })).toThrow(TypeError);
    expect(key.id).toBe("1:t5:alice3:api");
    expect(engine.snapshot().fullAt).toEqual([
      { key: { scope: "t", subject: "alice", resource: "api" }, limit: "r", full: 1_400 },
    ]);
    expect(engine.checkTokenBucket(key, "r", 1_000).remaining).toBe(2);
  });

  it("a forged key (the prototype, a real key's id) is refused before any state is touched", () => {
    const engine = new QuotaEngine();
    engine.addLimit(perSecond("r", 5));
    const real = new QuotaKey("t", "alice", "api");
    engine.checkTokenBucket(real, "r", 1_000, 4);
    const before = JSON.stringify(engine.snapshot());
    const forged = Object.assign(Object.create(QuotaKey.prototype) as QuotaKey, {
      id: real.id,
      scope: "t",
      subject: "alice",
      resource: "api",
    });
    expect(forged instanceof QuotaKey).toBe(true); // it passes instanceof, and is still refused
    const refusal = "must be a QuotaKey (new QuotaKey(scope, subject, resource)), got [object Object]";
    expect(() => engine.checkTokenBucket(forged, "r", 1_000)).toThrow(new TypeError(`key ${refusal}`));
    expect(() => engine.checkWindow(forged, "r", 1_000)).toThrow(new TypeError(`key ${refusal}`));
    expect(() => engine.checkGcra(forged, "r", 1_000)).toThrow(new TypeError(`key ${refusal}`));
    expect(() => engine.checkHierarchy(forged, "r", 1_000)).toThrow(new TypeError(`key ${refusal}`));
    expect(() =>
      engine.checkAtomic(
        [
          { key: real, limit: "r", cost: 1 },
          { key: forged, limit: "r", cost: 1 },
        ],
        1_000,
      ),
    ).toThrow(new TypeError(`charges[1].key ${refusal}`));
    expect(() => engine.checkMany("r", [{ key: forged, now: 1_000 }])).toThrow(
      new TypeError(`inputs[0].key ${refusal}`),
    );
    expect(JSON.stringify(engine.snapshot())).toBe(before);
    expect(engine.checkTokenBucket(real, "r", 1_000).remaining).toBe(0); // the real bucket held 1
  });
});
