// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import { describe, expectTypeOf, test } from "vitest";
import { Shedder, shed } from "@tideward/shedder";
import { criticality } from "@tideward/concurrency";
import type { Levels, Shed, Ticket } from "@tideward/shedder";
import { LoadSampler, nodeSystem } from "@tideward/shedder/node";
import type { LoadSamplerOptions, SamplerSystem } from "@tideward/shedder/node";

describe("Shedder", () => {
  test("takes a Partial of the Shed policy laid over the preset", () => {
    expectTypeOf<ConstructorParameters<typeof Shedder>>().toEqualTypeOf<
      [policy?: Partial<Shed>, now?: number, priorities?: Levels]
    >();
    // A Priorities of @tideward/concurrency is a set of levels the shedder reads.
    new Shedder({}, 0, criticality);
    expectTypeOf(shed).toEqualTypeOf<Shed>();
    expectTypeOf(new Shedder({ ...shed, cpu: 800 }).policy).toEqualTypeOf<Shed>();
    expectTypeOf<keyof Shed>().toEqualTypeOf<"size" | "window" | "cpu" | "latency" | "beta" | "cool" | "floor">();
    // @ts-expect-error -- not a policy field
    new Shedder({ threshold: 800 });
    // @ts-expect-error -- the preset is readonly
    shed.cpu = 900;
  });

  test("allow answers a Ticket or undefined (shed)", () => {
    const ticket = new Shedder().allow(0, 500);
    expectTypeOf(ticket).toEqualTypeOf<Ticket | undefined>();
    // @ts-expect-error -- a refusal is undefined: check before settling
    ticket.pass(1);
    if (ticket !== undefined) {
      expectTypeOf<Ticket["pass"]>().parameters.toEqualTypeOf<[now: number]>();
      expectTypeOf<Ticket["fail"]>().parameters.toEqualTypeOf<[]>();
    }
    expectTypeOf(new Shedder().capacity(0, 500)).toEqualTypeOf<number>();
  });
});

describe("LoadSampler", () => {
  test("reads load in thousandths, and takes a partial system to stand in for Node's", () => {
    expectTypeOf(new LoadSampler().load).toEqualTypeOf<number>();
    expectTypeOf<LoadSamplerOptions["system"]>().toEqualTypeOf<Partial<SamplerSystem> | undefined>();
    expectTypeOf(nodeSystem).toEqualTypeOf<SamplerSystem>();
    new LoadSampler({ system: { now: () => 0 } });
    // @ts-expect-error -- load is read, never set
    new LoadSampler().load = 5;
  });
});
