/**
 * The public OpenAPI document (`/v1/developer/openapi.json`), fetched at most once per page load and
 * shared by everything in the portal that reads it: the API's base URLs (api-bases.ts) and a logged
 * request's section of the reference (request-log.ts). A failed fetch is tried again by the next reader.
 */

export interface ApiDocument {
  servers?: Array<{ url?: unknown; description?: unknown }>;
  paths?: Record<string, Record<string, { operationId?: string }>>;
}

let load: Promise<ApiDocument> | null = null;

/** The document; rejects when it cannot be read now (the next call asks again). */
export function apiDocument(): Promise<ApiDocument> {
  load ??= fetch('/v1/developer/openapi.json', { headers: { accept: 'application/json' } })
    .then((res) => (res.ok ? (res.json() as Promise<ApiDocument>) : Promise.reject(new Error(`HTTP ${res.status}`))))
    .catch((err: unknown) => {
      load = null;
      throw err;
    });
  return load;
}
