/**
 * The error-code catalogue: every `ERR_*` code the service answers with, and its HTTP status.
 * Code throws `AppError`; one error handler (plugins/error-handler.ts) turns it into the envelope
 * `{ statusCode, code, message, details? }` (docs/decisions-log.md, 'Requests, errors and input').
 */
export const ERROR_STATUS = {
  // General
  ERR_VALIDATION: 400,
  ERR_BAD_REQUEST: 400,
  ERR_UNAUTHORIZED: 401,
  ERR_FORBIDDEN: 403,
  ERR_NOT_FOUND: 404,
  ERR_CONFLICT: 409,
  ERR_RATE_LIMITED: 429,
  ERR_INTERNAL: 500,
  ERR_DEPENDENCY_UNAVAILABLE: 503,
  /** A statement ran past its deadline and the database cancelled it: slow, not down (docs/scale.md). */
  ERR_QUERY_TIMEOUT: 503,
  // One-time codes
  ERR_OTP_INVALID: 400,
  ERR_OTP_EXPIRED: 400,
  ERR_OTP_RATE_LIMITED: 429,
  ERR_OTP_TOO_MANY_ATTEMPTS: 429,
  // Users
  ERR_USER_BLOCKED: 403,
  // Orders and logistics
  ERR_INVALID_TRANSITION: 409,
  ERR_IDEMPOTENCY_CONFLICT: 409,
  ERR_COD_VARIANCE_NOTE_REQUIRED: 400,
  ERR_DELIVERY_RETRY_LIMIT: 409,
  ERR_BATCH_INVALID_TRANSITION: 409,
  // Proof of delivery (docs/tracking-and-proof.md)
  ERR_LOCATION_REQUIRED: 400,
  ERR_OUTSIDE_GEOFENCE: 409,
  // API keys and webhooks
  ERR_API_KEY_INVALID: 401,
  ERR_API_KEY_REVOKED: 401,
  ERR_API_KEY_SCOPE: 403,
  ERR_API_KEY_ENVIRONMENT: 403,
  ERR_API_KEY_LIMIT: 409,
  ERR_WEBHOOK_URL_INVALID: 400,
  ERR_WEBHOOK_LIMIT: 409,
  ERR_WEBHOOK_DISABLED: 409,
  ERR_PARTNER_ORDER_NOT_ASSIGNED: 403,
  // Payments and settlements (docs/payments.md)
  ERR_PAYMENT_ALREADY_PAID: 409,
  ERR_PAYMENT_INTENT_INVALID_STATE: 409,
  ERR_REFUND_AMOUNT_EXCEEDS: 400,
  ERR_REFUND_INVALID_STATE: 409,
  ERR_REFUND_ORDER_NOT_ELIGIBLE: 409,
  ERR_SETTLEMENT_EXISTS: 409,
  ERR_SETTLEMENT_INVALID_STATE: 409,
  ERR_SETTLEMENT_PERIOD_OPEN: 409,
  // Offers (docs/offers.md): the offer is no longer PENDING before its deadline; details { status }.
  ERR_OFFER_CLOSED: 409,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ValidationDetail {
  field: string;
  messages: string[];
}

export type ErrorDetails = ValidationDetail[] | Record<string, unknown>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly details?: ErrorDetails;
  /** Extra response headers (e.g. Retry-After on 429). */
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails, headers?: Record<string, string>) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.statusCode = ERROR_STATUS[code];
    this.details = details;
    this.headers = headers;
  }
}

/** A validation failure on one field, shaped exactly like a schema validation failure. */
export function validationError(field: string, message: string): AppError {
  return new AppError('ERR_VALIDATION', `${field} ${message}`, [{ field, messages: [message] }]);
}

export function notFound(what = 'Resource'): AppError {
  return new AppError('ERR_NOT_FOUND', `${what} not found`);
}
