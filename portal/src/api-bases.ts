/**
 * The base URLs of the live and the sandbox partner API, as the server is configured to publish them
 * (its PUBLIC_URL and SANDBOX_PUBLIC_URL settings). They are read from the `servers` of the public
 * OpenAPI document (api-document.ts: fetched once per page load), so every page, snippet and curl line
 * shows the same real addresses.
 */
import { useSyncExternalStore } from 'react';
import { type ApiDocument, apiDocument } from './api-document';

export interface ApiBases {
  live: string;
  sandbox: string;
}

let bases: ApiBases | null = null;
let started = false;
const listeners = new Set<() => void>();

/** The live and sandbox base URLs a document's `servers` name (by their descriptions), else `fallback`. */
export function basesOf(doc: ApiDocument, fallback: string): ApiBases {
  const servers = (doc.servers ?? []).filter((s): s is { url: string; description?: unknown } => typeof s.url === 'string');
  const sandbox = servers.find((s) => String(s.description ?? '').startsWith('Sandbox'));
  const live = servers.find((s) => String(s.description ?? '').startsWith('Live')) ?? servers.find((s) => s !== sandbox);
  return {
    live: trim(live?.url ?? fallback),
    sandbox: trim(sandbox?.url ?? live?.url ?? fallback),
  };
}

function load(): void {
  if (started) return;
  started = true;
  apiDocument()
    .then((doc) => {
      bases = basesOf(doc, window.location.origin);
    })
    .catch(() => {
      // Unreachable for now: show this origin as the live API rather than nothing; a reload tries again.
      bases = { live: window.location.origin, sandbox: window.location.origin };
    })
    .finally(() => {
      for (const l of listeners) l();
    });
}

const trim = (url: string) => url.replace(/\/+$/, '');

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  load();
  return () => listeners.delete(listener);
}

/** The two base URLs, or null until the document has answered. */
export function useApiBases(): ApiBases | null {
  return useSyncExternalStore(subscribe, () => bases);
}

/** The base URL of a key's environment. */
export function baseFor(b: ApiBases, environment: 'LIVE' | 'SANDBOX'): string {
  return environment === 'LIVE' ? b.live : b.sandbox;
}

/** A snippet with the placeholder hosts of the SDK's README replaced by the real ones. */
export function withRealBases(code: string, b: ApiBases | null): string {
  if (!b) return code;
  return code.replaceAll('https://sandbox.partners.example.com', b.sandbox).replaceAll('https://partners.example.com', b.live);
}
