/**
 * One logged partner request as it travels from the capture plugin (src/plugins/request-log.ts) through
 * the recorder's queue into the database: the API's DeveloperRequestDetail with the arrival time in ms
 * and the partner it belongs to. The recorder writes a batch as JSON, so these field names are also the
 * keys its INSERT reads.
 */
import type { DeveloperRequest, DeveloperRequestDetail } from './request-log.schemas.js';

export interface RequestLogEntry extends Omit<DeveloperRequestDetail, 'createdAt'> {
  /** Arrival, service clock, ms since the epoch (also encoded in `id`). */
  createdMs: number;
  partnerId: string;
}

export interface RequestLogged {
  partnerId: string;
  /** The summary fields: the request as listed, no bodies. */
  request: DeveloperRequest;
}

export function summaryOf(entry: RequestLogEntry): DeveloperRequest {
  const { createdMs, partnerId: _partner, requestBody: _request, responseBody: _response, ...fields } = entry;
  return { ...fields, createdAt: new Date(createdMs).toISOString() };
}
