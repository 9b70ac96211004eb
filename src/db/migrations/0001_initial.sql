-- The whole data model. Times are always written by the application from its one clock (no
-- DEFAULT now()), so the test clock governs every time rule, including what "newest first" means.

-- Accounts -------------------------------------------------------------------------------------------
CREATE TABLE partners (
  id          uuid PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL
);

CREATE TABLE users (
  id          uuid PRIMARY KEY,
  phone       text NOT NULL UNIQUE,
  role        text NOT NULL CHECK (role IN ('CUSTOMER', 'PARTNER', 'ADMIN')),
  partner_id  uuid REFERENCES partners (id),
  blocked_at  timestamptz,
  created_at  timestamptz NOT NULL,
  CHECK ((role = 'PARTNER') = (partner_id IS NOT NULL))
);
CREATE INDEX users_partner_idx ON users (partner_id);

-- One live code per phone; a new request replaces it.
CREATE TABLE otp_codes (
  phone            text PRIMARY KEY,
  code_hash        text NOT NULL,
  expires_at       timestamptz NOT NULL,
  failed_attempts  integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL
);

-- Every code request, for the per-minute and per-hour limits.
CREATE TABLE otp_requests (
  id            bigserial PRIMARY KEY,
  phone         text NOT NULL,
  requested_at  timestamptz NOT NULL
);
CREATE INDEX otp_requests_phone_idx ON otp_requests (phone, requested_at);

CREATE TABLE refresh_tokens (
  id          uuid PRIMARY KEY,
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  family_id   uuid NOT NULL,
  token_hash  text NOT NULL UNIQUE,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  revoked_at  timestamptz,
  created_at  timestamptz NOT NULL
);
CREATE INDEX refresh_tokens_family_idx ON refresh_tokens (family_id);

-- Secrets the service generates for itself in development (JWT signing key, webhook secret key).
CREATE TABLE app_secrets (
  name        text PRIMARY KEY,
  value       text NOT NULL
);

-- API keys -------------------------------------------------------------------------------------------
CREATE TABLE api_keys (
  id                   uuid PRIMARY KEY,
  partner_id           uuid NOT NULL REFERENCES partners (id),
  name                 text NOT NULL,
  prefix               text NOT NULL,
  key_hash             text NOT NULL UNIQUE,            -- hex SHA-256 of the whole key
  environment          text NOT NULL CHECK (environment IN ('LIVE', 'SANDBOX')),
  scopes               text[] NOT NULL,
  rate_limit           integer NOT NULL DEFAULT 600,
  receives_all_orders  boolean NOT NULL DEFAULT false,
  last_used_at         timestamptz,
  revoked_at           timestamptz,
  successor_id         uuid REFERENCES api_keys (id),  -- set by rotation: the key this one acts for
  created_at           timestamptz NOT NULL
);
CREATE INDEX api_keys_partner_idx ON api_keys (partner_id, created_at);

CREATE TABLE api_key_usage (
  api_key_id     uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  day            date NOT NULL,
  requests       integer NOT NULL DEFAULT 0,
  client_errors  integer NOT NULL DEFAULT 0,
  server_errors  integer NOT NULL DEFAULT 0,
  PRIMARY KEY (api_key_id, day)
);
CREATE INDEX api_key_usage_day_idx ON api_key_usage (day);

-- Orders ---------------------------------------------------------------------------------------------
CREATE TABLE zones (
  id          uuid PRIMARY KEY,
  name        jsonb NOT NULL,                           -- LocalizedText { az, ru, en }
  created_at  timestamptz NOT NULL
);

CREATE TABLE batches (
  code        text PRIMARY KEY,
  status      text NOT NULL CHECK (status IN ('OPEN', 'DISPATCHED', 'COMPLETED')),
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);

CREATE TABLE orders (
  id                   uuid PRIMARY KEY,
  code                 text NOT NULL UNIQUE,
  environment          text NOT NULL CHECK (environment IN ('LIVE', 'SANDBOX')),
  status               text NOT NULL,
  payment_method       text NOT NULL CHECK (payment_method IN ('COD', 'CARD')),
  payment_status       text NOT NULL,
  total_qepik          bigint NOT NULL CHECK (total_qepik >= 0),
  cod_amount_qepik     bigint NOT NULL CHECK (cod_amount_qepik >= 0),
  area                 text,
  zone_id              uuid REFERENCES zones (id),
  time_window_start    timestamptz,
  time_window_end      timestamptz,
  customer             jsonb,                           -- { name, phone, address { street, details, lat, lng } }
  assigned_key_id      uuid REFERENCES api_keys (id),
  partner_assigned_at  timestamptz,
  batch_code           text REFERENCES batches (code),
  failed_attempts      integer NOT NULL DEFAULT 0,
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL
);
-- Every partner list is "the key's orders" or "the environment's orders" (receivesAllOrders), newest
-- first, optionally by status or updated since: each has an index that serves it as a range scan.
CREATE INDEX orders_key_created_idx ON orders (assigned_key_id, created_at DESC, id DESC);
CREATE INDEX orders_key_status_created_idx ON orders (assigned_key_id, status, created_at DESC, id DESC);
CREATE INDEX orders_key_updated_idx ON orders (assigned_key_id, updated_at);
CREATE INDEX orders_env_created_idx ON orders (environment, created_at DESC, id DESC);
CREATE INDEX orders_env_status_created_idx ON orders (environment, status, created_at DESC, id DESC);
CREATE INDEX orders_env_updated_idx ON orders (environment, updated_at);
CREATE INDEX orders_batch_idx ON orders (batch_code);

CREATE TABLE order_items (
  order_id          uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  position          integer NOT NULL,
  name              jsonb NOT NULL,                     -- LocalizedText
  qty               integer NOT NULL CHECK (qty > 0),
  unit_price_qepik  bigint NOT NULL CHECK (unit_price_qepik >= 0),
  PRIMARY KEY (order_id, position)
);

-- The status timeline.
CREATE TABLE order_events (
  id                   bigserial PRIMARY KEY,
  order_id             uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  status               text NOT NULL,
  at                   timestamptz NOT NULL,
  actor                text NOT NULL CHECK (actor IN ('SYSTEM', 'ADMIN', 'PARTNER')),
  note                 text,                            -- partner:<partnerName> for partner events
  partner_note         text,
  fail_reason          text,
  cod_collected_qepik  bigint,
  partner_reported_at  timestamptz,                     -- the partner's informational `at`
  api_key_id           uuid
);
CREATE INDEX order_events_order_idx ON order_events (order_id, id);

-- Partner event idempotency (Idempotency-Key header), kept 24 h.
CREATE TABLE idempotency_keys (
  api_key_id    uuid NOT NULL,
  key           text NOT NULL,
  request_hash  text NOT NULL,
  status_code   integer NOT NULL,
  response      jsonb NOT NULL,
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (api_key_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Domain events, written in the same transaction as the change they describe. The webhook fan-out
-- and the realtime channel consume them; a rolled-back change leaves no row.
CREATE TABLE outbox (
  id               bigserial PRIMARY KEY,
  event_id         text NOT NULL UNIQUE,                -- evt_…, stable across every delivery of the event
  type             text NOT NULL,
  environment      text NOT NULL CHECK (environment IN ('LIVE', 'SANDBOX')),
  order_id         uuid,
  assigned_key_id  uuid,                                -- the order's key when the event happened
  data             jsonb NOT NULL,                      -- snapshot: { order, previousStatus? } or { batch }
  created_at       timestamptz NOT NULL,
  processed_at     timestamptz
);
CREATE INDEX outbox_pending_idx ON outbox (id) WHERE processed_at IS NULL;
CREATE INDEX outbox_created_idx ON outbox (created_at);

-- Webhooks -------------------------------------------------------------------------------------------
CREATE TABLE webhooks (
  id                    uuid PRIMARY KEY,
  partner_id            uuid NOT NULL REFERENCES partners (id),
  api_key_id            uuid NOT NULL REFERENCES api_keys (id),
  url                   text NOT NULL,
  events                text[] NOT NULL,
  secret_ciphertext     text NOT NULL,                  -- AES-256-GCM; the secret must be recoverable to sign
  is_active             boolean NOT NULL DEFAULT true,
  consecutive_failures  integer NOT NULL DEFAULT 0,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL
);
CREATE INDEX webhooks_key_idx ON webhooks (api_key_id);
CREATE INDEX webhooks_partner_idx ON webhooks (partner_id, created_at);

-- The delivery log is also the queue: due rows are claimed with FOR UPDATE SKIP LOCKED and leased
-- through locked_until, so a worker that dies mid-attempt leaves its row to be picked up again.
CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY,
  webhook_id       uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  partner_id       uuid NOT NULL,
  event_id         text NOT NULL,
  event_type       text NOT NULL,
  body             text NOT NULL,                       -- the exact JSON sent (signed as is)
  status           text NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED', 'DEAD')),
  attempts         integer NOT NULL DEFAULT 0,
  status_code      integer,
  last_error       text,
  next_attempt_at  timestamptz,
  locked_until     timestamptz,
  created_at       timestamptz NOT NULL,
  delivered_at     timestamptz,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status IN ('PENDING', 'FAILED');
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_webhook_status_idx ON webhook_deliveries (webhook_id, status, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_created_idx ON webhook_deliveries (created_at);
