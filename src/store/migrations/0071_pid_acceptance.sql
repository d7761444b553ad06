-- Accepting a generated PID (issue #14 follow-up): each stored generation gets an id and a
-- review state (candidate, accepted, rejected; a new generation starts as a candidate again),
-- and the plugin's current PID, when adopted from a generation, records which one, its
-- content hash, the hash of the document adopted, who accepted it and when. The document it
-- replaced (shipped or admin-written) is kept so later generations still merge over the
-- plugin's own words, never over their own output.
ALTER TABLE pid_generations ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE pid_generations ADD CONSTRAINT pid_generations_id_key UNIQUE (id);
ALTER TABLE pid_generations ADD COLUMN review varchar(20) NOT NULL DEFAULT 'candidate' CHECK (review IN ('candidate', 'accepted', 'rejected'));
ALTER TABLE pid_generations ADD COLUMN reviewed_by varchar(200);
ALTER TABLE pid_generations ADD COLUMN reviewed_at timestamptz;

CREATE TABLE pid_acceptances (
  plugin_id uuid PRIMARY KEY REFERENCES plugins(id) ON DELETE CASCADE,
  generation_id uuid NOT NULL,
  generation_hash char(64) NOT NULL,
  document_hash char(64) NOT NULL,
  accepted_by varchar(200) NOT NULL,
  accepted_at timestamptz NOT NULL,
  forced boolean NOT NULL DEFAULT false,
  replaced_document jsonb,
  replaced_origin varchar(30)
);
