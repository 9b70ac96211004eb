/**
 * The real SMS gateways behind `SmsProvider` (docs/operating.md, "SMS gateways"):
 *  - Twilio's Messages API: a form-encoded POST to `/2010-04-01/Accounts/{sid}/Messages.json` with basic
 *    authentication (account SID and auth token); 201 means accepted.
 *  - any HTTP gateway of the operator's: a JSON POST `{ to, text, id }` signed as webhooks are
 *    (`X-Partner-Signature: t=…,v1=…`, webhooks/delivery/signature.ts) with SMS_HTTP_SECRET; any 2xx means accepted.
 *
 * Each send has one deadline of 5 s for everything, and is tried again once after a 5xx answer or a
 * network error (the same `id` both times, so a gateway can tell a repeat); a 4xx is final. An error says
 * what went wrong in words of our own and an HTTP status, never the phone number or the message: the
 * caller logs it, and the message holds the one-time code.
 */
import { randomUUID } from 'node:crypto';
import type { SmsConfig } from '../../config.js';
import { reasonOf } from '../../dependencies.js';
import { SIGNATURE_HEADER, signatureHeader } from '../webhooks/delivery/signature.js';
import type { SmsProvider } from './sms.js';

/** The deadline of one send, both tries included. */
export const SMS_DEADLINE_MS = 5_000;

export class SmsSendError extends Error {
  constructor(
    message: string,
    /** The gateway's HTTP status, when it answered. */
    readonly statusCode: number | null = null,
    /** Twilio's numeric error code, when it gave one (never its message: it may quote the number). */
    readonly gatewayCode: number | null = null,
  ) {
    super(message);
    this.name = 'SmsSendError';
  }
}

type Attempt = (signal: AbortSignal) => Promise<Response>;

/** Runs `attempt` at most twice within the deadline; resolves on a 2xx. */
async function sendWithRetry(gateway: string, attempt: Attempt, deadlineMs: number): Promise<void> {
  const deadline = AbortSignal.timeout(deadlineMs);
  let failure: SmsSendError | null = null;
  for (let tries = 0; tries < 2; tries++) {
    let res: Response;
    try {
      res = await attempt(deadline);
    } catch (err) {
      if (deadline.aborted) throw new SmsSendError(`${gateway} did not answer within ${deadlineMs} ms`);
      failure = new SmsSendError(`${gateway} could not be reached (${reasonOf(err)})`);
      continue;
    }
    let body: string;
    try {
      body = await res.text();
    } catch {
      if (deadline.aborted) throw new SmsSendError(`${gateway} did not answer within ${deadlineMs} ms`, res.status);
      body = '';
    }
    if (res.ok) return;
    const error = new SmsSendError(`${gateway} answered HTTP ${res.status}`, res.status, twilioCodeOf(body));
    if (res.status < 500) throw error;
    failure = error;
  }
  throw failure ?? new SmsSendError(`${gateway} failed`);
}

function twilioCodeOf(body: string): number | null {
  try {
    const code = (JSON.parse(body) as { code?: unknown }).code;
    return typeof code === 'number' && Number.isInteger(code) ? code : null;
  } catch {
    return null;
  }
}

export class TwilioSmsGateway implements SmsProvider {
  readonly name = 'twilio';
  private readonly endpoint: string;
  private readonly authorization: string;

  constructor(
    private readonly config: Extract<SmsConfig, { provider: 'twilio' }>,
    private readonly deadlineMs = SMS_DEADLINE_MS,
  ) {
    this.endpoint = `${config.apiUrl}/2010-04-01/Accounts/${encodeURIComponent(config.accountSid)}/Messages.json`;
    this.authorization = `Basic ${Buffer.from(`${config.accountSid}:${config.authToken}`).toString('base64')}`;
  }

  send(phone: string, text: string): Promise<void> {
    const form = new URLSearchParams({ To: phone, Body: text });
    if (this.config.messagingServiceSid) form.set('MessagingServiceSid', this.config.messagingServiceSid);
    else if (this.config.from) form.set('From', this.config.from);
    const body = form.toString();
    return sendWithRetry(
      'Twilio',
      (signal) =>
        fetch(this.endpoint, {
          method: 'POST',
          headers: {
            authorization: this.authorization,
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
          },
          body,
          signal,
          redirect: 'error',
        }),
      this.deadlineMs,
    );
  }
}

export class HttpSmsGateway implements SmsProvider {
  readonly name = 'http';

  constructor(
    private readonly config: Extract<SmsConfig, { provider: 'http' }>,
    private readonly deadlineMs = SMS_DEADLINE_MS,
  ) {}

  send(phone: string, text: string): Promise<void> {
    const body = JSON.stringify({ to: phone, text, id: `sms_${randomUUID()}` });
    return sendWithRetry(
      'the SMS gateway',
      (signal) =>
        fetch(this.config.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            // The real wall clock, as for webhooks: the gateway compares it with its own to refuse replays.
            [SIGNATURE_HEADER]: signatureHeader(this.config.secret, Math.floor(Date.now() / 1000), body),
          },
          body,
          signal,
          redirect: 'error',
        }),
      this.deadlineMs,
    );
  }
}
