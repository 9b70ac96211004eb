/**
 * Suggests rotating a signing secret made in the earlier base64url form (docs/webhook-signatures.md,
 * "Secrets"): it still signs both header sets, but the Standard Webhooks libraries cannot decode it as
 * it is. Shows nothing for a standard base64 secret, or when the form could not be read.
 */
import type { DeveloperWebhook } from '@partner-logistics/sdk/types';
import { developer } from '../client';
import { queryKeys, useApiQuery } from '../query';

export function SecretFormNotice({ webhook, onRotate }: { webhook: DeveloperWebhook; onRotate: (w: DeveloperWebhook) => void }) {
  const form = useApiQuery(queryKeys.webhookSecret(webhook.id), () => developer.webhooks.signingSecret(webhook.id));
  if (!form.data?.rotationSuggested) return null;
  return (
    <div className="notice notice-warning" data-testid="rotate-secret-suggested">
      <p>
        This webhook’s signing secret was made in an older form. Standard Webhooks libraries cannot read it as it is
        (X-Partner-Signature and our SDK still verify it). Rotate it to get a secret that every verifier accepts; the old one
        keeps signing during the grace period you choose.
      </p>
      <button type="button" onClick={() => onRotate(webhook)}>
        Rotate the secret…
      </button>
    </div>
  );
}
