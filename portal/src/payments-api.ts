/**
 * Payments as the portal reads them (docs/payments.md, "Developer portal reads"): the partner's balance
 * and settlements per environment, a statement's lines and CSV, an order's payment intent. Shapes are
 * the SDK's generated types. Amounts are integer qəpik; `formatManat` writes them in manat exactly.
 */
import type { components } from '@partner-logistics/sdk/types';
import { ApiError, authed, freshAccessToken } from './api';
import type { ApiKeyEnvironment, Page } from './types';

type Schemas = components['schemas'];

export type PartnerBalance = Schemas['PartnerBalance'];
export type Settlement = Schemas['Settlement'];
export type SettlementStatus = Settlement['status'];
export type SettlementLine = Schemas['SettlementLine'];
export type PaymentIntent = Schemas['PaymentIntent'];

const id = (value: string) => encodeURIComponent(value);

export const paymentsApi = {
  balance: (environment: ApiKeyEnvironment) =>
    authed<PartnerBalance>('GET', `/v1/developer/payments/balance?environment=${environment}`),
  settlements: (environment: ApiKeyEnvironment, page: number, pageSize: number) =>
    authed<Page<Settlement>>('GET', `/v1/developer/settlements?environment=${environment}&page=${page}&pageSize=${pageSize}`),
  settlement: (settlementId: string) => authed<Settlement>('GET', `/v1/developer/settlements/${id(settlementId)}`),
  lines: (settlementId: string, page: number, pageSize: number) =>
    authed<Page<SettlementLine>>('GET', `/v1/developer/settlements/${id(settlementId)}/lines?page=${page}&pageSize=${pageSize}`),
  orderIntent: (code: string) => authed<PaymentIntent>('GET', `/v1/developer/orders/${id(code)}/payment-intent`),
};

/**
 * Saves the statement's CSV as a file. An <a href> cannot send the session's token, so the file is
 * fetched with it and handed to the browser as a download.
 */
export async function downloadStatementCsv(settlementId: string): Promise<void> {
  const token = await freshAccessToken();
  if (!token) throw new ApiError(401, 'ERR_UNAUTHORIZED', 'You are signed out.');
  let res: Response;
  try {
    res = await fetch(`/v1/developer/settlements/${id(settlementId)}/lines.csv`, {
      headers: { authorization: `Bearer ${token}` },
    });
  } catch {
    throw new ApiError(0, 'ERR_NETWORK', 'Could not reach the server. Check your connection and try again.');
  }
  if (!res.ok) throw new ApiError(res.status, 'ERR_HTTP', `The download failed (HTTP ${res.status}).`);
  const url = URL.createObjectURL(new Blob([await res.text()], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `${settlementId}-lines.csv`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

const manat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * An integer amount of qəpik in manat with two decimals ("1,234.05 AZN", "−0.50 AZN"), computed from
 * the integer (the manat by integer division, the qəpik as the remainder): no float rounding ever.
 */
export function formatManat(qepik: number): string {
  const sign = qepik < 0 ? '−' : '';
  const abs = Math.abs(qepik);
  const whole = Math.floor(abs / 100);
  const cents = abs % 100;
  return `${sign}${manat.format(whole)}.${String(cents).padStart(2, '0')} AZN`;
}

export const SETTLEMENT_STATUS_LABEL: Record<SettlementStatus, string> = {
  AWAITING_REMITTANCE: 'Awaiting remittance',
  PARTIALLY_REMITTED: 'Partly remitted',
  SETTLED: 'Settled',
};

export const SETTLEMENT_STATUS_TONE: Record<SettlementStatus, 'ok' | 'warn' | 'muted'> = {
  AWAITING_REMITTANCE: 'warn',
  PARTIALLY_REMITTED: 'warn',
  SETTLED: 'ok',
};

export const LINE_TYPE_LABEL: Record<SettlementLine['type'], string> = {
  COD_COLLECTION: 'Cash collected',
  ADJUSTMENT: 'Adjustment',
  REMITTANCE: 'Remittance',
};

export const INTENT_STATUS_LABEL: Record<PaymentIntent['status'], string> = {
  REQUIRES_CAPTURE: 'Card payment awaiting capture',
  SUCCEEDED: 'Paid by card',
  AWAITING_COLLECTION: 'Cash to collect at the door',
  COLLECTED: 'Cash collected',
  SETTLED: 'Cash collected and settled',
  CANCELED: 'Cancelled',
};
