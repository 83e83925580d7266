-- What a new event sets going, created in the transaction that records it (the trigger events_fan_out, made by
-- migration 0014): one delivery per enabled webhook of its account that receives its type, and for an
-- `anchor.countersigned` of an account that opted in (users.notify_countersigned), its e-mail. A `webhook.test` event
-- goes only to the webhook it tests, which POST /api/webhooks/:id/test names itself.
CREATE OR REPLACE FUNCTION fan_out_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.type <> 'webhook.test' THEN
    INSERT INTO webhook_deliveries (webhook_id, event_seq)
    SELECT w.id, NEW.seq FROM webhooks w
    WHERE w.user_id = NEW.user_id AND w.status = 'enabled' AND (w.events IS NULL OR NEW.type = ANY (w.events));
  END IF;
  IF NEW.type = 'anchor.countersigned' THEN
    INSERT INTO notice_emails (event_seq, user_id)
    SELECT NEW.seq, u.id FROM users u WHERE u.id = NEW.user_id AND u.notify_countersigned;
  END IF;
  RETURN NULL;
END $$;
