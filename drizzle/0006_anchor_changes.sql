-- The text of its day: each function's current text is in drizzle/functions/, applied after the migrations.
-- Every statement that changes anchors announces it on the channel anchors_changed (no payload; several in one
-- transaction arrive once, at commit). An embedded database's one process listens and forgets what it remembered of
-- the verify index (src/verify/indexed-chain-cache.ts); PostgreSQL drops a notification nobody listens for.
CREATE FUNCTION notify_anchors_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('anchors_changed', '');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER anchors_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON anchors
  FOR EACH STATEMENT EXECUTE FUNCTION notify_anchors_changed();
