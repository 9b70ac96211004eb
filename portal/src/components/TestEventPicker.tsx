/**
 * "Send test event": a kind picker (ping, or a realistic, signed sample of any kind of the event catalog
 * the webhook's key may receive, grouped as the webhook forms group them) and its button. The sample's
 * envelope id starts with evt_test_, so a receiver can tell it from a real event.
 */

import type { ApiKeyScope, DeveloperDelivery } from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { developer } from '../client';
import { groupKinds, kindsForKey } from '../event-kinds';
import { useEventCatalog } from '../query';
import type { EventKind } from '../types';
import { ErrorNotice } from './ErrorNotice';

export function TestEventPicker({
  webhookId,
  scopes,
  disabled,
  onSent,
  primary = false,
}: {
  webhookId: string;
  /** The scopes of the webhook's key: payment and settlement samples need payments:read. */
  scopes: readonly ApiKeyScope[];
  disabled: boolean;
  onSent: (delivery: DeveloperDelivery, kind: EventKind) => void;
  primary?: boolean;
}) {
  const [kind, setKind] = useState<EventKind>('ping');
  const pickerId = useId();
  const catalog = useEventCatalog();
  const groups = groupKinds(catalog.data ? kindsForKey(catalog.data, scopes) : []);
  const send = useMutation({
    mutationFn: (event: EventKind) => developer.webhooks.test(webhookId, { event }),
    onSuccess: (delivery, event) => onSent(delivery, event),
  });
  return (
    <div className="test-event">
      <label htmlFor={pickerId} className="visually-hidden">
        Test event kind
      </label>
      <select
        id={pickerId}
        value={kind}
        onChange={(e) => setKind(e.target.value as EventKind)}
        disabled={disabled || send.isPending}
      >
        <option value="ping">ping</option>
        {groups.map((group) => (
          <optgroup key={group.label} label={group.label}>
            {group.kinds.map((k) => (
              <option key={k.type} value={k.type}>
                {k.type} sample
              </option>
            ))}
          </optgroup>
        ))}
      </select>
      <button
        type="button"
        className={primary ? 'primary' : undefined}
        onClick={() => send.mutate(kind)}
        disabled={disabled || send.isPending}
      >
        {send.isPending ? 'Sending…' : kind === 'ping' ? 'Send test ping' : 'Send test event'}
      </button>
      <ErrorNotice error={send.error} />
    </div>
  );
}
