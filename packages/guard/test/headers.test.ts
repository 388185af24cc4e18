import fc from "fast-check";
import { parseList as reference, serializeList } from "structured-headers";
import { describe, expect, it } from "vitest";
import { clientAddress, parseRateLimit, parseResetField, parseRetryAfter, waitHint } from "@tideward/guard";

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

describe("reading a server's wait hints", () => {
  it("Retry-After: delay-seconds, the three HTTP date forms, and nonsense", () => {
    expect(parseRetryAfter("120", NOW)).toBe(120_000);
    expect(parseRetryAfter(" 0 ", NOW)).toBe(0);
    expect(parseRetryAfter(new Date(NOW + 30_000).toUTCString(), NOW)).toBe(30_000);
    expect(parseRetryAfter("Thursday, 15-Jan-26 12:00:10 GMT", NOW)).toBe(10_000); // RFC 850
    expect(parseRetryAfter("Thu Jan 15 12:00:20 2026", NOW - new Date(NOW).getTimezoneOffset() * 60_000)).toBe(20_000); // asctime (local time)
    expect(parseRetryAfter(new Date(NOW - 5_000).toUTCString(), NOW)).toBe(0); // in the past
    for (const bad of ["-1", "1.5", "soon", "", "12 s"]) expect(parseRetryAfter(bad, NOW), bad).toBeUndefined();
    expect(parseRetryAfter(null, NOW)).toBeUndefined();
  });

  it("an HTTP date is measured from the response's Date field when it has one", () => {
    const sent = new Date(NOW - 60_000).toUTCString(); // the server's clock is a minute behind
    const at = new Date(NOW - 60_000 + 7_000).toUTCString();
    expect(parseRetryAfter(at, NOW, sent)).toBe(7_000);
    expect(parseRetryAfter(at, NOW, "not a date")).toBe(0); // falls back to our clock
  });

  it("RateLimit: the longest t among exhausted policies, in draft 08+'s list or draft 07's dictionary", () => {
    expect(parseRateLimit('"default";r=0;t=30')).toBe(30_000);
    expect(parseRateLimit('"burst";r=0;t=2, "daily";r=0;t=3600')).toBe(3_600_000);
    expect(parseRateLimit('"burst";r=5;t=2, "daily";r=0;t=40')).toBe(40_000);
    expect(parseRateLimit('"default";r=3;t=30')).toBeUndefined(); // not exhausted
    expect(parseRateLimit("limit=100, remaining=0, reset=30")).toBe(30_000);
    for (const bad of [
      '"default";r=0;t=-1',
      '"default";r=0;t=1.5',
      '"default";r=0;t=',
      "r=0;t=5,",
      '"x";r=0;t=5;;',
      '"unterminated;r=0;t=1',
    ]) {
      expect(parseRateLimit(bad), bad).toBeUndefined();
    }
  });

  it("X-RateLimit-Reset as seconds from now, Unix seconds or Unix milliseconds", () => {
    expect(parseResetField("30", NOW)).toBe(30_000);
    expect(parseResetField(String(NOW / 1_000 + 12), NOW)).toBe(12_000);
    expect(parseResetField(String(NOW + 450), NOW)).toBe(450);
    expect(parseResetField(String(NOW / 1_000 - 100), NOW)).toBe(0);
    expect(parseResetField("soon", NOW)).toBeUndefined();
  });

  it("Retry-After takes precedence over RateLimit, which takes precedence over the older fields", () => {
    const h = (o: Record<string, string>) => new Headers(o);
    expect(waitHint(h({ "retry-after": "5", ratelimit: '"a";r=0;t=50', "x-ratelimit-reset": "500" }), NOW)).toBe(5_000);
    expect(waitHint(h({ ratelimit: '"a";r=0;t=50', "x-ratelimit-reset": "500" }), NOW)).toBe(50_000);
    expect(waitHint(h({ "ratelimit-reset": "7", "x-ratelimit-reset": "500" }), NOW)).toBe(7_000);
    expect(waitHint(h({ "x-ratelimit-reset": "500" }), NOW)).toBe(500_000);
    expect(waitHint(h({}), NOW)).toBeUndefined();
  });

  it("reads any well-formed RateLimit list as structured-headers does", () => {
    const name = fc.stringMatching(/^[\x20-\x7e]{0,12}$/);
    const member = fc.record({ name, r: fc.integer({ min: 0, max: 3 }), t: fc.integer({ min: 0, max: 100_000 }) });
    fc.assert(
      fc.property(fc.array(member, { minLength: 1, maxLength: 5 }), (members) => {
        const text = serializeList(
          members.map((m) => [
            m.name,
            new Map([
              ["r", m.r],
              ["t", m.t],
            ]),
          ]),
        );
        const parsed = reference(text);
        const exhausted = parsed.filter(([, p]) => p.get("r") === 0).map(([, p]) => (p.get("t") as number) * 1_000);
        expect(parseRateLimit(text)).toBe(exhausted.length === 0 ? undefined : Math.max(...exhausted));
      }),
      { numRuns: 300 },
    );
  });
});

describe("clientAddress", () => {
  it("ignores X-Forwarded-For without trusted hops, and takes the entry the trusted proxies saw", () => {
    expect(clientAddress("10.0.0.9", "1.1.1.1", 0)).toBe("10.0.0.9");
    expect(clientAddress("10.0.0.9", "6.6.6.6, 1.1.1.1", 1)).toBe("1.1.1.1");
    expect(clientAddress("10.0.0.9", "6.6.6.6, 1.1.1.1, 10.0.0.8", 2)).toBe("1.1.1.1");
    expect(clientAddress("10.0.0.9", ["6.6.6.6", "1.1.1.1"], 1)).toBe("1.1.1.1");
    expect(clientAddress("10.0.0.9", "1.1.1.1", 5)).toBe("1.1.1.1"); // fewer entries than hops: the furthest
    expect(clientAddress("10.0.0.9", undefined, 1)).toBe("10.0.0.9");
    expect(clientAddress(undefined, undefined, 0)).toBeUndefined();
  });

  it("never lets the client choose its key beyond the trusted entries", () => {
    fc.assert(
      fc.property(
        fc.array(fc.ipV4(), { maxLength: 5 }),
        fc.array(fc.ipV4(), { minLength: 1, maxLength: 3 }),
        fc.ipV4(),
        (spoofed, proxies, socket) => {
          // The trusted proxies wrote the last entries; the first of them is the client as the outermost proxy saw it.
          const hops = proxies.length;
          const header = [...spoofed, ...proxies].join(", ");
          expect(clientAddress(socket, header, hops)).toBe(proxies[0]);
        },
      ),
    );
  });
});
