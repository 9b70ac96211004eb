/**
 * An endpoint's health over the last 24 hours (GET …/webhooks/{id}/health): success rate, p50/p99
 * duration, last success and failure, and the dead streak. It says "failing" as soon as the latest
 * attempt failed, not only once deliveries are dead, and warns from 40 dead in a row (at 50 the webhook
 * switches itself off). It follows the realtime channel: refreshed after the webhook's deliveries move.
 */

import type { DeveloperWebhook, WebhookHealth } from '@partner-logistics/sdk/types';
import { useEffect, useRef } from 'react';
import { developer } from '../client';
import { formatDateTime, formatNumber } from '../format';
import { queryKeys, useApiQuery } from '../query';
import { onReconnect, subscribe } from '../realtime';
import { Badge } from './States';

/** consecutiveFailures at which the webhook switches itself off, and from which the card warns. */
const AUTO_DISABLE_AT = 50;
const WARN_FROM = 40;

type Verdict = { tone: 'ok' | 'warn' | 'bad' | 'muted'; label: string; text: string };

export function healthVerdict(h: WebhookHealth): Verdict {
  if (!h.isActive) return { tone: 'bad', label: 'Switched off', text: 'No deliveries are sent while the webhook is disabled.' };
  const failingNow = h.lastFailureAt !== null && (h.lastSuccessAt === null || h.lastFailureAt > h.lastSuccessAt);
  if (failingNow) {
    return {
      tone: h.consecutiveFailures > 0 ? 'bad' : 'warn',
      label: 'Failing',
      text: `The latest attempt failed (${formatDateTime(h.lastFailureAt)}). ${
        h.lastSuccessAt ? `Last success ${formatDateTime(h.lastSuccessAt)}.` : 'No attempt has succeeded yet.'
      } Failed deliveries are retried on their schedule.`,
    };
  }
  if (h.delivered + h.failedAttempts === 0) return { tone: 'muted', label: 'Idle', text: 'No attempts in the last 24 hours.' };
  return { tone: 'ok', label: 'Healthy', text: `The latest attempt succeeded (${formatDateTime(h.lastSuccessAt)}).` };
}

export function WebhookHealthCard({ webhook }: { webhook: DeveloperWebhook }) {
  const health = useApiQuery(queryKeys.webhookHealth(webhook.id), () => developer.webhooks.health(webhook.id), { live: true });
  const { reload } = health;
  // The webhook was switched on or off, or its streak moved: its health changed too.
  const first = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: read again when these change, not on mount
  useEffect(() => {
    if (first.current) first.current = false;
    else void reload();
  }, [webhook.isActive, webhook.consecutiveFailures]);
  // Deliveries of this webhook moved: refresh, at most once a second.
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    const off = subscribe('delivery.updated', ({ delivery }) => {
      if (delivery.webhookId !== webhook.id || timer.current) return;
      timer.current = setTimeout(() => {
        timer.current = null;
        void reload();
      }, 1000);
    });
    return () => {
      off();
      if (timer.current) clearTimeout(timer.current);
      timer.current = null;
    };
  }, [webhook.id, reload]);
  useEffect(() => onReconnect(() => void reload()), [reload]);

  const h = health.data;
  if (!h) return <p className="hint">{health.error ? 'Health is not available right now.' : 'Checking endpoint health…'}</p>;
  const verdict = healthVerdict(h);
  const attempts = h.delivered + h.failedAttempts;
  const streak = h.consecutiveFailures;
  return (
    <section
      className="health"
      aria-label={`Health of ${webhook.url}, last 24 hours`}
      data-testid="webhook-health"
      data-verdict={verdict.label}
    >
      <p className="health-verdict">
        <Badge tone={verdict.tone}>{verdict.label}</Badge> <span>{verdict.text}</span>
      </p>
      <dl className="facts health-facts">
        <div>
          <dt>Success rate (24 h)</dt>
          <dd data-testid="health-rate">
            {h.successRate === null ? '—' : `${Math.round(h.successRate * 1000) / 10}%`}
            <span className="muted">
              {' '}
              of {formatNumber(attempts)} {attempts === 1 ? 'attempt' : 'attempts'}
            </span>
          </dd>
        </div>
        <div>
          <dt>Response time p50 / p99</dt>
          <dd>{h.p50Ms === null ? '—' : `${formatNumber(h.p50Ms)} ms / ${formatNumber(h.p99Ms ?? h.p50Ms)} ms`}</dd>
        </div>
        <div>
          <dt>Delivered · failed attempts · dead</dt>
          <dd>
            {formatNumber(h.delivered)} · {formatNumber(h.failedAttempts)} · {formatNumber(h.dead)}
          </dd>
        </div>
        <div>
          <dt>Dead in a row</dt>
          <dd data-testid="health-streak">
            {streak === 0 ? 'None' : `${streak} of ${AUTO_DISABLE_AT}`}
            <span className="muted"> (switches off at {AUTO_DISABLE_AT})</span>
          </dd>
        </div>
      </dl>
      {h.isActive && streak >= WARN_FROM && (
        <p className="notice notice-warning" role="alert">
          {streak} deliveries in a row ended dead. At {AUTO_DISABLE_AT} this webhook switches itself off: fix the endpoint, then
          recover the failed deliveries.
        </p>
      )}
    </section>
  );
}
