// Script replies as bytes: a key's state crosses as binary doubles, never decoded as text.
import { ScriptError } from "./runner";

/**
 * A script's reply as bytes, at least `least` of them. Clients answer bulk strings as a `Buffer`
 * (ioredis's `…Buffer` commands, node-redis with a type mapping); any other `Uint8Array` is
 * viewed as one.
 *
 * @throws TypeError when the client answered text: the state would have been decoded as UTF-8; a
 *   ScriptError naming `script` when the reply is shorter than the script ever answers (a client
 *   or a proxy in between altered it)
 */
export function bytes(reply: unknown, script: string, least: number): Buffer {
  let r: Buffer;
  if (Buffer.isBuffer(reply)) r = reply;
  else if (reply instanceof Uint8Array) r = Buffer.from(reply.buffer, reply.byteOffset, reply.byteLength);
  else
    throw new TypeError(
      `[tideward] [redis] a ScriptClient must answer a script's bulk-string reply as bytes (a Buffer or Uint8Array), got ${typeof reply}: see ioredisClient and nodeRedisClient`,
    );
  if (r.length < least) throw shortReply(script, r.length, least);
  return r;
}

/** The error of a reply of `got` bytes where `script` answers at least `least`. */
export function shortReply(script: string, got: number, least: number): ScriptError {
  return new ScriptError(
    script,
    new Error(`its reply has ${got} bytes where it answers ${least} or more: a client or proxy in between altered it`),
  );
}
