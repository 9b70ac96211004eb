/**
 * One logged partner request as it travels from the capture plugin (src/plugins/request-log.ts) through
 * the recorder's queue into the database, field names as the API shows them (decisions §13). The
 * recorder writes the batch as JSON, so these names are also the keys its INSERT reads.
 */
import type { ApiKeyEnvironment } from '../../shared/schemas.js';

export interface RequestLogEntry {
  id: string;
  /** Arrival, service clock, ms since the epoch (also encoded in `id`). */
  createdMs: number;
  partnerId: string;
  apiKeyId: string;
  /** The listener that answered. */
  environment: ApiKeyEnvironment;
  method: string;
  path: string;
  query: string | null;
  statusCode: number;
  errorCode: string | null;
  durationMs: number;
  ip: string;
  userAgent: string | null;
  idempotencyKey: string | null;
  /** POSTs and 4xx/5xx answers only: the first 8 KiB, credentials masked; or a short note. */
  requestBody: string | null;
  responseBody: string | null;
}

/** Emitted on the context's event bus for the realtime hub: `request.logged { request }` to the partner. */
export const REQUEST_LOGGED_EVENT = 'request.logged';

export interface RequestLogged {
  partnerId: string;
  /** The summary fields (DeveloperRequest). */
  request: RequestSummary;
}

export interface RequestSummary {
  id: string;
  apiKeyId: string;
  environment: ApiKeyEnvironment;
  method: string;
  path: string;
  query: string | null;
  statusCode: number;
  errorCode: string | null;
  durationMs: number;
  ip: string;
  userAgent: string | null;
  idempotencyKey: string | null;
  createdAt: string;
}

export function summaryOf(entry: RequestLogEntry): RequestSummary {
  return {
    id: entry.id,
    apiKeyId: entry.apiKeyId,
    environment: entry.environment,
    method: entry.method,
    path: entry.path,
    query: entry.query,
    statusCode: entry.statusCode,
    errorCode: entry.errorCode,
    durationMs: entry.durationMs,
    ip: entry.ip,
    userAgent: entry.userAgent,
    idempotencyKey: entry.idempotencyKey,
    createdAt: new Date(entry.createdMs).toISOString(),
  };
}
