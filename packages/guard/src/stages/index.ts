// Every policy the guard and admit compose, one module each. A new policy is a module in this
// folder and its line in STAGES: its options join the guard's and admit's by the sides its
// `place` names (ClientStageOptions, ServerStageOptions, read from its StageDef's types), its
// stage joins their pipelines, the simulator's policies and otel's gauges, and a server's refusal
// by it is answered with the status and the RateLimit fields its stage gives (`status`, `fields`:
// see stage.ts).
import type { OptionsOn, Side, StageDef } from "../stage";
import { breaker } from "./breaker";
import { bucket } from "./bucket";
import { budget } from "./budget";
import { gate } from "./gate";
import { keyed } from "./keyed";
import { limit } from "./limit";
import { quota } from "./quota";
import { shedder } from "./shedder";

/** Every stage's module. */
export const STAGES = [bucket, gate, limit, shedder, breaker, budget, keyed, quota] as const;

/** The options the stages of a client guard own. */
export type ClientStageOptions = OptionsOn<(typeof STAGES)[number], "client">;

/** The options the stages of a server admission (`admit`) own. */
export type ServerStageOptions = OptionsOn<(typeof STAGES)[number], "server">;

/** The modules of one side, in the order their stages are asked. */
export function stagesOf(side: Side): readonly StageDef[] {
  return (STAGES as readonly StageDef[])
    .filter((d) => d.place[side] !== undefined)
    .sort((a, b) => (a.place[side] as number) - (b.place[side] as number));
}
