-- The shared test clock (docs/decisions-log.md, 'Dependency faults'): with TEST_CLOCK=1 on a PostgreSQL server every process reads
-- this one offset (src/clock.ts, SharedTestClock). One row; the offset only grows. Unused otherwise.
CREATE TABLE test_clock (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  offset_ms bigint NOT NULL DEFAULT 0 CHECK (offset_ms >= 0)
);
INSERT INTO test_clock DEFAULT VALUES;
