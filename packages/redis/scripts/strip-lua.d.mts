/** The text of a .lua file that is sent to Redis: its first line and its code, without comment-only or blank lines. */
export function stripLua(source: string): string;
