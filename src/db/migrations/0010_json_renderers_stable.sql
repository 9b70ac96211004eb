-- The JSON piece renderers of 0004/0006 are STABLE, as what they call is (to_json and to_char are
-- STABLE in pg_proc), no longer IMMUTABLE.
--
-- PostgreSQL inlines a SQL function into the expression that calls it only when the body is no more
-- volatile than the declaration: declared IMMUTABLE over STABLE calls, none of them was inlined, and
-- every call ran through the SQL-function executor (parse tree read back from pg_proc, executor set up
-- and torn down). The render trigger makes about twenty such calls per order, and every partner event
-- re-renders its order: `perf` on the event benchmark showed fmgr_sql under ~12% of PostgreSQL's CPU.
-- Inlined, an UPDATE of five orders that only re-renders them took 0.96 ms instead of 1.12 (pgbench,
-- median of three runs each, 107,000 orders), and PostgreSQL's CPU per partner event in the event
-- benchmark fell from 464–575 µs to 409–491 (four runs each, alternating). Nothing indexes or
-- generates a column from these functions, which is all IMMUTABLE would be needed for.
ALTER FUNCTION iso_utc(timestamptz) STABLE;
ALTER FUNCTION json_text(text) STABLE;
ALTER FUNCTION json_instant(timestamptz) STABLE;
ALTER FUNCTION localized_text_json(jsonb) STABLE;
ALTER FUNCTION partner_customer_json(jsonb) STABLE;
ALTER FUNCTION timeline_entry_json(text, timestamptz) STABLE;
