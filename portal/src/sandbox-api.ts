/**
 * The sandbox simulator and the go-live checklist (docs/decisions-log.md, 'Sandbox simulator and go-live checklist') as the portal calls them: the
 * developer routes that act for one sandbox key of the partner. Shapes are the SDK's generated types.
 */
import type { components } from '@partner-logistics/sdk/types';
import { authed } from './api';

type Schemas = components['schemas'];

export type OrderStatus = Schemas['OrderStatus'];
export type PartnerOrder = Schemas['PartnerOrder'];
export type SandboxOverview = Schemas['SandboxOverview'];
export type SandboxOrder = Schemas['SandboxOrder'];
export type SandboxBatch = Schemas['SandboxBatch'];
export type CreateSandboxOrderDto = Schemas['CreateSandboxOrderDto'];
export type SandboxStartStatus = NonNullable<CreateSandboxOrderDto['status']>;
export type BatchStatus = SandboxBatch['status'];
export type GoLiveChecklist = Schemas['GoLiveChecklist'];
export type ChecklistItem = Schemas['ChecklistItem'];

const id = (value: string) => encodeURIComponent(value);
const base = (keyId: string) => `/v1/developer/keys/${id(keyId)}`;

export const sandboxApi = {
  overview: (keyId: string) => authed<SandboxOverview>('GET', `${base(keyId)}/sandbox`),
  createOrders: (keyId: string, body: CreateSandboxOrderDto) =>
    authed<{ items: PartnerOrder[] }>('POST', `${base(keyId)}/sandbox/orders`, body),
  moveOrder: (keyId: string, code: string, status: OrderStatus) =>
    authed<PartnerOrder>('POST', `${base(keyId)}/sandbox/orders/${id(code)}/platform-status`, { status }),
  createBatch: (keyId: string, orderCodes: string[]) =>
    authed<Schemas['Batch']>('POST', `${base(keyId)}/sandbox/batches`, { orderCodes }),
  moveBatch: (keyId: string, code: string, status: BatchStatus) =>
    authed<Schemas['Batch']>('POST', `${base(keyId)}/sandbox/batches/${id(code)}/status`, { status }),
  checklist: (keyId: string) => authed<GoLiveChecklist>('GET', `${base(keyId)}/checklist`),
};
