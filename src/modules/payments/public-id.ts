import { randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `prefix` + 24 base62 characters from a CSPRNG (payment intents, settlements, lines, refunds). */
export function publicId(prefix: string): string {
  let id = prefix;
  for (let i = 0; i < 24; i++) id += BASE62[randomInt(62)];
  return id;
}
