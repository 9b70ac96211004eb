/**
 * The Sandbox page's form that creates test orders for a key: start status, count, payment, customer.
 * The API checks the count; its answer is said once, beside the field, in the form's own terms.
 */
import type { Schemas } from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { developer } from '../client';
import { useClearedOnSuccess } from '../hooks';
import { ErrorNotice, fieldMessages } from './ErrorNotice';
import './sandbox.css';

type SandboxStartStatus = NonNullable<Schemas['CreateSandboxOrderDto']['status']>;

/**
 * The statuses a test order can start in: exactly the members of the API's enum for `status` (the
 * compiler checks the record against the SDK's generated type), in the order of the platform path.
 */
const START_STATUSES = Object.keys({
  PLACED: true,
  VENDOR_ACCEPTED: true,
  RUNNER_PICKUP: true,
  AT_HUB: true,
  PACKED: true,
} satisfies Record<SandboxStartStatus, true>) as SandboxStartStatus[];

export function CreateOrdersForm({ keyId, onCreated, succeeded }: { keyId: string; onCreated: () => void; succeeded: number }) {
  const ids = { status: useId(), count: useId(), countHint: useId() };
  const [status, setStatus] = useState<SandboxStartStatus>('PACKED');
  const [payment, setPayment] = useState<'' | 'COD' | 'CARD'>('');
  const [customer, setCustomer] = useState(true);
  const [count, setCount] = useState('1');
  const [created, setCreated] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: (body: Schemas['CreateSandboxOrderDto']) =>
      developer.POST('/v1/developer/keys/{id}/sandbox/orders', { params: { path: { id: keyId } }, body }),
    onSuccess: (result) => {
      setCreated(result.items.length === 1 ? `Created ${result.items[0].code}.` : `Created ${result.items.length} test orders.`);
      onCreated();
    },
  });
  useClearedOnSuccess(succeeded, () => create.reset());

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCreated(null);
    // The API checks the count (a number that is not one travels as null and is refused, naming it).
    create.mutate({
      status,
      customer,
      ...(count.trim() === '' ? {} : { count: Number(count) }),
      ...(payment ? { paymentMethod: payment } : {}),
    });
  };
  // The API's word on the count, said once, beside the field, in the form's own terms.
  const countError = fieldMessages(create.error, 'count').length > 0 ? 'Enter a whole number from 1 to 20.' : null;

  return (
    <form onSubmit={submit} className="sandbox-create" noValidate>
      <div className="row">
        <div className="field-inline">
          <label htmlFor={ids.status}>Status</label>
          <select id={ids.status} value={status} onChange={(e) => setStatus(e.target.value as SandboxStartStatus)}>
            {START_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div className="field-inline">
          <label htmlFor={ids.count}>How many</label>
          <input
            id={ids.count}
            type="number"
            inputMode="numeric"
            min={1}
            max={20}
            value={count}
            onChange={(e) => {
              setCount(e.target.value);
              create.reset();
            }}
            aria-invalid={countError !== null || undefined}
            aria-describedby={ids.countHint}
          />
          <span
            className={countError ? 'field-error' : 'hint'}
            id={ids.countHint}
            data-error-code={countError ? 'ERR_VALIDATION' : undefined}
          >
            {countError ?? '1 to 20'}
          </span>
        </div>
      </div>
      <fieldset>
        <legend>Payment</legend>
        <div className="row">
          {(
            [
              ['', 'Either, at random'],
              ['COD', 'Cash on delivery'],
              ['CARD', 'Card, paid online'],
            ] as const
          ).map(([value, label]) => (
            <label key={value} className="option">
              <input type="radio" name="payment" value={value} checked={payment === value} onChange={() => setPayment(value)} />
              {label}
            </label>
          ))}
        </div>
      </fieldset>
      <label className="option">
        <input type="checkbox" checked={customer} onChange={(e) => setCustomer(e.target.checked)} />
        With a customer (name, phone, address)
      </label>
      <ErrorNotice error={create.error} inlineFields={['count']} />
      <div className="actions sandbox-create-actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create test orders'}
        </button>
        {created && (
          <span role="status" className="hint">
            {created}
          </span>
        )}
      </div>
    </form>
  );
}
