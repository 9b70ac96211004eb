/**
 * The `fetch` every client sends through: retries of 429 and 503 after `Retry-After`, with jitter and
 * a cap, and (developer client) a bearer token that is refreshed once on a 401. It works on whole
 * requests: the body is read once and sent again unchanged on each attempt, headers included, so an
 * event's `Idempotency-Key` is the same on every attempt.
 */
import { retryAfterSeconds } from './errors.js';

export interface RetryOptions {
  /** Attempts in all, the first one included (default 3). 1 turns retries off. */
  maxAttempts?: number;
  /**
   * The longest single wait in ms (default 30 000). When `Retry-After` alone asks for more, the answer
   * is given back as it is (a PartnerApiError carrying `retryAfterSec`) instead of retrying too early.
   */
  maxDelayMs?: number;
  /** First wait when an answer has no `Retry-After` (default 500 ms), doubled on each retry, with full jitter. */
  baseDelayMs?: number;
}

export interface TransportOptions {
  /** The fetch to send with (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries of 429 and 503; `false` turns them off. */
  retry?: RetryOptions | false;
  /**
   * How a wait is spent (default: a timer, cut short by the request's AbortSignal). Tests pass one that
   * moves a test clock instead of waiting.
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** A number in [0, 1) for the jitter (default Math.random). */
  random?: () => number;
}

/** The bearer side of the developer client: how to sign a request, and what to do on a 401. */
export interface BearerAuth {
  /**
   * The current access token, or null when signed out. It may be a promise: a store that refreshes a
   * token about to expire before sending answers once that refresh is done.
   */
  accessToken(): string | null | Promise<string | null>;
  /**
   * Called after a 401 answered a request signed with `used`: gets a fresh access token (refresh) and
   * answers it, or null when there is none (no refresh token, or the refresh failed). `response` is
   * that 401 (read a clone of it to tell an expired token from another refusal); answering null gives
   * it back to the caller as it is.
   */
  renew(used: string, response: Response): Promise<string | null>;
  /** Called when the request sent again with the renewed token was answered 401 too: the session is over. */
  refused?(token: string, response: Response): void;
  /** Requests that must never carry the bearer token nor trigger a renewal (sign-in itself). */
  skip(url: URL): boolean;
}

const DEFAULT_RETRY: Required<RetryOptions> = { maxAttempts: 3, maxDelayMs: 30_000, baseDelayMs: 500 };

export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * How long to wait before the next attempt, or null to give the answer back. `Retry-After` is honoured
 * exactly (the server admits a retry after that long, not sooner) plus up to 20 % at random (at least
 * 100 ms of room) so that many clients refused together do not come back together; without it,
 * exponential backoff with full jitter. Every wait is capped at `maxDelayMs`.
 */
export function retryDelayMs(
  retryAfterSec: number | null,
  retryNumber: number,
  options: Required<RetryOptions>,
  random: () => number,
): number | null {
  if (retryAfterSec !== null) {
    const floor = retryAfterSec * 1000;
    if (floor > options.maxDelayMs) return null;
    return Math.min(options.maxDelayMs, floor + random() * Math.max(100, floor * 0.2));
  }
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (retryNumber - 1));
  return ceiling / 2 + (random() * ceiling) / 2;
}

/**
 * Whether an answer may be retried. 429 always (a rate-limited request was refused before anything
 * ran), except sign-in's. 503 (ERR_DEPENDENCY_UNAVAILABLE) was not applied either, except when the database connection
 * was lost during COMMIT; so a POST is retried only when it carries an Idempotency-Key, which makes
 * the retry answer the first outcome instead of applying it twice. A 409 with Retry-After (a request
 * the database rolled back because of a concurrent change) is retried like a 503; a 409 without it is
 * a conflict the same request would meet again.
 */
function retryable(response: Response, request: Request, url: URL): boolean {
  const status = response.status;
  // A sign-in limit (one code a minute, five an hour) is for the person signing in to wait out.
  if (status === 429) return !url.pathname.startsWith('/v1/auth/');
  if (status !== 503 && !(status === 409 && response.headers.has('retry-after'))) return false;
  return request.method !== 'POST' || request.headers.has('idempotency-key');
}

export function createTransport(options: TransportOptions = {}, auth?: BearerAuth): (request: Request) => Promise<Response> {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const retry = options.retry === false ? { ...DEFAULT_RETRY, maxAttempts: 1 } : { ...DEFAULT_RETRY, ...options.retry };
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;

  return async (request: Request) => {
    // Read once: each attempt is a new Request with the same bytes.
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const url = new URL(request.url);
    const bearer = auth && !auth.skip(url) ? auth : undefined;
    let token = (await bearer?.accessToken()) ?? null;
    let renewed = false;

    for (let attempt = 1; ; attempt++) {
      const headers = new Headers(request.headers);
      if (token !== null) headers.set('authorization', `Bearer ${token}`);
      const current = new Request(request.url, {
        method: request.method,
        headers,
        body,
        signal: request.signal,
        redirect: request.redirect,
      });
      const response = await send(current);
      if (response.status === 401 && bearer && renewed && token !== null) bearer.refused?.(token, response);

      if (response.status === 401 && bearer && !renewed && token !== null) {
        // One renewal per call: a second 401 with a fresh token is the real answer.
        renewed = true;
        const fresh = await bearer.renew(token, response);
        if (fresh !== null) {
          await response.body?.cancel();
          token = fresh;
          attempt--;
          continue;
        }
        return response;
      }

      if (attempt >= retry.maxAttempts || !retryable(response, current, url)) return response;
      const delay = retryDelayMs(retryAfterSeconds(response.headers.get('retry-after')), attempt, retry, random);
      if (delay === null) return response;
      await response.body?.cancel();
      await sleep(delay, request.signal);
      // Another call may have renewed the token meanwhile.
      if (bearer) token = (await bearer.accessToken()) ?? token;
    }
  };
}
