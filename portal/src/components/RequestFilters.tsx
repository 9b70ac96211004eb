/**
 * The request log's filters (key, status, method, error code, path, time), applied when submitted and
 * kept in the URL. On a phone they fold into a drawer, closed at first (docs/portal.md, Phones).
 */

import type { DeveloperKey } from '@partner-logistics/sdk/types';
import { type FormEvent, useEffect, useId, useState, useSyncExternalStore } from 'react';
import { localTimeZone } from '../format';
import { keyLabel } from '../key-lineage';
import { fromLocalInput, requestsLink, toLocalInput } from '../request-log';
import { navigate } from '../router';
import type { RequestFilters } from '../types';
import '../screens/Requests.css';

const METHOD_CHOICES = [
  { value: '', label: 'Any method' },
  { value: 'GET', label: 'GET' },
  { value: 'POST', label: 'POST' },
];

const STATUS_CHOICES = [
  { value: '', label: 'Any status' },
  { value: '2xx', label: '2xx success' },
  { value: '4xx', label: '4xx client errors' },
  { value: '5xx', label: '5xx server errors' },
];

/** The filter form: applied when submitted, kept in the URL. */
export function Filters({ filters, keys }: { filters: RequestFilters; keys: DeveloperKey[] }) {
  const [draft, setDraft] = useState<RequestFilters>(filters);
  useEffect(() => setDraft(filters), [filters]);
  const id = useId();
  const set = (name: keyof RequestFilters, value: string | undefined) => setDraft((d) => ({ ...d, [name]: value || undefined }));
  const apply = (event: FormEvent) => {
    event.preventDefault();
    const clean: RequestFilters = { ...draft, code: draft.code?.trim().toUpperCase(), path: draft.path?.trim() };
    navigate(requestsLink(clean));
  };
  const statusChoices =
    filters.status && !STATUS_CHOICES.some((c) => c.value === filters.status)
      ? [...STATUS_CHOICES, { value: filters.status, label: `Status ${filters.status}` }]
      : STATUS_CHOICES;

  const keyChoices = [{ value: '', label: 'All keys' }, ...keys.map((k) => ({ value: k.id, label: keyLabel(k) }))];
  const phone = usePhoneWidth();
  const active = Object.keys(filters).length;

  const form = (
    <form className="log-filters" onSubmit={apply} aria-label="Filter requests">
      <Choice id={`${id}-key`} label="Key" value={draft.apiKeyId} choices={keyChoices} onChange={(v) => set('apiKeyId', v)} />
      <Choice
        id={`${id}-status`}
        label="Status"
        value={draft.status}
        choices={statusChoices}
        onChange={(v) => set('status', v)}
      />
      <Choice
        id={`${id}-method`}
        label="Method"
        value={draft.method}
        choices={METHOD_CHOICES}
        onChange={(v) => set('method', v)}
      />
      <Entry id={`${id}-code`} label="Error code" placeholder="ERR_…" value={draft.code} onChange={(v) => set('code', v)} />
      <Entry
        id={`${id}-path`}
        label="Path"
        placeholder="/v1/partner/orders/ORD-1*"
        hint="The whole path, or its start followed by *"
        wide
        value={draft.path}
        onChange={(v) => set('path', v)}
      />
      <Entry
        id={`${id}-since`}
        label="From"
        hint={`Your time (${localTimeZone()})`}
        type="datetime-local"
        value={toLocalInput(draft.since)}
        onChange={(v) => set('since', fromLocalInput(v))}
      />
      <Entry
        id={`${id}-until`}
        label="To"
        hint={`Your time (${localTimeZone()})`}
        type="datetime-local"
        value={toLocalInput(draft.until)}
        onChange={(v) => set('until', fromLocalInput(v))}
      />
      <div className="filter-actions">
        <button type="submit" className="primary">
          Apply filters
        </button>
        <button type="button" onClick={() => navigate('/requests')} disabled={Object.keys(filters).length === 0}>
          Clear
        </button>
      </div>
    </form>
  );
  // On a phone the seven filters would fill the first screen: they fold into a drawer, closed at first.
  if (!phone) return form;
  return (
    <details className="log-filters-drawer" data-testid="filters-drawer">
      <summary>Filters{active > 0 ? ` (${active} active)` : ''}</summary>
      {form}
    </details>
  );
}

const PHONE_QUERY = '(max-width: 640px)';

/** True at phone width (the breakpoint of the stylesheets), following resizes. */
function usePhoneWidth(): boolean {
  return useSyncExternalStore(
    (listener) => {
      const query = window.matchMedia(PHONE_QUERY);
      query.addEventListener('change', listener);
      return () => query.removeEventListener('change', listener);
    },
    () => window.matchMedia(PHONE_QUERY).matches,
  );
}

interface FieldProps {
  id: string;
  label: string;
  value: string | undefined;
  onChange: (value: string) => void;
}

function Choice({ id, label, value, choices, onChange }: FieldProps & { choices: Array<{ value: string; label: string }> }) {
  return (
    <div className="filter">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value ?? ''} onChange={(e) => onChange(e.target.value)}>
        {choices.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A text field (monospace: codes and paths) or, with `type`, a date-time field. */
function Entry({
  id,
  label,
  value,
  onChange,
  type,
  placeholder,
  hint,
  wide,
}: FieldProps & { type?: 'datetime-local'; placeholder?: string; hint?: string; wide?: boolean }) {
  return (
    <div className={wide ? 'filter filter-wide' : 'filter'}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type={type}
        className={type ? undefined : 'mono'}
        placeholder={placeholder}
        aria-describedby={hint ? `${id}-hint` : undefined}
        value={value ?? ''}
        onChange={(e) => onChange(e.target.value)}
      />
      {hint && (
        <span className="hint" id={`${id}-hint`}>
          {hint}
        </span>
      )}
    </div>
  );
}
