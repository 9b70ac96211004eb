/**
 * `partner listen --forward-to <url>`: a key's events, as its webhooks would get them, forwarded to a
 * local URL (as `stripe listen` does). The realtime channel carries them: the command subscribes with
 * `listen.subscribe { apiKeyId, events }` (again after every reconnection) and receives
 * `listen.event { apiKeyId, event }`, the same envelope a webhook delivery's body holds. Each is POSTed
 * to the local URL, in the order received, signed as a real delivery is (X-Partner-Signature
 * `t=…,v1=…` and the Standard Webhooks headers) with a secret made for this session and printed at the start, so the receiver's
 * verifyWebhook accepts it when given that secret.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { signStandardWebhook, signWebhook, type WebhookEvent } from '@partner-logistics/sdk';
import { type Command, listOption, requiredOption, stringOption, text } from '../command.js';
import { CliError, localTime } from '../output.js';
import { openChannel } from '../realtime.js';
import { chooseKey } from './keys.js';
import { allEventKinds } from './webhooks.js';

/** The per-session signing secret: the format of a webhook's (`whsec_` + 32 random bytes, base64). */
function sessionSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

const FORWARD_TIMEOUT_MS = 10_000;

interface Forwarded {
  eventId: string;
  type: string;
  status: number | null;
  error: string | null;
  durationMs: number;
}

async function forward(url: string, secret: string, event: WebhookEvent): Promise<Forwarded> {
  const body = JSON.stringify(event);
  const started = Date.now();
  const signedAtSec = Math.floor(started / 1000);
  const result = { eventId: event.id, type: event.type };
  try {
    const answer = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      headers: {
        'Content-Type': 'application/json',
        'X-Partner-Signature': signWebhook(body, secret, signedAtSec),
        'X-Partner-Event': event.type,
        'X-Partner-Delivery': randomUUID(),
        ...signStandardWebhook(body, secret, event.id, signedAtSec),
      },
      body,
    });
    await answer.body?.cancel();
    return { ...result, status: answer.status, error: null, durationMs: Date.now() - started };
  } catch (err) {
    const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    const error =
      (err as Error).name === 'TimeoutError'
        ? `timeout after ${FORWARD_TIMEOUT_MS / 1000} s`
        : cause?.code === 'ECONNREFUSED'
          ? 'connection refused'
          : (cause?.message ?? (err as Error).message);
    return { ...result, status: null, error, durationMs: Date.now() - started };
  }
}

export const listenCommands: Command[] = [
  {
    path: ['listen'],
    summary: 'Forward a key’s events to a local URL, signed with a secret printed at the start (Ctrl-C to stop)',
    options: {
      'forward-to': text('<url>', 'where each event is POSTed, e.g. http://localhost:8080/webhooks'),
      key: text('<id>', 'whose events (default: your only active key)'),
      events: text('<a,b>', 'event kinds (default: all of them)'),
    },
    examples: [
      'partner listen --forward-to http://localhost:8080/webhooks',
      'partner listen --key 3f1c… --events order.status_changed,order.cancelled --forward-to http://localhost:8080/webhooks',
    ],
    async run(ctx, values) {
      const url = requiredOption(values, 'forward-to');
      if (!/^https?:\/\//.test(url)) throw new CliError('--forward-to must be an http:// or https:// URL', 2);
      const key = await chooseKey(ctx, stringOption(values, 'key'));
      const events = listOption(values, 'events') ?? (await allEventKinds(ctx));
      const secret = sessionSecret();

      // Forwarded one at a time, in the order received: the printed lines follow that order.
      let queue = Promise.resolve();
      const channel = openChannel(ctx, async (socket, reconnect) => {
        const answer = (await socket.timeout(10_000).emitWithAck('listen.subscribe', { apiKeyId: key.id, events })) as
          | { subscription: { apiKeyId: string; environment: string; events: string[] } }
          | { error: { statusCode: number; code: string; message: string } };
        if ('error' in answer) throw new CliError(`${answer.error.message} (${answer.error.code})`);
        if (reconnect) {
          ctx.out.note('Reconnected; events raised while disconnected were not forwarded (see partner deliveries list).');
          return;
        }
        const { subscription } = answer;
        ctx.out.streamed(
          { ready: true, apiKeyId: key.id, environment: subscription.environment, events: subscription.events, secret },
          () =>
            ctx.out.line(
              `Ready! Forwarding ${subscription.environment} events of key ${key.id} (${key.name}) to ${url}. ` +
                `Your webhook signing secret for this session is ${secret} (Ctrl-C to stop)`,
            ),
        );
      });
      channel.socket.on('listen.event', ({ event }: { apiKeyId: string; event: WebhookEvent }) => {
        queue = queue.then(async () => {
          const sent = await forward(url, secret, event);
          ctx.out.streamed(sent, () =>
            ctx.out.line(
              `${localTime(new Date().toISOString())}  ${sent.type}  ${sent.eventId}  -> ${sent.status ?? sent.error}  POST ${url}  ${sent.durationMs} ms`,
            ),
          );
        });
      });
      await channel.done;
      await queue;
    },
  },
];
