// Bad input to the engine's and the limiters' calls, each refused with a clear message naming the
// field and the value, before anything is sent. No server needed: the client never connects, and a
// refusal must come before any call would.
import { describe, expect, it } from "vitest";
import { QuotaKey, charge, perSecond } from "@tideward/quota-engine";
import type { EvaluationInput, QuotaCharge } from "@tideward/quota-engine";
import { RedisBucket, RedisGcra, RedisPeriod } from "@tideward/redis";
import type { RedisQuotaEngine } from "@tideward/redis";
import { NOW_BOUND, any, down, engine } from "./bad-input";
import { alice } from "./keys";

const calls: [name: string, run: (e: RedisQuotaEngine) => unknown, throws: ErrorConstructor, message: string][] = [
  [
    "a limit option misspelt",
    (e) => e.addLimit(perSecond("x", 1), any({ shdow: true })),
    TypeError,
    'RedisQuotaEngine.addLimit has no option "shdow"; did you mean "shadow"?',
  ],
  [
    "shadow as a string",
    (e) => e.addLimit(perSecond("x", 1), { shadow: any("yes") }),
    TypeError,
    'RedisQuotaEngine.addLimit shadow must be a boolean, got string "yes"',
  ],
  [
    "cost 0",
    (e) => e.checkTokenBucket(alice, "req", 200, 0),
    RangeError,
    "cost must be a whole number of at least 1, got 0",
  ],
  [
    "a fractional cost",
    (e) => e.checkGcra(alice, "req", 200, 0.5),
    RangeError,
    "cost must be a whole number of at least 1, got 0.5",
  ],
  [
    "a cost as a string",
    (e) => e.checkWindow(alice, "req", 200, any("1")),
    TypeError,
    'cost must be a number, got string "1"',
  ],
  [
    "a NaN now",
    (e) => e.checkTokenBucket(alice, "req", NaN),
    RangeError,
    "now must be a finite number of milliseconds, got NaN",
  ],
  ["a now past 2^45 ms", (e) => e.checkTokenBucket(alice, "req", 1e20), RangeError, `now ${NOW_BOUND}`],
  [
    "a Date as now",
    (e) => e.checkGcra(alice, "req", any(new Date(0))),
    TypeError,
    "now must be a number of milliseconds, got object [object Date]",
  ],
  [
    "a key that is a plain object",
    (e) => e.checkTokenBucket(any({ scope: "a", subject: "b", resource: "c", id: "x" }), "req", 200),
    TypeError,
    "key must be a QuotaKey (new QuotaKey(scope, subject, resource)), got [object Object]",
  ],
  [
    "a forged key carrying a real key's id",
    (e) =>
      e.checkTokenBucket(Object.assign(Object.create(QuotaKey.prototype) as QuotaKey, { id: alice.id }), "req", 200),
    TypeError,
    "key must be a QuotaKey",
  ],
  [
    "a limit name that is not a string",
    (e) => e.checkTokenBucket(alice, any(7), 200),
    TypeError,
    "limit must be a limit name (a string), got number 7",
  ],
  [
    "an empty request id",
    (e) => e.checkTokenBucket(alice, "req", 200, 1, { requestId: "" }),
    TypeError,
    'requestId must be a non-empty string of at most 1024 characters, got ""',
  ],
  [
    "a request id past 1024 characters",
    (e) => e.checkWindow(alice, "req", 200, 1, { requestId: "r".repeat(1_025) }),
    RangeError,
    "requestId must be a non-empty string of at most 1024 characters, got 1025 characters",
  ],
  [
    "a misspelt request id option (it would charge a retry twice)",
    (e) => e.checkGcra(alice, "req", 200, 1, any({ requestID: "r-1" })),
    TypeError,
    'RedisQuotaEngine.checkGcra has no option "requestID"; did you mean "requestId"?',
  ],
  [
    "call options that are not an object",
    (e) => e.checkTokenBucket(alice, "req", 200, 1, any("r-1")),
    TypeError,
    'RedisQuotaEngine.checkTokenBucket options must be an object, got string "r-1"',
  ],
  [
    "a lease on an unknown limit",
    (e) => e.lease(alice, "nope", { slice: 5 }),
    RangeError,
    'lease: no limit named "nope"',
  ],
  [
    "a lease slice of 0",
    (e) => e.lease(alice, "req", { slice: 0 }),
    RangeError,
    "Lease slice must be 1 or more, got 0",
  ],
  [
    "a lease with no options, so no slice",
    (e) => e.lease(alice, "req", any(undefined)),
    TypeError,
    "Lease slice is missing",
  ],
  [
    "a misspelt lease option",
    (e) => e.lease(alice, "req", any({ slice: 5, refilAt: 0.5 })),
    TypeError,
    'Lease has no option "refilAt"; did you mean "refillAt"?',
  ],
];

const rejections: [
  name: string,
  run: (e: RedisQuotaEngine) => Promise<unknown>,
  throws: ErrorConstructor,
  message: string,
][] = [
  [
    "a charge set with a bad charge after good ones",
    (e) => e.checkAtomic([charge(alice, "req"), any<QuotaCharge>({ key: alice, limit: "req", cost: 2.5 })], 200),
    RangeError,
    "charges[1].cost must be a whole number of at least 1, got 2.5",
  ],
  [
    "a charge set at a now past 2^45",
    (e) => e.checkAtomic([charge(alice, "req")], 1e20),
    RangeError,
    `now ${NOW_BOUND}`,
  ],
  [
    "a charge set with a forged key",
    (e) => e.checkAtomic([charge(alice, "req"), charge(Object.create(QuotaKey.prototype) as QuotaKey, "req")], 200),
    TypeError,
    "charges[1].key must be a QuotaKey",
  ],
  [
    "a charge of an unknown kind",
    (e) => e.checkAtomic([any<QuotaCharge>({ key: alice, limit: "req", cost: 1, kind: "leaky" })], 200),
    TypeError,
    'charges[0].kind must be "bucket", "window" or "gcra", got "leaky"',
  ],
  [
    "charges that are not an array",
    (e) => e.peekAtomic(any({ length: 1 }), 200),
    TypeError,
    "charges must be an array of QuotaCharge, got [object Object]",
  ],
  [
    "a batch with a malformed input",
    (e) => e.checkMany("req", [{ key: alice, now: 200 }, any<EvaluationInput>({ key: "alice", now: 200 })]),
    TypeError,
    'inputs[1].key must be a QuotaKey (new QuotaKey(scope, subject, resource)), got "alice"',
  ],
  [
    "a batch with a forged key",
    (e) =>
      e.checkMany("req", [
        { key: alice, now: 200 },
        { key: Object.create(QuotaKey.prototype) as QuotaKey, now: 200 },
      ]),
    TypeError,
    "inputs[1].key must be a QuotaKey",
  ],
  [
    "a batch of an unknown kind, named before its inputs are read (as in process)",
    (e) => e.checkMany("req", any("nope"), any("leaky")),
    TypeError,
    'kind must be "bucket", "window" or "gcra", got "leaky"',
  ],
  [
    "a batch input at a now past 2^45",
    (e) => e.checkMany("req", [{ key: alice, now: 1e20 }]),
    RangeError,
    `inputs[0].now ${NOW_BOUND}`,
  ],
  [
    "a charge set with a misspelt request id option",
    (e) => e.checkAtomic([charge(alice, "req")], 200, any({ requestid: "r-1" })),
    TypeError,
    'RedisQuotaEngine.checkAtomic has no option "requestid"; did you mean "requestId"?',
  ],
  [
    "a reserve with a bad charge",
    (e) => e.reserve([any<QuotaCharge>({ key: alice, limit: "req", cost: -1 })], 200),
    RangeError,
    "charges[0].cost must be a whole number of at least 1, got -1",
  ],
  [
    "a reserve id starting with #",
    (e) => e.reserve([charge(alice, "req")], 200, { id: "#7" }),
    RangeError,
    'reserve options id must not start with "#" (the engine\'s own ids do), got "#7"',
  ],
  [
    "a reserve id past 256 characters",
    (e) => e.reserve([charge(alice, "req")], 200, { id: "r".repeat(257) }),
    RangeError,
    "reserve options id must be 1 to 256 characters, got 257",
  ],
  [
    "a reserve time to live of 0",
    (e) => e.reserve([charge(alice, "req")], 200, { ttl: 0 }),
    RangeError,
    "reserve options ttl must be from 1 to 17592186044416 ms (2^44), got 0",
  ],
  [
    "a misspelt reserve option",
    (e) => e.reserve([charge(alice, "req")], 200, any({ tll: 5 })),
    TypeError,
    'reserve options has no field "tll"; did you mean "ttl"?',
  ],
  [
    "a settle of a negative actual",
    (e) => e.settle("r", { req: -1 }, 200),
    RangeError,
    'actual["req"] must be a whole number of at least 0, got -1',
  ],
  [
    "a settle that is not an object of units",
    (e) => e.settle("r", any([3]), 200),
    TypeError,
    'actual must be an object of units per limit name ({ "tokens": 300 }), got an array',
  ],
  ["a cancel of an empty id", (e) => e.cancel("", 200), RangeError, "id must be 1 to 256 characters, got 0"],
  ["a cancel at a now past 2^45", (e) => e.cancel("r", 1e20), RangeError, `now ${NOW_BOUND}`],
  [
    "a hierarchical check of cost 0",
    (e) => e.checkHierarchy(alice, "req", 200, 0),
    RangeError,
    "cost must be a whole number of at least 1, got 0",
  ],
];

describe("bad input to calls: refused before anything is sent", () => {
  for (const [name, run, throws, message] of calls) {
    it(name, async () => {
      const e = await engine();
      let error: unknown;
      try {
        await run(e);
      } catch (x) {
        error = x;
      }
      expect(error).toBeInstanceOf(throws);
      expect((error as Error).message.startsWith(message)).toBe(true);
    });
  }
  for (const [name, run, throws, message] of rejections) {
    it(`${name} (a rejected promise)`, async () => {
      const e = await engine();
      const error = await run(e).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(error).toBeInstanceOf(throws);
      expect((error as Error).message.startsWith(message)).toBe(true);
    });
  }

  it("the limiters refuse costs and readings as the in-process ones word them", async () => {
    const bucket = new RedisBucket(down, "b", 5, { outage: "closed" });
    const refusals: [() => Promise<unknown>, ErrorConstructor, string][] = [
      [
        () => bucket.take("a", NaN),
        RangeError,
        "RedisBucket.take now must be a finite number of milliseconds, got NaN",
      ],
      [() => bucket.take("a", 1e20), RangeError, `RedisBucket.take now ${NOW_BOUND}`],
      [() => bucket.take("a", 0, -1), RangeError, "RedisBucket.take n must be 0 or more, got -1"],
      [() => bucket.peek("a", 0, any("1")), TypeError, 'RedisBucket.peek n must be a number, got string "1"'],
      [() => new RedisGcra(down, "g", 5).next("a", 0, NaN), RangeError, "RedisGcra.next n must be 0 or more, got NaN"],
      [
        () => new RedisPeriod(down, "p", 5, 1_000).take("a", any("0")),
        TypeError,
        'RedisPeriod.take now must be a number of milliseconds, got string "0"',
      ],
      [() => bucket.take("", 0), TypeError, 'id must be a non-empty string, got ""'],
    ];
    for (const [run, throws, message] of refusals) {
      const error = await Promise.resolve()
        .then(run)
        .then(
          () => undefined,
          (x: unknown) => x,
        );
      expect([message, error instanceof throws]).toEqual([message, true]);
      expect((error as Error).message).toBe(message);
    }
  });
});
