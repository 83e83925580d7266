-- Every statement that changes anchors announces it on the channel anchors_changed (no payload; several in one
-- transaction arrive once, at commit; the trigger is in 0006_anchor_changes.sql). An embedded database's one process
-- listens and forgets what it remembered of the verify index (src/verify/indexed-chain-cache.ts); PostgreSQL drops a
-- notification nobody listens for.
CREATE OR REPLACE FUNCTION notify_anchors_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('anchors_changed', '');
  RETURN NULL;
END $$;
