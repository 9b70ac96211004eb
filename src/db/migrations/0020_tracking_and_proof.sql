-- Courier tracking, photo uploads and proof of delivery (docs/tracking-and-proof.md).

-- What a partner must send with DELIVERED and FAILED (set by an operator). Read with the key record,
-- so an event without proof costs no query to learn it.
ALTER TABLE partners
  ADD COLUMN proof_policy text NOT NULL DEFAULT 'NONE'
    CHECK (proof_policy IN ('NONE', 'LOCATION', 'LOCATION_AND_PHOTO'));

-- The latest known position of an order's courier and its ETA: one row per order, rewritten by the
-- location buffer's flush (src/modules/tracking/tracking-buffer.ts) at most once per order per flush.
-- webhook_at: when the last order.courier_location event was written (at most one a minute).
CREATE TABLE order_tracking (
  order_id    uuid PRIMARY KEY REFERENCES orders (id) ON DELETE CASCADE,
  lat         double precision NOT NULL,
  lng         double precision NOT NULL,
  accuracy_m  double precision,
  at          timestamptz NOT NULL,
  eta_at      timestamptz,
  webhook_at  timestamptz,
  updated_at  timestamptz NOT NULL
);

-- The trail: at most one point per order per 5 s of the points' own times.
CREATE TABLE order_track_points (
  order_id    uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  at          timestamptz NOT NULL,
  lat         double precision NOT NULL,
  lng         double precision NOT NULL,
  accuracy_m  double precision,
  PRIMARY KEY (order_id, at)
);

-- Photos uploaded by a partner (JPEG or PNG, at most 5 MiB), kept in the database in both modes.
CREATE TABLE uploads (
  id            text PRIMARY KEY,          -- upl_ + 24 base62 characters
  partner_id    uuid NOT NULL REFERENCES partners (id),
  content_type  text NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png')),
  bytes         integer NOT NULL,
  sha256        text NOT NULL,
  data          bytea NOT NULL,
  created_at    timestamptz NOT NULL
);
CREATE INDEX uploads_partner_idx ON uploads (partner_id, id);
CREATE INDEX uploads_created_idx ON uploads (created_at);

-- The proof sent with a DELIVERED or FAILED event, written in the event's transaction.
CREATE TABLE order_proofs (
  id              bigserial PRIMARY KEY,
  order_id        uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  partner_id      uuid NOT NULL REFERENCES partners (id),
  event           text NOT NULL CHECK (event IN ('DELIVERED', 'FAILED')),
  at              timestamptz NOT NULL,
  lat             double precision,
  lng             double precision,
  accuracy_m      double precision,
  distance_m      double precision,
  recipient_name  text,
  photo_ids       text[] NOT NULL DEFAULT '{}'
);
CREATE INDEX order_proofs_order_idx ON order_proofs (order_id, id DESC);
CREATE INDEX order_proofs_at_idx ON order_proofs (at);
