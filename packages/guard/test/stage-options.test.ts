// A stage module's options join the options of each side its place names, and no other's: the
// types users write against (ClientStageOptions, ServerStageOptions, read from STAGES' types) and
// the option names the guard and admit check at run time (read from STAGES' places) agree, so a
// new policy is its module and its line in STAGES. The type assertions are checked by the
// package's typecheck, the lists by the run.
import { describe, expect, expectTypeOf, it } from "vitest";
import type { AdmitOptions, ClientStageOptions, GuardOptions, ServerStageOptions } from "@tideward/guard";
import { ADMIT_OPTIONS } from "../src/admit";
import { GUARD_OPTIONS } from "../src/options";
import type { OptionsOn, StageDef } from "../src/stage";
import { STAGES, stagesOf } from "../src/stages/index";

/** Each side's stage options, written out once: the types and the run-time lists are held to them. */
const CLIENT = ["bucket", "maxWait", "gate", "limit", "priority", "shedder", "load", "breaker", "budget"] as const;
const SERVER = ["shedder", "load", "gate", "limit", "priority", "limits", "maxKeys", "maxBytes", "quota"] as const;

/** A module of one more policy, standing on the server side only, with one option. */
interface HoldOption {
  /** How long a request may be held, in milliseconds. */
  readonly hold?: number;
}
const hold: StageDef<HoldOption, "server"> = {
  kind: "hold",
  options: ["hold"] satisfies (keyof HoldOption)[],
  place: { server: 60 },
  parse: () => undefined,
};
type Modules = (typeof STAGES)[number] | typeof hold;
/** A type's fields as one object type, their modifiers kept: an intersection compared field by field. */
type Fields<T> = { [K in keyof T]: T[K] };

describe("a stage module's options", () => {
  it("are those of the sides its place names, by type and at run time", () => {
    expectTypeOf<keyof ClientStageOptions>().toEqualTypeOf<(typeof CLIENT)[number]>();
    expectTypeOf<keyof ServerStageOptions>().toEqualTypeOf<(typeof SERVER)[number]>();
    expect(new Set(stagesOf("client").flatMap((d) => d.options))).toEqual(new Set(CLIENT));
    expect(new Set(stagesOf("server").flatMap((d) => d.options))).toEqual(new Set(SERVER));
    // What the guard and admit accept by name at run time, against what their types accept.
    for (const name of CLIENT) expect(GUARD_OPTIONS).toContain(name);
    for (const name of SERVER) expect(ADMIT_OPTIONS).toContain(name);
    expect(GUARD_OPTIONS).not.toContain("limits");
    expect(GUARD_OPTIONS).not.toContain("quota");
    expect(ADMIT_OPTIONS).not.toContain("bucket");
    expect(ADMIT_OPTIONS).not.toContain("breaker");
    expectTypeOf<"limits" | "quota">().not.toExtend<keyof GuardOptions>();
    expectTypeOf<"bucket" | "maxWait" | "breaker" | "budget">().not.toExtend<keyof AdmitOptions>();
  });

  it("stand on each side its place names, and a place must name its sides and only those", () => {
    for (const def of STAGES) {
      const sides = (["client", "server"] as const).filter((side) => def.place[side] !== undefined);
      expect(sides.length).toBeGreaterThan(0);
      for (const side of ["client", "server"] as const) {
        const names: readonly string[] = side === "client" ? CLIENT : SERVER;
        for (const option of def.options) expect(names.includes(option)).toBe(sides.includes(side));
      }
    }
    const _client: StageDef<HoldOption, "client"> = {
      kind: "hold",
      options: ["hold"],
      // @ts-expect-error -- placed on a side its type does not name
      place: { client: 1, server: 2 },
      parse: () => undefined,
    };
    const _both: StageDef<HoldOption, "client" | "server"> = {
      kind: "hold",
      options: ["hold"],
      // @ts-expect-error -- its type names both sides: the place must give both
      place: { client: 1 },
      parse: () => undefined,
    };
    void [_client, _both];
  });

  it("join a new module's options to its side with no other edit, each keeping its TSDoc'd declaration", () => {
    expectTypeOf<Fields<OptionsOn<Modules, "server">>>().toEqualTypeOf<Fields<ServerStageOptions & HoldOption>>();
    expectTypeOf<Fields<OptionsOn<Modules, "client">>>().toEqualTypeOf<Fields<ClientStageOptions>>();
    expectTypeOf<keyof OptionsOn<Modules, "server">>().toEqualTypeOf<(typeof SERVER)[number] | "hold">();
    expectTypeOf<keyof OptionsOn<typeof hold, "client">>().toEqualTypeOf<never>();
    // The field's type is the module's own declaration's.
    expectTypeOf<OptionsOn<Modules, "server">["hold"]>().toEqualTypeOf<HoldOption["hold"]>();
    expect(hold.options).toEqual(["hold"]);
  });
});
