/** Sums of a key's daily usage, as the key page and the usage overview show them. */
import type { DeveloperKeyUsage } from '@partner-logistics/sdk/types';

/** The requests, client errors and server errors of the given days, added up. */
export function sumUsage(items: DeveloperKeyUsage[]) {
  return items.reduce(
    (t, d) => ({
      requests: t.requests + d.requests,
      clientErrors: t.clientErrors + d.clientErrors,
      serverErrors: t.serverErrors + d.serverErrors,
    }),
    { requests: 0, clientErrors: 0, serverErrors: 0 },
  );
}
