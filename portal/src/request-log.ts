/**
 * What the Requests screens share: the filters as the page's URL holds them, which logged requests
 * match them (for the live tail), how bodies are shown, the curl line that repeats a request without
 * its key, and where an operation is described in the API reference.
 */
import type { DeveloperRequest, DeveloperRequestDetail } from '@partner-logistics/sdk/types';
import { baseFor, basesOf } from './api-bases';
import { type ApiDocument, apiDocument } from './api-document';
import type { RequestFilters } from './types';

export const FILTER_NAMES = ['apiKeyId', 'status', 'code', 'method', 'path', 'since', 'until'] as const;

/** The filters of a `?…` query string (unknown names are ignored). */
export function filtersFrom(search: string): RequestFilters {
  const params = new URLSearchParams(search);
  const out: RequestFilters = {};
  for (const name of FILTER_NAMES) {
    const value = params.get(name);
    if (value) out[name] = value;
  }
  return out;
}

/** `/requests?…` for these filters (and a page past the first). */
export function requestsLink(filters: RequestFilters, page = 1): string {
  const params = new URLSearchParams();
  for (const name of FILTER_NAMES) {
    const value = filters[name];
    if (value) params.set(name, value);
  }
  if (page > 1) params.set('page', String(page));
  const query = params.toString();
  return query ? `/requests?${query}` : '/requests';
}

/** The log of one UTC day (`YYYY-MM-DD`), optionally of one key and one status class. */
export function dayLink(day: string, options: { apiKeyId?: string; status?: string } = {}): string {
  const since = new Date(`${day}T00:00:00.000Z`);
  const until = new Date(since.getTime() + 86_400_000);
  return requestsLink({ ...options, since: since.toISOString(), until: until.toISOString() });
}

/** Whether a request (arriving on the live tail) belongs in a list with these filters. */
export function matches(r: DeveloperRequest, f: RequestFilters): boolean {
  if (f.apiKeyId && r.apiKeyId !== f.apiKeyId) return false;
  if (f.status) {
    const cls = /^([1-5])xx$/.exec(f.status);
    if (cls ? Math.floor(r.statusCode / 100) !== Number(cls[1]) : r.statusCode !== Number(f.status)) return false;
  }
  if (f.code && r.errorCode !== f.code) return false;
  if (f.method && r.method !== f.method) return false;
  if (f.path) {
    if (f.path.endsWith('*') ? !r.path.startsWith(f.path.slice(0, -1)) : r.path !== f.path) return false;
  }
  const at = Date.parse(r.createdAt);
  if (f.since && at < Date.parse(f.since)) return false;
  if (f.until && at >= Date.parse(f.until)) return false;
  return true;
}

export function statusTone(status: number): 'ok' | 'warn' | 'bad' | 'muted' {
  if (status >= 500) return 'bad';
  if (status >= 400) return 'warn';
  if (status >= 200 && status < 300) return 'ok';
  return 'muted';
}

const dateTimeSeconds = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A request's time, to the second (a log is read second by second). */
export function formatRequestTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTimeSeconds.format(d);
}

export function formatDuration(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** A note the server stored instead of a body (`[not JSON: 12 bytes]`): not the body itself. */
export function isNote(body: string): boolean {
  return /^\[(not |streamed )/.test(body);
}

/** A body as shown: JSON pretty-printed; anything else (a note, a body cut at 8 KiB) as it is. */
export function prettyBody(body: string): { text: string; json: boolean } {
  if (isNote(body)) return { text: body, json: false };
  try {
    return { text: JSON.stringify(JSON.parse(body), null, 2), json: true };
  } catch {
    return { text: body, json: false };
  }
}

/** `'text'` for a POSIX shell (single quotes; a quote inside closes, escapes and reopens). */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The curl line that repeats a request with the key left out: it reads the key from $API_KEY. The body
 * is included when it was kept whole (valid JSON); a note or a cut body is left for the reader to add.
 */
export function curlFor(r: DeveloperRequestDetail, baseUrl: string): { command: string; bodyMissing: boolean } {
  const url = `${baseUrl}${r.path}${r.query ? `?${r.query}` : ''}`;
  const lines = [`curl${r.method === 'GET' ? '' : ` -X ${r.method}`} ${shellQuote(url)}`, `-H "X-Api-Key: $API_KEY"`];
  if (r.idempotencyKey) lines.push(`-H ${shellQuote(`Idempotency-Key: ${r.idempotencyKey}`)}`);
  let bodyMissing = false;
  if (r.requestBody !== null) {
    const body = prettyBody(r.requestBody);
    if (body.json) {
      lines.push(`-H 'Content-Type: application/json'`, `--data ${shellQuote(JSON.stringify(JSON.parse(r.requestBody)))}`);
    } else bodyMissing = true;
  }
  return { command: lines.join(' \\\n  '), bodyMissing };
}

export interface Reference {
  /** Where partners reach the live and the sandbox API (the document's servers), for the curl line. */
  baseUrl: string;
  /** The operation's section of the API reference, where its answers and their error codes are described. */
  operationLink: string;
}

/** The API reference's section for a logged request's operation, and the base URL of its listener. */
export async function referenceFor(r: DeveloperRequest): Promise<Reference> {
  const doc = await apiDocument().catch((): ApiDocument => ({}));
  const server = baseFor(basesOf(doc, window.location.origin), r.environment);
  const method = r.method.toLowerCase() === 'head' ? 'get' : r.method.toLowerCase();
  for (const [template, operations] of Object.entries(doc.paths ?? {})) {
    const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`);
    const operationId = operations[method]?.operationId;
    if (operationId && pattern.test(r.path)) return { baseUrl: server, operationLink: `/docs#operation/${operationId}` };
  }
  return { baseUrl: server, operationLink: '/docs' };
}

/** A `datetime-local` input's value (local time) for an ISO instant, and back. */
export function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const local = new Date(d.getTime() - d.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

export function fromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/**
 * The order a logged request was about, from its path (`/v1/partner/orders/<code>…`,
 * `/v1/partner/sandbox/orders/<code>…`); null for other paths.
 */
export function orderCodeOfPath(path: string): string | null {
  const m = /^\/v1\/partner\/(?:sandbox\/)?orders\/([^/?]+)/.exec(path);
  return m ? decodeURIComponent(m[1]) : null;
}
