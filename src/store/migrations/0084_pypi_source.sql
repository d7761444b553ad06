-- Python packages from the index pip is configured with (issue #26: `quiver plugin add pypi:NAME`)
-- are plugins with source_type 'pypi'. The column's CHECK is replaced by name, as 0063 did.
ALTER TABLE plugins DROP CONSTRAINT IF EXISTS plugins_source_type_check;
ALTER TABLE plugins ADD CONSTRAINT plugins_source_type_check CHECK (source_type IN ('git', 'npm', 'path', 'url', 'sync', 'openapi', 'pypi'));
