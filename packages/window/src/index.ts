export { Window } from "./window";
export type { EachOptions, Resettable, WindowOptions } from "./window";
export { Tally, Total } from "./tally";
export type { Outcome } from "./tally";
export { checkReading, layAt, layWindow, readWindow, saveWindow } from "./saved";
export type { SavedWindow } from "./saved";
