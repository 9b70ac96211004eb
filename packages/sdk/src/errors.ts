import type { components } from './generated/partner-api.js';

/** The error envelope every error answer carries: `{ statusCode, code, message, details? }`. */
export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];

/** One field's problems in an ERR_VALIDATION answer (`details`). */
export interface FieldError {
  /** The field, dotted for a nested one (`url`, `items.0.quantity`). */
  field: string;
  messages: string[];
}

/**
 * An API call that did not succeed. `code` is the envelope's machine-readable code (switch on it);
 * answers that carry no envelope (a proxy's HTML page, a broken connection) get a code of the SDK's
 * own: `ERR_UNEXPECTED_RESPONSE` (with `status`) or `ERR_NETWORK` (status 0, the cause attached).
 */
export class PartnerApiError extends Error {
  override readonly name = 'PartnerApiError';
  /** The HTTP status (0 when no answer arrived). */
  readonly status: number;
  /** `ERR_…`: the envelope's code, or ERR_UNEXPECTED_RESPONSE / ERR_NETWORK. */
  readonly code: string;
  /** Shape depends on `code`: `[{ field, messages[] }]` for ERR_VALIDATION, `{ retryAfterSec }` for ERR_OTP_RATE_LIMITED. */
  readonly details: unknown;
  readonly method: string;
  readonly url: string;
  /** The `X-Request-Id` of the answer: quote it when asking for help. */
  readonly requestId: string | null;
  /** Seconds from `Retry-After` (429, 503), when the answer had one. */
  readonly retryAfterSec: number | null;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    details?: unknown;
    method: string;
    url: string;
    requestId?: string | null;
    retryAfterSec?: number | null;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.method = init.method;
    this.url = init.url;
    this.requestId = init.requestId ?? null;
    this.retryAfterSec = init.retryAfterSec ?? null;
  }

  /** The `{ field, messages[] }` list of an ERR_VALIDATION answer (empty for any other error). */
  get fieldErrors(): FieldError[] {
    if (this.code !== 'ERR_VALIDATION' || !Array.isArray(this.details)) return [];
    return this.details.filter(
      (d): d is FieldError => typeof d === 'object' && d !== null && typeof d.field === 'string' && Array.isArray(d.messages),
    );
  }

  /** Builds the error from an answer and its (already parsed) body. */
  static fromResponse(request: { method: string; url: string }, response: Response, body: unknown): PartnerApiError {
    const common = {
      status: response.status,
      method: request.method,
      url: request.url,
      requestId: response.headers.get('x-request-id'),
      retryAfterSec: retryAfterSeconds(response.headers.get('retry-after')),
    };
    if (isEnvelope(body)) {
      return new PartnerApiError({ ...common, code: body.code, message: body.message, details: body.details });
    }
    const text = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
    return new PartnerApiError({
      ...common,
      code: 'ERR_UNEXPECTED_RESPONSE',
      message: `${request.method} ${request.url} answered ${response.status} without an error envelope${text ? `: ${text.slice(0, 200)}` : ''}`,
    });
  }
}

function isEnvelope(body: unknown): body is ErrorEnvelope {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as ErrorEnvelope).code === 'string' &&
    typeof (body as ErrorEnvelope).message === 'string'
  );
}

/** `Retry-After` as seconds: delta-seconds (what this API sends) or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, nowMs = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/** Why `verifyWebhook` refused a delivery. */
export type WebhookVerificationReason =
  /** No signature header, or no `t=` or no `v1=` in it. */
  | 'MISSING_SIGNATURE'
  /** `t` is not a whole number of seconds, or a `v1` is not 64 hex characters. */
  | 'MALFORMED_SIGNATURE'
  /** `t` is further from now than the tolerance: an old (replayed) or future-dated delivery. */
  | 'TIMESTAMP_OUTSIDE_TOLERANCE'
  /** No `v1` matches any of the secrets: a wrong secret or a changed body. */
  | 'SIGNATURE_MISMATCH'
  /** The signature is right but the body is not a JSON event envelope. */
  | 'INVALID_PAYLOAD';

/** A delivery `verifyWebhook` refused; answer it with 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}
