/**
 * "Send test event": a kind picker (ping, or a realistic, signed sample of any event kind) and its
 * button. The sample's envelope id starts with evt_test_, so a receiver can tell it from a real event.
 */

import type { DeveloperDelivery } from '@partner-logistics/sdk/types';
import { useId, useState } from 'react';
import { developer } from '../client';
import { useAction } from '../hooks';
import { type EventKind, WEBHOOK_EVENTS } from '../types';
import { ErrorNotice } from './ErrorNotice';

export function TestEventPicker({
  webhookId,
  disabled,
  onSent,
  primary = false,
}: {
  webhookId: string;
  disabled: boolean;
  onSent: (delivery: DeveloperDelivery, kind: EventKind) => void;
  primary?: boolean;
}) {
  const [kind, setKind] = useState<EventKind>('ping');
  const pickerId = useId();
  const send = useAction(async () => onSent(await developer.webhooks.test(webhookId, { event: kind }), kind));
  return (
    <div className="test-event">
      <label htmlFor={pickerId} className="visually-hidden">
        Test event kind
      </label>
      <select id={pickerId} value={kind} onChange={(e) => setKind(e.target.value as EventKind)} disabled={disabled || send.busy}>
        <option value="ping">ping</option>
        {WEBHOOK_EVENTS.map((e) => (
          <option key={e.value} value={e.value}>
            {e.value} sample
          </option>
        ))}
      </select>
      <button
        type="button"
        className={primary ? 'primary' : undefined}
        onClick={() => void send.run()}
        disabled={disabled || send.busy}
      >
        {send.busy ? 'Sending…' : kind === 'ping' ? 'Send test ping' : 'Send test event'}
      </button>
      <ErrorNotice error={send.error} />
    </div>
  );
}
