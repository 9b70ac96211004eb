-- Orders: the batch index holds only the orders on a batch.
--
-- A status change sets `status` and `updated_at`, both indexed, so it is never a HOT update: the new row
-- version gets an entry in every index of `orders`. An order on no batch (most orders, and every order a
-- partner event moves before a van batch is made) still got one in orders_batch_idx, a NULL key nobody
-- reads: every statement that reads the index asks for one batch (`batch_code = $1`, `o.batch_code =
-- b.code`, `batch_code IN (…)`), a condition no NULL satisfies, and PostgreSQL proves from it that the
-- partial index below covers it. Those orders now get no entry there: one index entry fewer per status
-- change and per new order; the batch statements read the same index (write-scans.test.ts guards them).
DROP INDEX orders_batch_idx;
CREATE INDEX orders_batch_idx ON orders (batch_code) WHERE batch_code IS NOT NULL;
