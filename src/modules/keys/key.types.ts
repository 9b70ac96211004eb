/**
 * The API key as authentication sees it: the partner, environment, scopes and limits a request is
 * admitted with. Read by keys.repo.ts (findKeyByHash) and cached by key-resolver.ts.
 */
import type { ApiKeyEnvironment, ApiKeyScope } from '../../shared/schemas.js';
import type { ProofPolicy } from '../partners/partners.schemas.js';

export interface ResolvedKey {
  id: string;
  partnerId: string;
  partnerName: string;
  name: string;
  environment: ApiKeyEnvironment;
  scopes: ApiKeyScope[];
  rateLimit: number;
  receivesAllOrders: boolean;
  /** When the key stops working (revoke: now; rotation: now + 24 h); null while active. */
  revokedAtMs: number | null;
  /**
   * The key whose orders and webhooks this key acts on: itself, or for a rotated-out key in its grace
   * period the newest key of its rotation chain (orders move forward at every rotation).
   */
  actsForKeyId: string;
  /** The partner's proof policy (docs/tracking-and-proof.md): what DELIVERED and FAILED must carry. */
  proofPolicy: ProofPolicy;
}
