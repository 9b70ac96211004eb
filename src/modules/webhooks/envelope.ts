/**
 * The body of every delivery (docs/decisions-log.md, 'Webhooks'): `{ id, type, createdAt, environment, data }`. It is
 * serialised once, when the delivery is queued, and stored as is: every attempt (and a redeliver)
 * sends and signs exactly the same bytes, so the event id and content never change between attempts.
 * Fields come in the order of the kind's envelope schema (event-catalog.ts, the schemas the docs show):
 * jsonb snapshots come back with their keys in jsonb's order, and bodies are read by people too.
 */
import { randomBytes } from 'node:crypto';
import { type ApiKeyEnvironment, environmentName } from '../../shared/schemas.js';
import { EVENT_SCHEMAS, isEventType } from './event-catalog.js';
import { inSchemaOrder } from './schema-order.js';

export interface EventEnvelope {
  id: string;
  type: string;
  createdAt: string;
  environment: 'live' | 'sandbox';
  data: Record<string, unknown>;
}

export function newEventId(): string {
  return `evt_${randomBytes(16).toString('hex')}`;
}

/** The id of a sample event (POST …/webhooks/{id}/test), told apart from real events by its prefix. */
export function newTestEventId(): string {
  return `evt_test_${randomBytes(16).toString('hex')}`;
}

export interface EnvelopeInput {
  id: string;
  type: string;
  createdAt: Date;
  environment: ApiKeyEnvironment;
  data: Record<string, unknown>;
}

/** The envelope as an object, its fields in schema order (the realtime channel's `listen.event` sends it as is). */
export function buildEnvelope(input: EnvelopeInput): EventEnvelope {
  const envelope: EventEnvelope = {
    id: input.id,
    type: input.type,
    createdAt: input.createdAt.toISOString(),
    environment: environmentName(input.environment),
    data: input.data,
  };
  return isEventType(input.type) ? (inSchemaOrder(EVENT_SCHEMAS[input.type], envelope) as EventEnvelope) : envelope;
}

/** The body of a delivery: the envelope's JSON text. */
export function serializeEnvelope(input: EnvelopeInput): string {
  return JSON.stringify(buildEnvelope(input));
}
