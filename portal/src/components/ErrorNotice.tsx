import type { ApiError } from '../api';

/** The API's error envelope as the user sees it: the message, then the field errors of ERR_VALIDATION. */
export function ErrorNotice({
  error,
  title,
  inlineFields = [],
}: {
  error: ApiError | null;
  title?: string;
  /** Fields whose messages the form shows beside the field itself: not repeated in the list. */
  inlineFields?: string[];
}) {
  if (!error) return null;
  const fields = error.fieldErrors.filter(
    (f) => !inlineFields.some((name) => f.field === name || f.field.startsWith(`${name}.`)),
  );
  return (
    <div className="notice notice-error" role="alert" data-error-code={error.code}>
      {title && <strong>{title} </strong>}
      <span>{error.message}</span>
      {fields.length > 0 && (
        <ul>
          {fields.map((f) => (
            <li key={f.field}>
              <code>{f.field || 'body'}</code>: {f.messages.join('; ')}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Messages the API gave for one form field (ERR_VALIDATION details), for aria-describedby hints. */
export function fieldMessages(error: ApiError | null, field: string): string[] {
  if (!error) return [];
  return error.fieldErrors.filter((f) => f.field === field || f.field.startsWith(`${field}.`)).flatMap((f) => f.messages);
}
