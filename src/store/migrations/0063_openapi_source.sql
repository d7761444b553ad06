-- Issue #14: REST APIs described by OpenAPI are installed as plugins (`quiver plugin add
-- openapi:FILE-or-URL --base-url URL`), with source_type 'openapi'. The column's CHECK is
-- replaced by one that also allows it; the unnamed column check of 0001 got PostgreSQL's
-- default name, plugins_source_type_check, on PGlite and PostgreSQL alike.
ALTER TABLE plugins DROP CONSTRAINT IF EXISTS plugins_source_type_check;
ALTER TABLE plugins ADD CONSTRAINT plugins_source_type_check CHECK (source_type IN ('git', 'npm', 'path', 'url', 'sync', 'openapi'));
