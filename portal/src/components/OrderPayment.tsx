/**
 * An order's payment intent (GET /v1/developer/orders/{code}/payment-intent) in plain words: how it is
 * paid, where the money stands, and the statement holding its cash. Says nothing when there is none.
 */

import { developer } from '../client';
import { formatDateTime } from '../format';
import { formatManat, INTENT_STATUS_LABEL } from '../payments';
import { queryKeys, useApiQuery } from '../query';
import { Link } from '../router';

export function OrderPayment({ code }: { code: string }) {
  const intent = useApiQuery(queryKeys.orderIntent(code), () =>
    developer.GET('/v1/developer/orders/{code}/payment-intent', { params: { path: { code } } }),
  );
  const p = intent.data;
  if (!p) return null;
  const query = p.environment === 'sandbox' ? '?environment=sandbox' : '';
  return (
    <section aria-labelledby="payment-heading" className="section">
      <h2 id="payment-heading">Payment</h2>
      <table className="table headers" data-testid="order-payment">
        <tbody>
          <tr>
            <th scope="row">How it is paid</th>
            <td>{p.method === 'COD' ? 'Cash on delivery' : 'Card'}</td>
          </tr>
          <tr>
            <th scope="row">Status</th>
            <td data-testid="payment-status">{INTENT_STATUS_LABEL[p.status]}</td>
          </tr>
          <tr>
            <th scope="row">{p.method === 'COD' ? 'To collect' : 'Amount'}</th>
            <td>{formatManat(p.amountQepik)}</td>
          </tr>
          <tr>
            <th scope="row">{p.method === 'COD' ? 'Collected' : 'Captured'}</th>
            <td data-testid="payment-received">
              {formatManat(p.amountReceivedQepik)}
              {p.capturedAt ? ` on ${formatDateTime(p.capturedAt)}` : ''}
            </td>
          </tr>
          {p.amountRefundedQepik > 0 && (
            <tr>
              <th scope="row">Refunded</th>
              <td>{formatManat(p.amountRefundedQepik)}</td>
            </tr>
          )}
          {p.settlementId && (
            <tr>
              <th scope="row">Statement</th>
              <td>
                <Link to={`/payments/settlements/${encodeURIComponent(p.settlementId)}${query}`} className="mono">
                  {p.settlementId}
                </Link>
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}
