/**
 * Settlement rules (docs/payments.md, "Settlements"): the operator's creation, adjustments and
 * remittances (the sandbox's too, for its own partner), and the partner's reads and CSV. Every write is
 * one transaction with its outbox rows; whenever an operation leaves nothing outstanding, the settlement
 * and its collections become SETTLED in that same transaction.
 */

import { AppError, notFound, validationError } from '../../errors.js';
import { parseInstant } from '../../shared/instants.js';
import { newEventId } from '../../shared/outbox.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import { type ChangeTx, commitChange, type UnitOfWorkDeps } from '../../shared/unit-of-work.js';
import { closeCollectionPeriod } from './collection-period-lock.js';
import type {
  AdjustmentDto,
  PageOfSettlement,
  PageOfSettlementLine,
  RemittanceDto,
  Settlement,
  SettlementLine,
  SettlementStatus,
} from './payments.schemas.js';
import { publicId } from './public-id.js';
import {
  addSettlementLine,
  appendSettlementEvents,
  carryOverpayments,
  findSettlement,
  insertSettlement,
  lastPeriodEnd,
  listAllSettlements,
  listPartnerSettlements,
  listSettlementLines,
  lockPartnerForSettlement,
  lockSettlement,
  settleIfPaid,
} from './settlements.repo.js';

/** What the settlement services need (AppContext satisfies it): a settlement touches no order. */
export interface SettlementsDeps extends UnitOfWorkDeps {
  clock: { now(): Date; nowMs(): number };
}

/**
 * A partner and environment whose settlements a caller reaches (null: the operator, every one). The
 * partner's own portal users reach both environments (environment null).
 */
export type SettlementOwner = { partnerId: string; environment: ApiKeyEnvironment | null } | null;

const isUniqueViolation = (err: unknown) => (err as { code?: string } | null)?.code === '23505';

/** POST /v1/admin/partners/{id}/settlements (and the sandbox's, with periodEnd now). */
export async function createSettlement(
  deps: SettlementsDeps,
  partnerId: string,
  environment: ApiKeyEnvironment,
  periodEndText: string,
): Promise<Settlement> {
  const periodEnd = new Date(parseInstant('periodEnd', periodEndText));
  const now = deps.clock.now();
  if (periodEnd.getTime() > now.getTime()) {
    throw new AppError('ERR_SETTLEMENT_PERIOD_OPEN', 'periodEnd is in the future: the period is still open');
  }
  try {
    return await commitChange(deps, async (tx) => {
      if (!(await lockPartnerForSettlement(partnerId, tx))) throw notFound('Partner');
      // Every DELIVERED of the partner in the environment has committed or waits: a collection is
      // taken exactly when its capturedAt is before periodEnd (collection-period-lock.ts).
      await closeCollectionPeriod(partnerId, environment, tx);
      const last = await lastPeriodEnd(partnerId, environment, tx);
      if (last !== null && periodEnd.getTime() <= last.getTime()) {
        throw new AppError('ERR_SETTLEMENT_EXISTS', `A settlement already covers the period up to ${last.toISOString()}`);
      }
      const id = publicId('stl_');
      await insertSettlement(partnerId, { id, environment, periodStart: last, periodEnd }, now, tx);
      // What the partner over-remitted on earlier statements is owed back: it reduces this one.
      await carryOverpayments(partnerId, environment, id, now, tx);
      const { settlement, settled } = await settleIfPaid(id, now, tx);
      await settlementEvents(
        partnerId,
        settlement,
        ['settlement.created', ...(settled ? (['settlement.settled'] as const) : [])],
        now,
        tx,
      );
      return settlement;
    });
  } catch (err) {
    // The partner lock orders creations; the unique period is the backstop.
    if (isUniqueViolation(err)) throw new AppError('ERR_SETTLEMENT_EXISTS', 'A settlement already covers this period');
    throw err;
  }
}

function settlementEvents(
  partnerId: string,
  settlement: Settlement,
  types: ReadonlyArray<'settlement.created' | 'settlement.updated' | 'settlement.settled'>,
  now: Date,
  tx: ChangeTx,
): Promise<void> {
  return appendSettlementEvents(
    partnerId,
    settlement,
    types.map((type) => ({ eventId: newEventId(), type })),
    now,
    tx,
  );
}

async function addLine(
  deps: SettlementsDeps,
  owner: SettlementOwner,
  id: string,
  line: {
    type: 'ADJUSTMENT' | 'REMITTANCE';
    amountQepik: number;
    note: string | null;
    reference: string | null;
    at: Date | null;
  },
): Promise<SettlementLine> {
  const now = deps.clock.now();
  return commitChange(deps, async (tx) => {
    const locked = await lockSettlement(id, owner, tx);
    if (!locked) throw notFound('Settlement');
    if (locked.status === 'SETTLED') {
      throw new AppError('ERR_SETTLEMENT_INVALID_STATE', 'The settlement is SETTLED; nothing more can be added to it');
    }
    if (line.type === 'REMITTANCE' && line.amountQepik > locked.outstanding) {
      throw validationError('amountQepik', `must not be above outstandingQepik (${locked.outstanding})`);
    }
    const added = await addSettlementLine(id, { ...line, id: publicId('sln_'), at: line.at ?? now }, now, tx);
    const { settlement, settled } = await settleIfPaid(id, now, tx);
    await settlementEvents(
      locked.partnerId,
      settlement,
      ['settlement.updated', ...(settled ? (['settlement.settled'] as const) : [])],
      now,
      tx,
    );
    return added;
  });
}

/** POST /v1/admin/settlements/{id}/adjustments. */
export function addAdjustment(deps: SettlementsDeps, id: string, body: AdjustmentDto): Promise<SettlementLine> {
  if (body.amountQepik === 0) throw validationError('amountQepik', 'must not be 0');
  if (body.note.trim() === '') throw validationError('note', 'must not be blank');
  return addLine(deps, null, id, {
    type: 'ADJUSTMENT',
    amountQepik: body.amountQepik,
    note: body.note,
    reference: null,
    at: null,
  });
}

/** POST /v1/admin/settlements/{id}/remittances (owner null), and the sandbox's (its own partner's). */
export function addRemittance(
  deps: SettlementsDeps,
  owner: SettlementOwner,
  id: string,
  body: Pick<RemittanceDto, 'amountQepik' | 'reference'> & Partial<Pick<RemittanceDto, 'receivedAt' | 'note'>>,
): Promise<SettlementLine> {
  const at = body.receivedAt === undefined ? null : new Date(parseInstant('receivedAt', body.receivedAt));
  if (at !== null && at.getTime() > deps.clock.nowMs()) throw validationError('receivedAt', 'must not be in the future');
  return addLine(deps, owner, id, {
    type: 'REMITTANCE',
    amountQepik: body.amountQepik,
    note: body.note ?? null,
    reference: body.reference,
    at,
  });
}

// --- Reads -------------------------------------------------------------------------------------------

export async function listSettlements(
  deps: SettlementsDeps,
  owner: { partnerId: string; environment: ApiKeyEnvironment } | null,
  filters: { partnerId?: string; status?: SettlementStatus; page?: number; pageSize?: number },
): Promise<PageOfSettlement> {
  const page = filters.page ?? 1;
  const pageSize = filters.pageSize ?? 20;
  const found =
    owner === null
      ? await listAllSettlements(
          { partnerId: filters.partnerId ?? null, status: filters.status ?? null },
          { page, pageSize },
          deps.db,
        )
      : await listPartnerSettlements(owner.partnerId, owner.environment, filters.status ?? null, { page, pageSize }, deps.db);
  return { page, pageSize, total: found.total, items: found.items };
}

export async function getSettlement(deps: SettlementsDeps, owner: SettlementOwner, id: string): Promise<Settlement> {
  const found = await findSettlement(owner, id, deps.db);
  if (!found) throw notFound('Settlement');
  return found;
}

export async function getSettlementLines(
  deps: SettlementsDeps,
  owner: SettlementOwner,
  id: string,
  query: { page?: number; pageSize?: number },
): Promise<PageOfSettlementLine> {
  await getSettlement(deps, owner, id);
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  const found = await listSettlementLines(id, { page, pageSize }, deps.db);
  return { page, pageSize, total: found.total, items: found.items };
}

/** The columns of the CSV statement, in order (docs/payments.md, "The CSV statement"). */
export const CSV_COLUMNS = [
  'id',
  'type',
  'orderCode',
  'paymentIntentId',
  'expectedQepik',
  'amountQepik',
  'note',
  'reference',
  'at',
] as const satisfies ReadonlyArray<keyof SettlementLine>;

/** One RFC 4180 field: quoted when it holds a comma, a quote, CR or LF (quotes doubled); null is empty. */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** GET …/settlements/{id}/lines.csv: every line, oldest first, under a header row; CRLF line ends. */
export async function settlementLinesCsv(deps: SettlementsDeps, owner: SettlementOwner, id: string): Promise<string> {
  await getSettlement(deps, owner, id);
  const { items } = await listSettlementLines(id, null, deps.db);
  const rows = [CSV_COLUMNS.join(','), ...items.map((line) => CSV_COLUMNS.map((c) => csvField(line[c])).join(','))];
  return `${rows.join('\r\n')}\r\n`;
}
