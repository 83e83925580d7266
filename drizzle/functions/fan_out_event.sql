-- The deliveries of a new event, created in the transaction that records it (the trigger events_fan_out, made by
-- migration 0014): one per enabled webhook of its account that receives its type. A `webhook.test` event goes only
-- to the webhook it tests, which POST /api/webhooks/:id/test names itself.
CREATE OR REPLACE FUNCTION fan_out_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.type <> 'webhook.test' THEN
    INSERT INTO webhook_deliveries (webhook_id, event_seq)
    SELECT w.id, NEW.seq FROM webhooks w
    WHERE w.user_id = NEW.user_id AND w.status = 'enabled' AND (w.events IS NULL OR NEW.type = ANY (w.events));
  END IF;
  RETURN NULL;
END $$;
