/**
 * Payments in the portal's words (docs/payments.md, "Developer portal reads"): amounts are integer
 * qəpik, which `formatManat` writes in manat exactly; statuses and line types in plain words.
 */
import type { PaymentIntent, Settlement, SettlementLine } from '@partner-logistics/sdk/types';

type SettlementStatus = Settlement['status'];

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

/** What the API writes as the note of the line carrying an overpayment (docs/payments.md, "Overpayment"). */
const CARRIED_NOTE = /^Overpayment carried from (stl_[0-9A-Za-z]+)$/;

/**
 * The statement whose overpayment this line carries to its statement, or null: an ADJUSTMENT line the
 * API made when the statement was created, its note naming the over-remitted statement. Its (negative)
 * amount is the partner's credit, taken off what this statement asks.
 */
export function overpaymentCarriedFrom(line: Pick<SettlementLine, 'type' | 'note'>): string | null {
  if (line.type !== 'ADJUSTMENT' || !line.note) return null;
  return CARRIED_NOTE.exec(line.note)?.[1] ?? null;
}

export const INTENT_STATUS_LABEL: Record<PaymentIntent['status'], string> = {
  REQUIRES_CAPTURE: 'Card payment awaiting capture',
  SUCCEEDED: 'Paid by card',
  AWAITING_COLLECTION: 'Cash to collect at the door',
  COLLECTED: 'Cash collected',
  SETTLED: 'Cash collected and settled',
  CANCELED: 'Cancelled',
};
