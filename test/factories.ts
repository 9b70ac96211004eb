/**
 * Factories for test data that other domains' tests need as a given (a partner, its token, a key),
 * written by the domains' own repo functions (no SQL restated here). Each test sets up its own partner.
 */
import { randomInt } from 'node:crypto';
import type { AppContext } from '../src/context.js';
import { insertUserIfAbsent } from '../src/modules/auth/auth.repo.js';
import { signAccessToken } from '../src/modules/auth/tokens.js';
import { generateKey } from '../src/modules/keys/key-format.js';
import { insertKey } from '../src/modules/keys/keys.repo.js';
import { insertPartner } from '../src/modules/partners/partners.repo.js';
import { newId } from '../src/shared/ids.js';
import type { ApiKeyEnvironment, ApiKeyScope } from '../src/shared/schemas.js';

export function randomPhone(): string {
  return `+99450${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;
}

export interface TestPartner {
  id: string;
  name: string;
  userId: string;
  phone: string;
  /** A bearer access token of the partner's user. */
  token: string;
  auth: { authorization: string };
}

export async function createPartner(ctx: AppContext, name = `Partner ${randomInt(1e6)}`): Promise<TestPartner> {
  const now = ctx.clock.now();
  const id = newId();
  const userId = newId();
  const phone = randomPhone();
  await insertPartner({ id, name }, now, ctx.db);
  await insertUserIfAbsent({ id: userId, phone, role: 'PARTNER', partnerId: id }, now, ctx.db);
  const token = await signAccessToken(ctx.secrets.jwtKey, ctx.clock, { userId, role: 'PARTNER', partnerId: id });
  return { id, name, userId, phone, token, auth: { authorization: `Bearer ${token}` } };
}

export async function createUser(
  ctx: AppContext,
  role: 'ADMIN' | 'CUSTOMER',
): Promise<{ userId: string; phone: string; token: string; auth: { authorization: string } }> {
  const userId = newId();
  const phone = randomPhone();
  await insertUserIfAbsent({ id: userId, phone, role, partnerId: null }, ctx.clock.now(), ctx.db);
  const token = await signAccessToken(ctx.secrets.jwtKey, ctx.clock, { userId, role, partnerId: null });
  return { userId, phone, token, auth: { authorization: `Bearer ${token}` } };
}

export interface TestKey {
  id: string;
  key: string;
  prefix: string;
  headers: { 'x-api-key': string };
}

export async function createKey(
  ctx: AppContext,
  partnerId: string,
  options: {
    environment?: ApiKeyEnvironment;
    scopes?: ApiKeyScope[];
    name?: string;
    rateLimit?: number;
    receivesAllOrders?: boolean;
  } = {},
): Promise<TestKey> {
  const environment = options.environment ?? 'LIVE';
  const generated = generateKey(environment);
  const id = newId();
  await insertKey(
    partnerId,
    {
      id,
      name: options.name ?? 'Test key',
      prefix: generated.prefix,
      hash: generated.hash,
      environment,
      scopes: options.scopes ?? ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'],
      rateLimit: options.rateLimit ?? 600,
      receivesAllOrders: options.receivesAllOrders ?? false,
      createdAt: ctx.clock.now(),
    },
    ctx.db,
  );
  return { id, key: generated.key, prefix: generated.prefix, headers: { 'x-api-key': generated.key } };
}

/**
 * Gives a webhook a signing secret of the form secrets had before they were standard base64: `whsec_` +
 * base64url of 32 bytes (43 characters, holding '-' and '_'). Answers the secret.
 */
export async function giveOlderFormSecret(ctx: AppContext, webhookId: string): Promise<string> {
  const bytes = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) bytes[i] = 250 - i * 3;
  const secret = `whsec_${bytes.toString('base64url')}`;
  await ctx.db.query('UPDATE webhooks SET secret_ciphertext = $2 WHERE id = $1', [webhookId, ctx.secrets.encrypt(secret)]);
  return secret;
}
