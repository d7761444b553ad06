-- Crash recovery of installs (issue #18 finding 8). A plugin row is reserved as `failed` when an
-- install starts and only becomes `active` at its last step; while it runs the row names the
-- process doing it (host, boot id, pid, start time) and a lease that process renews. At start-up
-- a `failed` row whose owner is provably gone (same host, process dead, a zombie or its pid
-- reused) or whose lease has run out (another host stopped renewing) is rolled back; a live
-- replica's install is never touched.
ALTER TABLE plugins ADD COLUMN install_owner jsonb;
ALTER TABLE plugins ADD COLUMN install_lease_until timestamptz;
