-- An upload's bytes are a JPEG or a PNG, both compressed already: PostgreSQL stores them out of line
-- without trying to compress them again (docs/tracking-and-proof.md, "Uploads").
ALTER TABLE uploads ALTER COLUMN data SET STORAGE EXTERNAL;
