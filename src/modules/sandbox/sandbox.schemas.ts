/**
 * Shapes of the sandbox simulator and the go-live checklist (docs/decisions-log.md, 'Sandbox simulator and go-live checklist'). The statuses a test order
 * may start in, and the moves each order and batch offers, come from the state machine itself
 * (orders/state-machine.ts), never from a list written here.
 */
import Type, { type Static } from 'typebox';
import { DateTime, Nullable, OrderStatus, PartnerEventType, PaymentMethod, StringEnum, Uuid } from '../../shared/schemas.js';
import { BATCH_STATUSES, PartnerOrder } from '../orders/orders.schemas.js';
import { platformPathTo } from '../orders/state-machine.js';

/** PLACED through PACKED: the statuses a test order can be created in (the platform path to PACKED). */
export const SANDBOX_START_STATUSES = platformPathTo('PACKED') ?? ['PACKED'];
export const MAX_SANDBOX_ORDERS = 20;

export const CreateSandboxOrderDto = Type.Object(
  {
    paymentMethod: Type.Optional(PaymentMethod),
    status: Type.Optional(
      StringEnum(SANDBOX_START_STATUSES, {
        description: `${SANDBOX_START_STATUSES.join(', ')}; default PACKED. The timeline holds every status a real order passes through to get there.`,
      }),
    ),
    customer: Type.Optional(
      Type.Boolean({ description: 'default true; false makes an order without customer (customer null for every key)' }),
    ),
    count: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_SANDBOX_ORDERS,
        description: `1 to ${MAX_SANDBOX_ORDERS}, default 1; with more than 1 the answer is { items }`,
      }),
    ),
  },
  {
    $id: 'CreateSandboxOrderDto',
    additionalProperties: false,
    description: 'Optional body; without paymentMethod each test order is COD or CARD at random',
  },
);
export type CreateSandboxOrderDto = Static<typeof CreateSandboxOrderDto>;

export const SandboxOrders = Type.Object(
  { items: Type.Array(PartnerOrder, { description: 'the test orders created, in creation order' }) },
  { $id: 'SandboxOrders', additionalProperties: false },
);
export type SandboxOrders = Static<typeof SandboxOrders>;

export const SandboxPlatformStatusDto = Type.Object(
  {
    status: OrderStatus,
  },
  {
    $id: 'SandboxPlatformStatusDto',
    additionalProperties: false,
    description: 'The status the marketplace moves the order to (a platform transition of the order state machine)',
  },
);

const BatchStatus = StringEnum(BATCH_STATUSES);

// --- Developer view of the simulator (the portal) ---------------------------------------------------

export const SandboxOrder = Type.Object(
  {
    order: PartnerOrder,
    platformMoves: Type.Array(OrderStatus, { description: 'the marketplace moves allowed from the order’s status' }),
    partnerEvents: Type.Array(PartnerEventType, { description: 'the events the partner may report from the order’s status' }),
  },
  { $id: 'SandboxOrder', additionalProperties: false },
);
export type SandboxOrder = Static<typeof SandboxOrder>;

export const SandboxBatch = Type.Object(
  {
    code: Type.String(),
    status: BatchStatus,
    orderCodes: Type.Array(Type.String()),
    moves: Type.Array(BatchStatus, { description: 'the batch moves allowed from its status' }),
  },
  { $id: 'SandboxBatch', additionalProperties: false },
);
export type SandboxBatch = Static<typeof SandboxBatch>;

export const SandboxOverview = Type.Object(
  {
    apiKeyId: Uuid(),
    orders: Type.Array(SandboxOrder, { description: 'the key’s sandbox orders, newest first (50 at most)' }),
    batches: Type.Array(SandboxBatch, { description: 'the van batches of those orders, newest first' }),
  },
  { $id: 'SandboxOverview', additionalProperties: false },
);
export type SandboxOverview = Static<typeof SandboxOverview>;

export const SandboxKeyParams = Type.Object({ id: Type.String({ description: 'the sandbox API key id' }) });
export const SandboxKeyOrderParams = Type.Object({
  id: Type.String({ description: 'the sandbox API key id' }),
  code: Type.String({ description: 'order code' }),
});
export const SandboxKeyBatchParams = Type.Object({
  id: Type.String({ description: 'the sandbox API key id' }),
  code: Type.String({ description: 'batch code' }),
});

// --- Go-live checklist --------------------------------------------------------------------------------

export const ChecklistItem = Type.Object(
  {
    id: Type.String({ description: 'stable identifier of the item' }),
    title: Type.String(),
    done: Type.Boolean(),
    doneAt: Nullable(DateTime({ description: 'when the key first met the condition' })),
    hint: Type.String({ description: 'what to send to meet the condition' }),
  },
  { $id: 'ChecklistItem', additionalProperties: false },
);
export type ChecklistItem = Static<typeof ChecklistItem>;

export const GoLiveChecklist = Type.Object(
  {
    apiKeyId: Uuid(),
    complete: Type.Boolean({ description: 'every item is done' }),
    items: Type.Array(ChecklistItem),
  },
  {
    $id: 'GoLiveChecklist',
    additionalProperties: false,
    description: 'What a sandbox key has proven, computed from what it really did',
  },
);
export type GoLiveChecklist = Static<typeof GoLiveChecklist>;

export const PartnerChecklists = Type.Object(
  { items: Type.Array(GoLiveChecklist, { description: 'one per sandbox key of the partner, newest key first' }) },
  { $id: 'PartnerChecklists', additionalProperties: false },
);
export type PartnerChecklists = Static<typeof PartnerChecklists>;
