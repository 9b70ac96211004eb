/**
 * The base URLs of the live and the sandbox partner API, as the server is configured to publish them
 * (its PUBLIC_URL and SANDBOX_PUBLIC_URL settings). They are read from the `servers` of the public
 * OpenAPI document, once per page load, so every page and snippet shows the same real addresses.
 */
import { useSyncExternalStore } from 'react';

export interface ApiBases {
  live: string;
  sandbox: string;
}

let bases: ApiBases | null = null;
let started = false;
const listeners = new Set<() => void>();

interface ServerEntry {
  url?: unknown;
  description?: unknown;
}

function load(): void {
  if (started) return;
  started = true;
  void fetch('/v1/developer/openapi.json', { headers: { accept: 'application/json' } })
    .then((res) =>
      res.ok ? (res.json() as Promise<{ servers?: ServerEntry[] }>) : Promise.reject(new Error(`HTTP ${res.status}`)),
    )
    .then((doc) => {
      const servers = (doc.servers ?? []).filter((s): s is { url: string; description?: unknown } => typeof s.url === 'string');
      const sandbox = servers.find((s) => String(s.description ?? '').startsWith('Sandbox'));
      const live = servers.find((s) => String(s.description ?? '').startsWith('Live')) ?? servers.find((s) => s !== sandbox);
      bases = {
        live: trim(live?.url ?? window.location.origin),
        sandbox: trim(sandbox?.url ?? live?.url ?? window.location.origin),
      };
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
