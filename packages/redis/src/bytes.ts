// Script replies as bytes: a key's state crosses as two binary doubles, never decoded as text.
/**
 * A script's reply as bytes. Clients answer bulk strings as a `Buffer` (ioredis's `…Buffer`
 * commands, node-redis with a type mapping); any other `Uint8Array` is viewed as one.
 *
 * @throws TypeError when the client answered text: the state would have been decoded as UTF-8
 */
export function bytes(reply: unknown): Buffer {
  if (Buffer.isBuffer(reply)) return reply;
  if (reply instanceof Uint8Array) return Buffer.from(reply.buffer, reply.byteOffset, reply.byteLength);
  throw new TypeError(
    `[tideward] [redis] a ScriptClient must answer a script's bulk-string reply as bytes (a Buffer or Uint8Array), got ${typeof reply}: see ioredisClient and nodeRedisClient`,
  );
}
