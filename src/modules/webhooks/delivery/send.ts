/**
 * One HTTP attempt: POST the stored body with its headers, within one overall timeout (connect,
 * headers and body together), redirects not followed, the response body read to a small bound (kept
 * for the attempt log: response-capture.ts). Never throws: every outcome becomes a SendResult with a
 * short, stable `error` text.
 */
import { type Dispatcher, request } from 'undici';
import { type CapturedResponse, captureResponse, MAX_RESPONSE_BYTES } from './response-capture.js';

/** What the endpoint answered (absent when it never answered) and how long the attempt took. */
interface Answered {
  durationMs: number;
  response: CapturedResponse | null;
}

export type SendResult =
  | ({ outcome: 'delivered'; statusCode: number } & Answered)
  | ({ outcome: 'failed'; statusCode: number | null; error: string } & Answered)
  /** Cut short by the worker shutting down: not an attempt the endpoint should be blamed for. */
  | { outcome: 'aborted' };

export interface SendOptions {
  dispatcher: Dispatcher;
  timeoutMs: number;
  /** Aborts the attempt when the worker stops. */
  signal: AbortSignal;
  /** Production refuses plain http even for rows saved before a policy change. */
  production: boolean;
}

export function describeTimeout(ms: number): string {
  const seconds = ms / 1000;
  return `timeout after ${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  const visit = (e: unknown, depth: number) => {
    if (!e || typeof e !== 'object' || depth > 3) return;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    visit((e as { cause?: unknown }).cause, depth + 1);
    // Racing IPv4 and IPv6 fails with an AggregateError of each connection attempt.
    const inner = (e as { errors?: unknown }).errors;
    if (Array.isArray(inner)) for (const i of inner) visit(i, depth + 1);
  };
  visit(err, 0);
  return codes;
}

/** A short text for a network failure (docs/decisions-log.md, 'Webhooks': "connection refused", "timeout after 10 s", …). */
export function describeNetworkError(err: unknown, timeoutMs: number): string {
  const codes = errorCodes(err);
  const has = (...wanted: string[]) => codes.some((c) => wanted.includes(c));
  if (has('E_WEBHOOK_ADDRESS_BLOCKED')) return 'destination address not allowed';
  if (has('UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT')) {
    return describeTimeout(timeoutMs);
  }
  if (has('ECONNREFUSED')) return 'connection refused';
  if (has('ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL')) return 'host not found';
  if (has('EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL')) return 'host unreachable';
  if (codes.some((c) => c.startsWith('ERR_TLS') || c.startsWith('ERR_SSL') || c.includes('CERT') || c.includes('SIGNATURE'))) {
    return 'TLS handshake failed';
  }
  if (has('ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED')) return 'connection reset';
  return 'network error';
}

export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: SendOptions,
): Promise<SendResult> {
  if (options.production && !url.startsWith('https:')) {
    return { outcome: 'failed', statusCode: null, error: 'https required', durationMs: 0, response: null };
  }
  if (options.signal.aborted) return { outcome: 'aborted' };
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const onStop = () => controller.abort();
  options.signal.addEventListener('abort', onStop, { once: true });
  try {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: 'POST',
        body,
        headers,
        dispatcher: options.dispatcher,
        signal: controller.signal,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
    } catch (err) {
      if (options.signal.aborted && !timedOut) return { outcome: 'aborted' };
      const error = timedOut ? describeTimeout(options.timeoutMs) : describeNetworkError(err, options.timeoutMs);
      return { outcome: 'failed', statusCode: null, error, durationMs: elapsed(), response: null };
    }
    // The status line decides; the body is only read up to its first 4 KiB (kept for the attempt log,
    // never parsed) so the connection can be reused when it is short, and dropped otherwise. A body
    // that stalls is cut by the same timeout.
    const chunks: Buffer[] = [];
    let read = 0;
    let complete = false;
    try {
      for await (const chunk of response.body) {
        chunks.push(chunk as Buffer);
        read += (chunk as Buffer).length;
        if (read >= MAX_RESPONSE_BYTES) break;
      }
      complete = read < MAX_RESPONSE_BYTES;
    } catch {
      // The answer is already known; a broken or stalled body does not change it.
    } finally {
      response.body.destroy();
    }
    const answered: Answered = {
      durationMs: elapsed(),
      response: captureResponse(response.headers, Buffer.concat(chunks), complete),
    };
    const status = response.statusCode;
    if (status >= 200 && status < 300) return { outcome: 'delivered', statusCode: status, ...answered };
    if (status >= 300 && status < 400) {
      return { outcome: 'failed', statusCode: status, error: 'redirect not followed', ...answered };
    }
    return { outcome: 'failed', statusCode: status, error: `HTTP ${status}`, ...answered };
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onStop);
  }
}
