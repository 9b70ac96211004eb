/**
 * Rotate a webhook's signing secret: choose how long the previous secret keeps signing too, then the new
 * secret is shown once, with the moment the previous one stops. Meanwhile every delivery carries both
 * signatures, so receivers can switch at their own pace.
 */

import type { DeveloperWebhook, DeveloperWebhookRotated } from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { developer } from '../client';
import { formatDateTime } from '../format';
import { Dialog } from './Dialog';
import { ErrorNotice } from './ErrorNotice';
import { CopiedButton, SecretReveal, secretBlockedNote } from './SecretReveal';

const GRACE_CHOICES = [
  { hours: 0, label: 'No overlap: the old secret stops now' },
  { hours: 1, label: '1 hour' },
  { hours: 24, label: '24 hours (recommended)' },
  { hours: 72, label: '3 days' },
  { hours: 168, label: '7 days (the longest)' },
];

export function RotateSecretDialog({
  webhook,
  onClose,
  onRotated,
}: {
  webhook: DeveloperWebhook | null;
  onClose: () => void;
  onRotated: (w: DeveloperWebhook) => void;
}) {
  const [grace, setGrace] = useState(24);
  const [rotated, setRotated] = useState<DeveloperWebhookRotated | null>(null);
  const graceId = useId();
  const rotate = useMutation({
    mutationFn: (id: string) => developer.webhooks.rotateSecret(id, { graceHours: grace }),
    onSuccess: (result) => {
      setRotated(result);
      const { secret: _secret, previousSecretExpiresAt: _until, ...plain } = result;
      onRotated(plain);
    },
  });
  const close = () => {
    onClose();
    // Forget the one-time secret as soon as the dialog closes.
    setRotated(null);
    setGrace(24);
    rotate.reset();
  };
  return (
    <Dialog
      open={webhook !== null}
      title={rotated ? 'New signing secret' : 'Rotate the signing secret?'}
      onClose={close}
      dismissable={!rotate.isPending && !rotated}
      blockedNote={secretBlockedNote('signing secret')}
      focusKey={rotated ? 'rotated' : 'form'}
    >
      {rotated ? (
        <>
          <SecretReveal label="New signing secret" noun="signing secret" value={rotated.secret} testId="rotated-secret" />
          <p data-testid="grace-end">
            {rotated.previousSecretExpiresAt > new Date().toISOString() ? (
              <>
                Until <strong>{formatDateTime(rotated.previousSecretExpiresAt)}</strong> every delivery is signed with both
                secrets in both schemes: <code>X-Partner-Signature: t=…,v1=&lt;new&gt;,v1=&lt;old&gt;</code> and{' '}
                <code>webhook-signature: v1,&lt;new&gt; v1,&lt;old&gt;</code> (Standard Webhooks), so your endpoint accepts it
                with either secret, whichever scheme it verifies. Switch your endpoint to the new secret before then.
              </>
            ) : (
              <>The previous secret no longer signs: deliveries from now on verify with the new secret only.</>
            )}
          </p>
          <CopiedButton onClick={close} />
        </>
      ) : (
        <>
          <p>
            A new secret signs every delivery of <span className="mono">{webhook?.url}</span> from now on. The current secret can
            keep signing too for a while, so you can update your endpoint without missing a delivery.
          </p>
          <label htmlFor={graceId}>Keep the current secret working for</label>
          <select id={graceId} value={grace} onChange={(e) => setGrace(Number(e.target.value))}>
            {GRACE_CHOICES.map((c) => (
              <option key={c.hours} value={c.hours}>
                {c.label}
              </option>
            ))}
          </select>
          <ErrorNotice error={rotate.error} />
          <div className="dialog-actions">
            <button type="button" onClick={close} disabled={rotate.isPending} data-autofocus>
              Cancel
            </button>
            <button
              type="button"
              className="primary"
              disabled={rotate.isPending}
              onClick={() => webhook && rotate.mutate(webhook.id)}
            >
              {rotate.isPending ? 'Rotating…' : 'Rotate secret'}
            </button>
          </div>
        </>
      )}
    </Dialog>
  );
}
