/** A webhook's state as a badge: active, or disabled (by the partner or by the failure rule). */
import type { DeveloperWebhook } from '@partner-logistics/sdk/types';
import { Badge } from './States';

export function WebhookStatus({ webhook }: { webhook: DeveloperWebhook }) {
  return webhook.isActive ? <Badge tone="ok">Active</Badge> : <Badge tone="bad">Disabled</Badge>;
}
