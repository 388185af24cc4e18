// Client identity: the key an address counts under (IPv6 by its prefix, IPv4-mapped as IPv4, one
// key for every textual form of one address), and the hop rule over X-Forwarded-For and RFC
// 7239's Forwarded. Node's own net.isIP and the WHATWG URL serializer are the oracles.
import { isIP } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addressKey, admit, admitFetch, clientAddress } from "@tideward/guard";
import { admitNode } from "@tideward/guard/node";
import { back, element } from "../src/forwarded";

const group = fc.oneof(
  { weight: 2, arbitrary: fc.constant(0) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 0xffff }) },
);
const groups = fc.array(group, { minLength: 8, maxLength: 8 });
const octets = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 });

function isMapped(g: readonly number[]): boolean {
  return g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff;
}

/** The key by other means: the bits masked here, the text written by the WHATWG URL serializer. */
function reference(g: readonly number[], prefix: number): string {
  if (isMapped(g)) return `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
  const masked = g.map((x, k) => {
    const keep = Math.max(0, Math.min(16, prefix - 16 * k));
    return keep === 0 ? 0 : x & ((0xffff << (16 - keep)) & 0xffff);
  });
  const host = new URL(`http://[${masked.map((x) => x.toString(16)).join(":")}]/`).hostname;
  return `${host.slice(1, -1)}/${prefix}`;
}

/** How one textual form of an IPv6 address is written. */
const form = fc.record({
  widths: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 8, maxLength: 8 }),
  upper: fc.array(fc.boolean(), { minLength: 32, maxLength: 32 }),
  compress: fc.nat(),
  dotted: fc.boolean(),
  wrap: fc.constantFrom("bare", "zone", "brackets", "port", "zone-port"),
  port: fc.integer({ min: 0, max: 65_535 }),
  zone: fc.stringMatching(/^[A-Za-z0-9._~-]{1,8}$/),
});
type Form = typeof form extends fc.Arbitrary<infer F> ? F : never;

function write(g: readonly number[], f: Form): string {
  let letter = 0;
  const hex = (x: number, k: number) =>
    [...x.toString(16).padStart(Math.min(4, x.toString(16).length + f.widths[k]), "0")]
      .map((c) => (f.upper[letter++ % 32] ? c.toUpperCase() : c))
      .join("");
  // The last 32 bits as a dotted quad, or as two groups.
  const words = f.dotted ? g.slice(0, 6) : [...g];
  const tokens = words.map(hex);
  // One run of zero groups (of any length, one included, as RFC 4291 reads) becomes `::`.
  const runs: [number, number][] = [];
  for (let k = 0; k < words.length; k++) {
    if (words[k] !== 0) continue;
    for (let j = k; j < words.length && words[j] === 0; j++) runs.push([k, j + 1]);
  }
  let text: string;
  const quad = f.dotted ? `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}` : undefined;
  const tail = quad === undefined ? [] : [quad];
  if (runs.length > 0 && f.compress % (runs.length + 1) !== runs.length) {
    const [s, e] = runs[f.compress % (runs.length + 1)];
    text = `${tokens.slice(0, s).join(":")}::${[...tokens.slice(e), ...tail].join(":")}`;
  } else text = [...tokens, ...tail].join(":");
  switch (f.wrap) {
    case "bare":
      return text;
    case "zone":
      return `${text}%${f.zone}`;
    case "brackets":
      return `[${text}]`;
    case "port":
      return `[${text}]:${f.port}`;
    case "zone-port":
      return `[${text}%${f.zone}]:${f.port}`;
  }
}

describe("addressKey", () => {
  it("keys IPv6 by its prefix, IPv4 and IPv4-mapped IPv6 as IPv4, and refuses what is no address", () => {
    const rows: [string, string | undefined][] = [
      ["203.0.113.7", "203.0.113.7"],
      ["203.0.113.7:41234", "203.0.113.7"],
      ["::ffff:203.0.113.7", "203.0.113.7"],
      ["::ffff:cb00:7107", "203.0.113.7"], // the same address in hex
      ["0:0:0:0:0:FFFF:CB00:7107", "203.0.113.7"],
      ["[::ffff:203.0.113.7]:443", "203.0.113.7"],
      ["2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"],
      ["2001:DB8:0001:0002:FFFF:FFFF:FFFF:FFFF", "2001:db8:1:2::/64"],
      ["[2001:db8:1:2::1]:443", "2001:db8:1:2::/64"],
      ["fe80::1%eth0", "fe80::/64"],
      ["[fe80::1%25eth0]:443", "fe80::/64"],
      ["2001:db8::1.2.3.4", "2001:db8::/64"], // a dotted quad at the end is not a mapped address
      ["64:ff9b::1.2.3.4", "64:ff9b::/64"], // NAT64's prefix stays IPv6
      ["::ffff:0:1.2.3.4", "::/64"], // ::ffff:0:0/96 is not the mapped range
      ["::1", "::/64"],
      ["1:2:3:4:5:6:7:8", "1:2:3:4::/64"],
      ["1.2.3.4:_obfport", "1.2.3.4"],
      // No address: the socket stands in their place.
      ["unknown", undefined],
      ["_hidden", undefined],
      ["example.com", undefined],
      ["01.2.3.4", undefined], // octal to some readers
      ["1.2.3", undefined],
      ["256.1.1.1", undefined],
      ["1.2.3.4:65536", undefined],
      ["1.2.3.4:", undefined],
      ["[1.2.3.4]", undefined],
      ["[::1", undefined],
      ["[::1]:", undefined],
      ["[::1]80", undefined],
      ["::1:80:", undefined],
      ["1:::2", undefined],
      [":1::2", undefined],
      ["1::2::3", undefined],
      ["1:2:3:4:5:6:7:8:9", undefined],
      ["1:2:3:4:5:6:7:1.2.3.4", undefined],
      ["2001:db8::12345", undefined],
      ["fe80::1%", undefined],
      ["fe80::1%eth 0", undefined],
      [" 1.2.3.4", undefined],
      ["", undefined],
      [`2001:db8::1%${"z".repeat(200)}`, undefined], // past 128 characters
    ];
    for (const [text, key] of rows) expect([text, addressKey(text)]).toEqual([text, key]);
    expect(addressKey("2001:db8:1:2:aaaa::1", 48)).toBe("2001:db8:1::/48");
    expect(addressKey("2001:db8:1:2:aaaa::1", 128)).toBe("2001:db8:1:2:aaaa::1/128");
    expect(addressKey("2001:db8:1:2:aaaa::1", 1)).toBe("::/1");
    expect(addressKey("ffff::", 3)).toBe("e000::/3");
  });

  it("refuses a prefix length that is not a whole number from 1 to 128, naming the option", () => {
    expect(() => addressKey("::1", 0)).toThrow(
      new RangeError(
        "addressKey ipv6Prefix (leading bits of an IPv6 address that name one client) must be 1 or more, got 0",
      ),
    );
    expect(() => addressKey("::1", 129)).toThrow(
      new RangeError(
        "addressKey ipv6Prefix (leading bits of an IPv6 address that name one client) must be 128 or less, got 129",
      ),
    );
    expect(() => addressKey("::1", 63.5)).toThrow(/ipv6Prefix .* must be a whole number, got 63.5/);
    expect(() => addressKey("::1", "64" as unknown as number)).toThrow(TypeError);
    expect(() => addressKey(undefined as unknown as string)).toThrow(
      new TypeError("addressKey address must be a string, got undefined"),
    );
  });

  it("gives every textual form of one IPv6 address one key, the one written by other means", () => {
    fc.assert(
      fc.property(
        groups,
        fc.array(form, { minLength: 2, maxLength: 6 }),
        fc.integer({ min: 1, max: 128 }),
        (g, forms, prefix) => {
          const want = reference(g, prefix);
          for (const f of forms) {
            const text = write(g, f);
            expect([text, addressKey(text, prefix)]).toEqual([text, want]);
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it("keys an IPv4 address however it is written, as IPv4 or mapped into IPv6", () => {
    fc.assert(
      fc.property(octets, form, fc.integer({ min: 0, max: 65_535 }), (o, f, port) => {
        const dotted = o.join(".");
        const g = [0, 0, 0, 0, 0, 0xffff, o[0] * 256 + o[1], o[2] * 256 + o[3]];
        for (const text of [dotted, `${dotted}:${port}`, write(g, f)])
          expect([text, addressKey(text)]).toEqual([text, dotted]);
      }),
      { numRuns: 1_000 },
    );
  });

  it("maps two addresses to one key exactly when they share their first ipv6Prefix bits: distinct /64s never meet", () => {
    const bit = (g: readonly number[], i: number) => (g[i >> 4] >> (15 - (i & 15))) & 1;
    fc.assert(
      fc.property(
        groups,
        groups,
        fc.integer({ min: 0, max: 127 }),
        fc.integer({ min: 1, max: 128 }),
        (a, other, shared, prefix) => {
          // b shares a's first `shared` bits, so both outcomes come up often.
          const b = a.map((x, k) => {
            const keep = Math.max(0, Math.min(16, shared - 16 * k));
            const mask = keep === 0 ? 0 : (0xffff << (16 - keep)) & 0xffff;
            return (x & mask) | (other[k] & ~mask & 0xffff);
          });
          fc.pre(!isMapped(a) && !isMapped(b));
          let same = true;
          for (let i = 0; i < prefix; i++) if (bit(a, i) !== bit(b, i)) same = false;
          const ka = addressKey(a.map((x) => x.toString(16)).join(":"), prefix);
          const kb = addressKey(b.map((x) => x.toString(16)).join(":"), prefix);
          expect(ka === kb).toBe(same);
        },
      ),
      { numRuns: 3_000 },
    );
    fc.assert(
      fc.property(octets, octets, (a, b) => {
        expect(addressKey(a.join(".")) === addressKey(b.join("."))).toBe(a.join(".") === b.join("."));
      }),
    );
  });

  it("reads an address exactly when node's net.isIP does, for bare forms and their mutations", () => {
    const alphabet = fc.constantFrom(..."0123456789abcdefABCDEFgx:.[]%_ -");
    const mutate = fc.array(fc.tuple(fc.nat(), fc.nat(), alphabet), { maxLength: 3 });
    fc.assert(
      fc.property(
        fc.oneof(
          groups.map((g) => g.map((x) => x.toString(16)).join(":")),
          fc.tuple(groups, form).map(([g, f]) => write(g, { ...f, wrap: "bare" })),
          octets.map((o) => o.join(".")),
        ),
        mutate,
        (text, edits) => {
          let s = text;
          for (const [where, how, c] of edits) {
            const i = s.length === 0 ? 0 : where % s.length;
            s =
              how % 3 === 0
                ? s.slice(0, i) + s.slice(i + 1)
                : how % 3 === 1
                  ? s.slice(0, i) + c + s.slice(i)
                  : s.slice(0, i) + c + s.slice(i + 1);
          }
          // Where node reads no zone and no port: a bare address, either family.
          const colons = s.split(":").length - 1;
          fc.pre(!s.includes("%") && !s.includes("[") && colons !== 1);
          expect([s, addressKey(s) !== undefined]).toEqual([s, isIP(s) !== 0]);
        },
      ),
      { numRuns: 5_000 },
    );
  });
});

describe("clientAddress", () => {
  it("reads Forwarded's for parameter, quoted IPv6 with a port, in any case, and lets unknown and obfuscated nodes fall to the socket", () => {
    const fwd = (field: string | string[], hops = 1) => clientAddress("10.0.0.9", field, { hops, header: "forwarded" });
    expect(fwd('for="[2001:DB8::1]:4711"')).toBe("2001:db8::1");
    expect(fwd("for=192.0.2.43;proto=https;by=203.0.113.60")).toBe("192.0.2.43");
    expect(fwd("proto=https;For=192.0.2.43")).toBe("192.0.2.43");
    expect(fwd('for="192.0.2.43:47011"')).toBe("192.0.2.43");
    expect(fwd("for=192.0.2.43, for=198.51.100.17")).toBe("198.51.100.17");
    expect(fwd("for=192.0.2.43, for=198.51.100.17", 2)).toBe("192.0.2.43");
    expect(fwd(["for=192.0.2.43", "for=198.51.100.17;by=_proxy1"], 2)).toBe("192.0.2.43");
    expect(fwd('for="\\[2001:db8::1\\]"')).toBe("2001:db8::1"); // a quoted-pair is the character it escapes
    // An unquoted IPv6 node, as some proxies write it, is still one address.
    expect(fwd("for=[2001:db8::1]")).toBe("2001:db8::1");
    for (const bad of [
      "for=unknown",
      "for=_hidden",
      'for="_gazonk"',
      "proto=https", // no for
      "for=1.2.3.4;for=1.2.3.5", // named twice
      'for="1.2.3.4', // a quote that does not close
      "for=1.2.3.4 junk",
      "for",
      "=1.2.3.4",
      "fo r=1.2.3.4",
      "for=",
    ])
      expect([bad, fwd(bad)]).toEqual([bad, "10.0.0.9"]);
  });

  it("strips ports from X-Forwarded-For, so a client cannot take a key a connection (express-rate-limit #234)", () => {
    expect(clientAddress("10.0.0.9", "6.6.6.6, 203.0.113.7:41234", 1)).toBe("203.0.113.7");
    expect(clientAddress("10.0.0.9", "[2001:db8::7]:41234", 1)).toBe("2001:db8::7");
    expect(clientAddress("10.0.0.9", "unknown", 1)).toBe("10.0.0.9");
    expect(clientAddress("::ffff:10.0.0.9", "", 1)).toBe("10.0.0.9");
    expect(clientAddress("a-unix-socket", undefined, 0)).toBe("a-unix-socket"); // the runtime's own words stand
  });

  it("reads only the header it is told: X-Forwarded-For syntax in Forwarded, and the other way, is no address", () => {
    expect(clientAddress("10.0.0.9", "203.0.113.7", { hops: 1, header: "forwarded" })).toBe("10.0.0.9");
    expect(clientAddress("10.0.0.9", "for=203.0.113.7", { hops: 1 })).toBe("10.0.0.9");
    expect(clientAddress("10.0.0.9", "for=203.0.113.7", { hops: 0, header: "forwarded" })).toBe("10.0.0.9");
  });

  const node = fc.oneof(
    octets.map((o) => ({ address: o.join("."), xff: o.join("."), fwd: `for=${o.join(".")}` })),
    fc.tuple(groups, form).map(([g, f]) => {
      const text = write(g, { ...f, wrap: f.wrap === "zone" ? "bare" : f.wrap === "zone-port" ? "port" : f.wrap });
      const address = isMapped(g) ? reference(g, 128) : reference(g, 128).slice(0, -4);
      return { address, xff: text, fwd: `for="${text.startsWith("[") ? text : `[${text}]`}";proto=https` };
    }),
  );

  it("never lets a client choose its address beyond the trusted entries, whatever it writes before them", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'abc019:;=,"\\[]_ .%') }),
        fc.array(node, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        (spoofed, proxies, lines) => {
          const hops = proxies.length;
          for (const header of ["x-forwarded-for", "forwarded"] as const) {
            const entries = proxies.map((p) => (header === "forwarded" ? p.fwd : p.xff));
            const field = lines ? [spoofed, ...entries] : [spoofed, ...entries].join(", ");
            expect(clientAddress("10.0.0.9", field, { hops, header })).toBe(proxies[0].address);
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it("falls back to the socket when the entry the trusted proxy wrote is no address", () => {
    fc.assert(
      fc.property(
        fc
          .string({ unit: fc.constantFrom(..."abcxyz019_.-:[]") })
          .filter((s) => s.trim() !== "" && addressKey(s.trim()) === undefined),
        fc.array(node, { maxLength: 3 }),
        (junk, proxies) => {
          const hops = proxies.length + 1;
          expect(clientAddress("::ffff:10.0.0.9", [junk, ...proxies.map((p) => p.xff)].join(", "), hops)).toBe(
            "10.0.0.9",
          );
          const fwd = [`for="${junk}"`, ...proxies.map((p) => p.fwd)].join(", ");
          expect(clientAddress("::ffff:10.0.0.9", fwd, { hops, header: "forwarded" })).toBe("10.0.0.9");
        },
      ),
    );
  });

  it("reads a header of 100 000 entries from its end: the lines read are the trusted ones, however many precede them", () => {
    const n = 100_000;
    for (const header of ["x-forwarded-for", "forwarded"] as const) {
      const write = (i: number) => {
        const address = `2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`;
        return header === "forwarded" ? `for="[${address}]:443"` : address;
      };
      const lines = Array.from({ length: n }, (_, i) => write(i));
      for (const hops of [1, 3, n]) {
        let read = 0;
        const counted = new Proxy(lines, {
          get(target, property, receiver) {
            if (typeof property === "string" && /^\d+$/.test(property)) read++;
            return Reflect.get(target, property, receiver) as unknown;
          },
        });
        const want = addressKey(write(Math.max(0, n - hops)).replace(/^for="|"$/g, ""), 128)?.replace("/128", "");
        expect(clientAddress("10.0.0.9", counted, { hops, header })).toBe(want);
        // Linear in the entries it needs: hops lines, not the 100 000.
        expect(read).toBe(Math.min(hops, n));
      }
      // One line of 100 000 entries, the first a quote that never closes (a reader from the left
      // would find the whole field malformed): the walk from the end stops at the trusted entry.
      const field = [header === "forwarded" ? 'for="' : "x", ...lines.slice(1)].join(", ");
      expect(back(field, 2, header === "forwarded")).toBe(2);
      expect(field.length - element.at).toBeLessThanOrEqual(2 * (write(n - 1).length + 2));
      expect(clientAddress("10.0.0.9", field, { hops: 2, header })).toBe(
        addressKey(write(n - 2).replace(/^for="|"$/g, ""), 128)?.replace("/128", ""),
      );
    }
  });
});

describe("adapter options", () => {
  const admission = admit({ limits: [{ name: "one", quota: 1, window: 1_000 }] });
  const handler = () => new Response("ok");
  it("refuses a bad ipv6Prefix or trustProxy, naming the adapter's option", () => {
    for (const [make, owner] of [
      [(o: object) => admitNode(admission, o), "admitNode"],
      [(o: object) => admitFetch(admission, handler, o), "admitFetch"],
    ] as const) {
      expect(() => make({ ipv6Prefix: 0 })).toThrow(
        `${owner} ipv6Prefix (leading bits of an IPv6 address that name one client) must be 1 or more, got 0`,
      );
      expect(() => make({ ipv6Prefix: 200 })).toThrow(
        `${owner} ipv6Prefix (leading bits of an IPv6 address that name one client) must be 128 or less, got 200`,
      );
      expect(() => make({ ipv6Subnet: 56 })).toThrow(`${owner} has no option "ipv6Subnet"`);
      expect(() => make({ trustProxy: -1 })).toThrow(`${owner} trustProxy (trusted proxies) must be 0 or more, got -1`);
      expect(() => make({ trustProxy: "1" })).toThrow(
        `${owner} trustProxy must be a number of trusted proxies or { hops, header }, got "1"`,
      );
      expect(() => make({ trustProxy: { hop: 1 } })).toThrow(
        `${owner} trustProxy has no option "hop"; did you mean "hops"?`,
      );
      expect(() => make({ trustProxy: { header: "forwarded" } })).toThrow(
        `${owner} trustProxy.hops (trusted proxies) must be given`,
      );
      expect(() => make({ trustProxy: { hops: 1, header: "x-forwarded-fro" } })).toThrow(
        `${owner} trustProxy.header must be "x-forwarded-for" or "forwarded", got "x-forwarded-fro"; did you mean "x-forwarded-for"?`,
      );
      expect(() => make({ trustProxy: { hops: 1, header: "X-Real-IP" } })).toThrow(
        `${owner} trustProxy.header must be "x-forwarded-for" or "forwarded", got "X-Real-IP"`,
      );
      // Header names are read in any case.
      expect(() => make({ trustProxy: { hops: 1, header: "Forwarded" }, ipv6Prefix: 56 })).not.toThrow();
    }
  });
});
