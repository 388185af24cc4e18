// A response header field, as admission's verdict and each stage's rate-limit fields carry it.

/** A header field to append to the response: name and value. */
export type Field = readonly [name: string, value: string];

// What an admitted response carries when no field is due: one array for all of them.
export const NO_FIELDS: readonly Field[] = Object.freeze([]);
