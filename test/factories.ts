/**
 * Factories for test data that other domains' tests need as a given (a partner, its token, a key),
 * written through the same SQL the services use. Each test sets up its own partner.
 */
import { randomInt } from 'node:crypto';
import type { AppContext } from '../src/context.js';
import { signAccessToken } from '../src/modules/auth/tokens.js';
import { generateKey } from '../src/modules/keys/key-format.js';
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
  await ctx.db.query('INSERT INTO partners (id, name, created_at) VALUES ($1, $2, $3)', [id, name, now]);
  await ctx.db.query(`INSERT INTO users (id, phone, role, partner_id, created_at) VALUES ($1, $2, 'PARTNER', $3, $4)`, [
    userId,
    phone,
    id,
    now,
  ]);
  const token = await signAccessToken(ctx.secrets.jwtKey, ctx.clock, { userId, role: 'PARTNER', partnerId: id });
  return { id, name, userId, phone, token, auth: { authorization: `Bearer ${token}` } };
}

export async function createUser(
  ctx: AppContext,
  role: 'ADMIN' | 'CUSTOMER',
): Promise<{ userId: string; phone: string; token: string; auth: { authorization: string } }> {
  const userId = newId();
  const phone = randomPhone();
  await ctx.db.query('INSERT INTO users (id, phone, role, created_at) VALUES ($1, $2, $3, $4)', [
    userId,
    phone,
    role,
    ctx.clock.now(),
  ]);
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
  await ctx.db.query(
    `INSERT INTO api_keys (id, partner_id, name, prefix, key_hash, environment, scopes, rate_limit, receives_all_orders, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      id,
      partnerId,
      options.name ?? 'Test key',
      generated.prefix,
      generated.hash,
      environment,
      options.scopes ?? ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'],
      options.rateLimit ?? 600,
      options.receivesAllOrders ?? false,
      ctx.clock.now(),
    ],
  );
  return { id, key: generated.key, prefix: generated.prefix, headers: { 'x-api-key': generated.key } };
}
