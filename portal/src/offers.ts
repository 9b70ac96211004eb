/**
 * Offers in the portal's words: statuses and decline reasons said plainly, and the time an offer has
 * left, counted down by the browser's clock (docs/portal.md, "Offers").
 */
import type { Schemas } from '@partner-logistics/sdk/types';
import { useEffect, useState } from 'react';

export type Offer = Schemas['PartnerOffer'];
export type OfferStatus = Schemas['OfferStatus'];
export type DeclineReason = Schemas['OfferDeclineReason'];

export const OFFER_STATUS_LABEL: Record<OfferStatus, string> = {
  PENDING: 'Pending',
  ACCEPTED: 'Accepted',
  DECLINED: 'Declined',
  EXPIRED: 'Expired',
  WITHDRAWN: 'Withdrawn',
};

export const OFFER_STATUS_TONE: Record<OfferStatus, 'ok' | 'warn' | 'bad' | 'muted'> = {
  PENDING: 'warn',
  ACCEPTED: 'ok',
  DECLINED: 'bad',
  EXPIRED: 'muted',
  WITHDRAWN: 'muted',
};

/** The reasons of the API's enum, in the order the decline form offers them (the compiler checks the record). */
export const DECLINE_REASONS = Object.entries({
  NO_CAPACITY: 'No capacity (no van or courier free)',
  OUT_OF_AREA: 'Out of our area',
  TIME_WINDOW: 'Cannot make the time window',
  OTHER: 'Other (say why in the note)',
} satisfies Record<DeclineReason, string>) as Array<[DeclineReason, string]>;

export const REASON_LABEL = Object.fromEntries(DECLINE_REASONS.map(([r, label]) => [r, label.replace(/ \(.*\)$/, '')])) as Record<
  DeclineReason,
  string
>;

/** The time now, read again every `ms` while a screen shows it. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

/** "14 min 05 s left", "1 h 02 min left"; null once the deadline has passed. */
export function timeLeft(expiresAt: string, now: number): string | null {
  const seconds = Math.floor((new Date(expiresAt).getTime() - now) / 1000);
  if (!(seconds > 0)) return null;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min left`;
  return m > 0 ? `${m} min ${String(s).padStart(2, '0')} s left` : `${s} s left`;
}
