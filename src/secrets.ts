/**
 * Secrets the service needs at run time: the JWT signing key and the key that encrypts webhook signing
 * secrets at rest (they must be recoverable to sign, so they are encrypted, never hashed).
 *
 * In development a missing JWT_SECRET is generated once and stored with the data, so tokens survive a
 * restart. The encryption key is derived from the JWT secret with HKDF under its own label.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Config } from './config.js';
import type { Db } from './db/db.js';

export interface Secrets {
  jwtKey: Uint8Array;
  encrypt(plaintext: string): string;
  decrypt(ciphertext: string): string;
}

async function storedSecret(db: Db, name: string): Promise<string> {
  const fresh = randomBytes(48).toString('base64url');
  // Insert-if-absent then read back: two processes starting together agree on one value.
  await db.query('INSERT INTO app_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, fresh]);
  const rows = await db.query<{ value: string }>('SELECT value FROM app_secrets WHERE name = $1', [name]);
  return rows[0].value;
}

export function secretsFrom(jwtSecret: string): Secrets {
  const jwtKey = new TextEncoder().encode(jwtSecret);
  const dataKey = Buffer.from(hkdfSync('sha256', jwtSecret, 'partner-api', 'webhook-secret-encryption', 32));
  return {
    jwtKey,
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', dataKey, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    },
    decrypt(ciphertext) {
      const [version, iv, tag, body] = ciphertext.split('.');
      if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unknown secret format');
      const decipher = createDecipheriv('aes-256-gcm', dataKey, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

export async function loadSecrets(config: Config, db: Db): Promise<Secrets> {
  return secretsFrom(config.jwtSecret ?? (await storedSecret(db, 'jwt_secret')));
}
