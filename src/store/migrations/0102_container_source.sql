-- Container images run through docker or podman (issue #26: `quiver plugin add container:IMAGE`,
-- imported `docker run … IMAGE` entries) are plugins with source_type 'container'. The column's
-- CHECK is replaced by name, as 0063 and 0084 did.
ALTER TABLE plugins DROP CONSTRAINT IF EXISTS plugins_source_type_check;
ALTER TABLE plugins ADD CONSTRAINT plugins_source_type_check CHECK (source_type IN ('git', 'npm', 'path', 'url', 'sync', 'openapi', 'pypi', 'container'));
