/**
 * How an API error is shown, by one rule: each error in one place, in plain words.
 * - A form shows the problems of its own fields beside each field (`fieldMessages`), and the form's
 *   `ErrorNotice` names those fields (`inlineFields`, and `inlineCodes` for an error code a field
 *   explains): when everything is said beside the fields, the notice shows nothing.
 * - The validator's schema wording ("must be <= 20") is turned into plain words (`plainMessage`).
 * - Who shows an error clears it when the input changes or a later action succeeds.
 */
import type { PartnerApiError } from '@partner-logistics/sdk/developer';
import { toApiError } from '../client';

const RULES: Array<[RegExp, (...m: string[]) => string]> = [
  [/^must be <= (\S+)$/, (n) => `must be at most ${n}`],
  [/^must be >= (\S+)$/, (n) => `must be at least ${n}`],
  [/^must be < (\S+)$/, (n) => `must be less than ${n}`],
  [/^must be > (\S+)$/, (n) => `must be more than ${n}`],
  [/^must NOT have more than (\d+) characters$/, (n) => `must be at most ${n} characters long`],
  [/^must NOT have fewer than (\d+) characters$/, (n) => `must be at least ${n} characters long`],
  [/^must NOT have more than (\d+) items$/, (n) => `may list at most ${n}`],
  [/^must NOT have fewer than (\d+) items$/, (n) => `must list at least ${n}`],
  [/^must be integer$/, () => 'must be a whole number'],
  [/^must be number$/, () => 'must be a number'],
  [/^must be string$/, () => 'must be text'],
  [/^must be boolean$/, () => 'must be yes or no'],
  [/^must be equal to one of the allowed values$/, () => 'must be one of the choices offered'],
  [/^must match format "uri"$/, () => 'must be a web address such as https://example.com/hooks'],
  [/^must match format "date-time"$/, () => 'must be a date and time'],
  [/^must match format "(\S+)"$/, (f) => `must be a valid ${f}`],
  [/^must have required property '(\S+)'$/, (p) => `needs ${p}`],
  [/^must NOT have additional properties$/, () => 'holds a field the API does not know'],
  [/^must NOT have duplicate items.*$/, () => 'must not list anything twice'],
];

/** A validator message in plain words ("must be <= 20" → "must be at most 20"); other text as it is. */
export function plainMessage(message: string): string {
  for (const [pattern, say] of RULES) {
    const m = pattern.exec(message);
    if (m) return say(...m.slice(1));
  }
  return message;
}

/** Noise of nullable unions ("must be null", "must match a schema in anyOf") beside a real message. */
const NOISE = /^must (be null|match a schema in anyOf|match exactly one schema in oneOf)$/;

function plainList(messages: string[]): string[] {
  const real = messages.filter((m) => !NOISE.test(m));
  return [...new Set((real.length ? real : messages).map(plainMessage))];
}

export function ErrorNotice({
  error: failure,
  title,
  inlineFields = [],
  inlineCodes = [],
}: {
  /** A failed read or write (TanStack Query's `error`): an API error as it is, any other failure as ERR_CLIENT. */
  error: Error | null;
  title?: string;
  /** Fields whose messages the form shows beside the field itself: not repeated here. */
  inlineFields?: string[];
  /** Error codes a field explains beside itself (ERR_WEBHOOK_URL_INVALID under the URL): not repeated here. */
  inlineCodes?: string[];
}) {
  if (!failure) return null;
  const error = toApiError(failure);
  if (inlineCodes.includes(error.code)) return null;
  const all = error.fieldErrors;
  const fields = all.filter((f) => !inlineFields.some((name) => f.field === name || f.field.startsWith(`${name}.`)));
  // Every problem is said beside its field already.
  if (all.length > 0 && fields.length === 0) return null;
  return (
    <div className="notice notice-error" role="alert" data-error-code={error.code}>
      {title && <strong>{title} </strong>}
      {fields.length > 0 ? (
        <>
          <span>The request was not accepted:</span>
          <ul>
            {fields.map((f) => (
              <li key={f.field}>
                <code>{f.field || 'body'}</code> {plainList(f.messages).join('; ')}
              </li>
            ))}
          </ul>
        </>
      ) : (
        <span>{plainError(error)}</span>
      )}
    </div>
  );
}

/** The error's message; an error with no answer of the API behind it in the portal's words. */
function plainError(error: PartnerApiError): string {
  if (error.code === 'ERR_NETWORK') return 'Could not reach the server. Check your connection and try again.';
  if (error.code === 'ERR_UNEXPECTED_RESPONSE') return `The server answered with an unexpected HTTP ${error.status}.`;
  return error.message;
}

/** What the API said about one form field (ERR_VALIDATION details), in plain words, for beside the field. */
export function fieldMessages(error: Error | null, field: string): string[] {
  if (!error) return [];
  return plainList(
    toApiError(error)
      .fieldErrors.filter((f) => f.field === field || f.field.startsWith(`${field}.`))
      .flatMap((f) => f.messages),
  );
}
