/**
 * The sandbox simulator (decisions §14): for one sandbox key, play the marketplace (create test orders,
 * move them as the marketplace would, run van batches) and follow the go-live checklist of what the
 * integration has proven. The moves offered for each order and batch are the ones the API says the
 * state machine allows from its status; nothing here decides them. The page follows the realtime
 * channel: orders, deliveries and logged requests reload what they change.
 */
import { type FormEvent, useCallback, useEffect, useId, useRef, useState } from 'react';
import { api } from '../api';
import { ApiBaseUrls } from '../components/ApiBaseUrls';
import { ErrorNotice, fieldMessages } from '../components/ErrorNotice';
import { GoLiveChecklist } from '../components/GoLiveChecklist';
import { usePageTitle } from '../components/PageTitle';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { formatNumber } from '../format';
import { useAction, useResource } from '../hooks';
import { keyLabel } from '../key-lineage';
import { onReconnect, subscribe } from '../realtime';
import { Link, navigate, useSearchParam } from '../router';
import {
  type BatchStatus,
  type OrderStatus,
  type SandboxBatch,
  type SandboxOrder,
  type SandboxStartStatus,
  sandboxApi,
} from '../sandbox-api';
import type { DeveloperKey } from '../types';
import '../components/sandbox.css';

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

/** How each marketplace move reads on its button: the status it moves the order to. */
const MOVE_LABELS: Record<OrderStatus, string> = {
  PLACED: 'Place',
  VENDOR_ACCEPTED: 'Vendor accepts',
  RUNNER_PICKUP: 'Runner picks up',
  AT_HUB: 'Arrives at the hub',
  PACKED: 'Packed at the hub',
  SCANNED_TO_VAN: 'Scan onto a van',
  EN_ROUTE: 'Out for delivery',
  DELIVERED: 'Delivered',
  FAILED: 'Delivery failed',
  RETURNED: 'Return to sender',
  CANCELLED: 'Cancel order',
};

const BATCH_LABELS: Record<BatchStatus, string> = {
  OPEN: 'Reopen',
  DISPATCHED: 'Dispatch the van',
  COMPLETED: 'Complete the batch',
};

const FINAL: OrderStatus[] = ['DELIVERED', 'RETURNED', 'CANCELLED'];

/**
 * Why a sandbox key cannot run the simulator, or null when it can: the simulator acts for the key's
 * integration, which must be able to report events (logistics:write) on the sandbox API.
 */
function whyNot(key: DeveloperKey): string | null {
  if (!key.isActive) return 'revoked';
  if (!key.scopes.includes('logistics:write')) return 'no logistics:write scope';
  return null;
}

/** The key the page opens on: the one asked for if it can run the simulator, else the newest unrotated one that can. */
function pickKey(keys: DeveloperKey[], wanted: string | null): DeveloperKey | undefined {
  const able = keys.filter((k) => whyNot(k) === null);
  return able.find((k) => k.id === wanted) ?? able.find((k) => k.revokedAt === null) ?? able[0];
}

export function Sandbox() {
  usePageTitle('Sandbox');
  const keys = useResource(api.listKeys, []);
  const wanted = useSearchParam('key');
  const selectId = useId();
  const sandboxKeys = (keys.data ?? []).filter((k) => k.environment === 'SANDBOX' && k.isActive);
  const current = pickKey(sandboxKeys, wanted);
  const unable = sandboxKeys.filter((k) => whyNot(k) !== null);
  const refused = wanted ? sandboxKeys.find((k) => k.id === wanted && whyNot(k) !== null) : undefined;

  return (
    <>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1}>Sandbox</h1>
          <p className="lead">
            Play the marketplace for one of your sandbox keys: create test orders, move them as the marketplace would (accept,
            cancel, return after a failure, van batches) and watch your integration receive the webhooks. The go-live checklist
            shows what your integration has proven so far.
          </p>
          <ApiBaseUrls only="SANDBOX" />
        </div>
      </div>

      {keys.error && !keys.data && <LoadError error={keys.error} onRetry={() => void keys.reload()} />}
      {keys.loading && !keys.data && <Loading label="Loading keys…" />}
      {keys.data && !current && (
        <Empty>
          <p data-testid="no-simulator-key">
            The simulator needs an active sandbox key with the <code>logistics:write</code> scope, so that your integration can
            report pickups and deliveries.{' '}
            {unable.length > 0 &&
              `${unable.length === 1 ? 'Your sandbox key' : 'Your sandbox keys'} ${unable.map((k) => `“${keyLabel(k)}”`).join(', ')} ${unable.length === 1 ? 'lacks' : 'lack'} that scope. `}
            <Link to="/keys">Create a sandbox key</Link> with it.
          </p>
        </Empty>
      )}
      {current && (
        <>
          <div className="field-inline sandbox-key-picker">
            <label htmlFor={selectId}>Sandbox key</label>
            <select
              id={selectId}
              value={current.id}
              aria-describedby={unable.length > 0 ? `${selectId}-why` : undefined}
              onChange={(e) => navigate(`/sandbox?key=${encodeURIComponent(e.target.value)}`, { replace: true })}
            >
              {sandboxKeys.map((k) => (
                <option key={k.id} value={k.id} disabled={whyNot(k) !== null}>
                  {keyLabel(k)}
                  {whyNot(k) ? ` — cannot run the simulator: ${whyNot(k)}` : ''}
                </option>
              ))}
            </select>
          </div>
          {unable.length > 0 && (
            <p className="hint" id={`${selectId}-why`} data-testid="unusable-keys">
              {refused ? `“${keyLabel(refused)}” cannot run the simulator. ` : ''}
              Only keys with the <code>logistics:write</code> scope can run it: your integration must be able to report events.
              Not offered: {unable.map((k) => `“${keyLabel(k)}” (${whyNot(k)})`).join(', ')}.
            </p>
          )}
          <KeySandbox key={current.id} apiKey={current} />
        </>
      )}
    </>
  );
}

/** Calls `fn` at most once per `ms` for a burst of triggers (the last trigger always gets its call). */
function useCoalesced(fn: () => void, ms: number): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  return useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      latest.current();
    }, ms);
  }, [ms]);
}

function KeySandbox({ apiKey }: { apiKey: DeveloperKey }) {
  const keyId = apiKey.id;
  const overview = useResource(() => sandboxApi.overview(keyId), [keyId]);
  const checklist = useResource(() => sandboxApi.checklist(keyId), [keyId]);
  const reloadOverview = useCoalesced(() => void overview.reload(), 250);
  const reloadChecklist = useCoalesced(() => void checklist.reload(), 500);

  useEffect(() => {
    const offs = [
      subscribe('order.updated', () => {
        reloadOverview();
        reloadChecklist();
      }),
      subscribe('delivery.updated', reloadChecklist),
      subscribe('request.logged', reloadChecklist),
      onReconnect(() => {
        reloadOverview();
        reloadChecklist();
      }),
    ];
    return () => {
      for (const off of offs) off();
    };
  }, [reloadOverview, reloadChecklist]);

  // Each successful action counts: an error shown for an earlier action is cleared by a later success.
  const [succeeded, setSucceeded] = useState(0);
  const after = () => {
    setSucceeded((n) => n + 1);
    reloadOverview();
    reloadChecklist();
  };

  return (
    <>
      <section className="section" aria-labelledby="checklist-heading" data-testid="checklist">
        <div className="section-head">
          <h2 id="checklist-heading">Go-live checklist</h2>
          <button type="button" onClick={() => void checklist.reload()} disabled={checklist.loading}>
            Refresh
          </button>
        </div>
        {checklist.error && <ErrorNotice error={checklist.error} title="Could not load the checklist." />}
        {!checklist.data && checklist.loading && <Loading label="Loading the checklist…" />}
        {checklist.data && <GoLiveChecklist checklist={checklist.data} />}
      </section>

      <section className="section" aria-labelledby="create-heading">
        <h2 id="create-heading">Create test orders</h2>
        <CreateOrdersForm keyId={keyId} onCreated={after} succeeded={succeeded} />
      </section>

      {overview.error && !overview.data && <LoadError error={overview.error} onRetry={() => void overview.reload()} />}
      {!overview.data && overview.loading && <Loading label="Loading test orders…" />}
      {overview.data && (
        <Orders
          keyId={keyId}
          orders={overview.data.orders}
          batches={overview.data.batches}
          onChanged={after}
          succeeded={succeeded}
        />
      )}
    </>
  );
}

/** Clears an action's error when a later action of the page succeeds (`succeeded` counts them). */
function useClearedOnSuccess(succeeded: number, clear: () => void): void {
  const latest = useRef(clear);
  latest.current = clear;
  const seen = useRef(succeeded);
  useEffect(() => {
    if (succeeded !== seen.current) latest.current();
    seen.current = succeeded;
  }, [succeeded]);
}

function CreateOrdersForm({ keyId, onCreated, succeeded }: { keyId: string; onCreated: () => void; succeeded: number }) {
  const ids = { status: useId(), count: useId(), countHint: useId() };
  const [status, setStatus] = useState<SandboxStartStatus>('PACKED');
  const [payment, setPayment] = useState<'' | 'COD' | 'CARD'>('');
  const [customer, setCustomer] = useState(true);
  const [count, setCount] = useState('1');
  const [created, setCreated] = useState<string | null>(null);
  const create = useAction(sandboxApi.createOrders);
  useClearedOnSuccess(succeeded, () => create.setError(null));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setCreated(null);
    // The API checks the count (a number that is not one travels as null and is refused, naming it).
    const result = await create.run(keyId, {
      status,
      customer,
      ...(count.trim() === '' ? {} : { count: Number(count) }),
      ...(payment ? { paymentMethod: payment } : {}),
    });
    if (result) {
      setCreated(result.items.length === 1 ? `Created ${result.items[0].code}.` : `Created ${result.items.length} test orders.`);
      onCreated();
    }
  };
  // The API's word on the count, said once, beside the field, in the form's own terms.
  const countError = fieldMessages(create.error, 'count').length > 0 ? 'Enter a whole number from 1 to 20.' : null;

  return (
    <form onSubmit={(e) => void submit(e)} className="sandbox-create" noValidate>
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
              create.setError(null);
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
        <button type="submit" className="primary" disabled={create.busy}>
          {create.busy ? 'Creating…' : 'Create test orders'}
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

/** Qəpik as manat, the way a courier reads it (100 qəpik = 1 AZN). */
function formatAzn(qepik: number): string {
  return `${formatNumber(Math.floor(qepik / 100))}.${String(qepik % 100).padStart(2, '0')} AZN`;
}

/** A marketplace move of an order or a batch: its label, and what it moves for screen readers. */
function MoveButton(props: { to: string; label: string; of: string; disabled: boolean; danger?: boolean; onClick: () => void }) {
  return (
    <button
      type="button"
      data-move={props.to}
      title={`Moves ${props.of} to ${props.to}`}
      disabled={props.disabled}
      className={props.danger ? 'danger' : undefined}
      onClick={props.onClick}
    >
      {props.label}
      <span className="visually-hidden"> {props.of}</span>
    </button>
  );
}

/** An order's or batch's card heading: its code and its status. */
function CardHead({ code, status, tone }: { code: string; status: string; tone: Parameters<typeof Badge>[0]['tone'] }) {
  return (
    <div className="sandbox-order-head">
      <h3>
        <code>{code}</code>
      </h3>
      <Badge tone={tone}>{status}</Badge>
    </div>
  );
}

function statusTone(status: OrderStatus): 'ok' | 'bad' | 'muted' | 'warn' {
  if (status === 'DELIVERED') return 'ok';
  if (status === 'FAILED') return 'warn';
  if (status === 'CANCELLED' || status === 'RETURNED') return 'bad';
  return 'muted';
}

function Orders({
  keyId,
  orders,
  batches,
  onChanged,
  succeeded,
}: {
  keyId: string;
  orders: SandboxOrder[];
  batches: SandboxBatch[];
  onChanged: () => void;
  succeeded: number;
}) {
  const [selected, setSelected] = useState<string[]>([]);
  const move = useAction(sandboxApi.moveOrder);
  const batch = useAction(sandboxApi.createBatch);
  const moveBatch = useAction(sandboxApi.moveBatch);
  const error = move.error ?? batch.error ?? moveBatch.error;
  useClearedOnSuccess(succeeded, () => {
    move.setError(null);
    batch.setError(null);
    moveBatch.setError(null);
  });
  const busy = move.busy || batch.busy || moveBatch.busy;

  // An order on an OPEN or DISPATCHED batch cannot join another; a finished order has nothing to ship.
  const batchable = (o: SandboxOrder) =>
    !FINAL.includes(o.order.status) && !(o.order.batch && o.order.batch.status !== 'COMPLETED');
  const chosen = selected.filter((code) => orders.some((o) => o.order.code === code && batchable(o)));

  const run = async (action: Promise<unknown>) => {
    if ((await action) !== undefined) onChanged();
  };

  return (
    <>
      <section className="section" aria-labelledby="orders-heading">
        <div className="section-head">
          <h2 id="orders-heading">Test orders</h2>
          <button
            type="button"
            disabled={chosen.length === 0 || busy}
            onClick={() =>
              void run(
                batch.run(keyId, chosen).then((b) => {
                  if (b) setSelected([]);
                  return b;
                }),
              )
            }
          >
            {chosen.length === 0
              ? 'Put ticked orders on a van batch'
              : `Put ${chosen.length === 1 ? '1 order' : `${chosen.length} orders`} on a van batch`}
          </button>
        </div>
        <ErrorNotice error={error} />
        {orders.length === 0 ? (
          <p className="empty-inline">No test orders for this key yet. Create some above.</p>
        ) : (
          <ul className="sandbox-orders">
            {orders.map((entry) => {
              const { order } = entry;
              return (
                <li key={order.code} className="card sandbox-order" data-order-code={order.code} data-status={order.status}>
                  <CardHead code={order.code} status={order.status} tone={statusTone(order.status)} />
                  <p className="hint">
                    {order.paymentMethod === 'COD'
                      ? `Cash on delivery: ${formatAzn(order.codAmountQepik)} to collect`
                      : 'Card, paid online: nothing to collect'}
                    {order.customer === null ? ' · no customer' : ''}
                    {order.batch ? ` · van batch ${order.batch.code} (${order.batch.status})` : ''}
                  </p>
                  <p className="hint" data-testid="partner-events">
                    {entry.partnerEvents.length > 0
                      ? `Your system may send now: ${entry.partnerEvents.join(', ')}.`
                      : 'Nothing for your system to send in this status.'}
                  </p>
                  {entry.platformMoves.length > 0 && (
                    <fieldset className="sandbox-moves">
                      <legend>Move it as the marketplace</legend>
                      <div className="actions">
                        {entry.platformMoves.map((to) => (
                          <MoveButton
                            key={to}
                            to={to}
                            label={MOVE_LABELS[to]}
                            of={order.code}
                            disabled={busy}
                            danger={to === 'CANCELLED'}
                            onClick={() => void run(move.run(keyId, order.code, to))}
                          />
                        ))}
                      </div>
                    </fieldset>
                  )}
                  {batchable(entry) && (
                    <label className="option">
                      <input
                        type="checkbox"
                        checked={selected.includes(order.code)}
                        onChange={(e) =>
                          setSelected((s) => (e.target.checked ? [...s, order.code] : s.filter((c) => c !== order.code)))
                        }
                      />
                      Add to a van batch<span className="visually-hidden"> {order.code}</span>
                    </label>
                  )}
                </li>
              );
            })}
          </ul>
        )}
      </section>

      <section className="section" aria-labelledby="batches-heading">
        <h2 id="batches-heading">Van batches</h2>
        {batches.length === 0 ? (
          <p className="empty-inline">No van batches yet. Tick orders above and put them on a van batch.</p>
        ) : (
          <ul className="sandbox-orders">
            {batches.map((b) => (
              <li key={b.code} className="card sandbox-order" data-batch-code={b.code} data-status={b.status}>
                <CardHead code={b.code} status={b.status} tone={b.status === 'COMPLETED' ? 'ok' : 'muted'} />
                <p className="hint">Orders: {b.orderCodes.join(', ')}</p>
                {b.moves.length > 0 && (
                  <div className="actions">
                    {b.moves.map((to) => (
                      <MoveButton
                        key={to}
                        to={to}
                        label={BATCH_LABELS[to]}
                        of={b.code}
                        disabled={busy}
                        onClick={() => void run(moveBatch.run(keyId, b.code, to))}
                      />
                    ))}
                  </div>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
