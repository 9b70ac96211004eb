/**
 * An order's payment in plain words (docs/portal.md, "The order page"): how it is paid, where the money
 * stands, the capture (or the cash collected) and every refund, and the statement holding its cash.
 */
import type { PaymentIntent, PaymentRefund } from '@partner-logistics/sdk/types';
import { formatDateTime } from '../format';
import { formatManat, INTENT_STATUS_LABEL } from '../payments';
import { Link } from '../router';

export function OrderPayment({ intent, refunds }: { intent: PaymentIntent | null; refunds: PaymentRefund[] }) {
  if (!intent) {
    return (
      <section aria-labelledby="payment-heading" className="section">
        <h2 id="payment-heading">Payment</h2>
        <p className="empty-inline">This order has no payment record.</p>
      </section>
    );
  }
  const p = intent;
  const query = p.environment === 'sandbox' ? '?environment=sandbox' : '';
  const cod = p.method === 'COD';
  return (
    <section aria-labelledby="payment-heading" className="section">
      <h2 id="payment-heading">Payment</h2>
      <table className="table headers" data-testid="order-payment">
        <tbody>
          <tr>
            <th scope="row">How it is paid</th>
            <td>{cod ? 'Cash on delivery' : 'Card'}</td>
          </tr>
          <tr>
            <th scope="row">Status</th>
            <td data-testid="payment-status">{INTENT_STATUS_LABEL[p.status]}</td>
          </tr>
          <tr>
            <th scope="row">{cod ? 'To collect' : 'Amount'}</th>
            <td>{formatManat(p.amountQepik)}</td>
          </tr>
          <tr>
            <th scope="row">{cod ? 'Collected' : 'Captured'}</th>
            <td data-testid="payment-received">
              {p.capturedAt
                ? `${formatManat(p.amountReceivedQepik)} on ${formatDateTime(p.capturedAt)}`
                : cod
                  ? 'Not yet'
                  : 'Not captured yet'}
            </td>
          </tr>
          {!cod && (
            <tr>
              <th scope="row">Refunded</th>
              <td data-testid="payment-refunded">{formatManat(p.amountRefundedQepik)}</td>
            </tr>
          )}
          {p.canceledAt && (
            <tr>
              <th scope="row">Canceled</th>
              <td>{formatDateTime(p.canceledAt)}</td>
            </tr>
          )}
          <tr>
            <th scope="row">Statement</th>
            <td>
              {p.settlementId ? (
                <Link to={`/payments/settlements/${encodeURIComponent(p.settlementId)}${query}`} className="mono">
                  {p.settlementId}
                </Link>
              ) : cod && p.capturedAt ? (
                'Not on a statement yet: cash on hand'
              ) : (
                'None'
              )}
            </td>
          </tr>
          <tr>
            <th scope="row">Payment intent</th>
            <td className="mono">{p.id}</td>
          </tr>
        </tbody>
      </table>
      {refunds.length > 0 && (
        <>
          <h3>Refunds</h3>
          <div className="table-wrap">
            <table className="table cards-on-phone" data-testid="order-refunds">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {refunds.map((r) => (
                  <tr key={r.id} data-refund-id={r.id}>
                    <td data-label="When">{formatDateTime(r.createdAt)}</td>
                    <td data-label="Amount">{formatManat(r.amountQepik)}</td>
                    <td data-label="Reason">{r.reason ?? 'No reason given'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
