-- The text of its day: each function's current text is in drizzle/functions/, applied after the migrations.
-- The relay's hot path as functions (called from src/relayer/outbox/): their statements are parsed and planned once
-- per connection, not on every call, and each takes a whole batch of concurrent relays as one jsonb array. Statements
-- parsed and planned afresh on every relay cost more than everything else a relay does on PGlite.

-- The relayer's nonce authority: the lowest unsent filler's nonce if there is one (reused, so no gap stays), else the
-- next fresh one. The caller's transaction holds the nonce row (or the filler row) until it ends.
CREATE FUNCTION take_nonce(p_chain_id integer, p_relayer text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_nonce bigint;
BEGIN
  DELETE FROM relay_transactions WHERE tx_hash = (
    SELECT tx_hash FROM relay_transactions
    WHERE chain_id = p_chain_id AND relayer_address = p_relayer AND anchor_id IS NULL AND status = 'signed'
    ORDER BY nonce LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING nonce INTO v_nonce;
  IF v_nonce IS NULL THEN
    UPDATE relayer_nonces SET next_nonce = next_nonce + 1, updated_at = now()
    WHERE chain_id = p_chain_id AND relayer_address = p_relayer
    RETURNING next_nonce - 1 INTO v_nonce;
  END IF;
  IF v_nonce IS NULL THEN
    RAISE EXCEPTION 'no nonce row for relayer % on chain %', p_relayer, p_chain_id;
  END IF;
  RETURN v_nonce;
END $$;
--> statement-breakpoint

-- Counts each anchor against its user's monthly quota, takes a nonce and stores the anchor holding it, item by item,
-- in the caller's one transaction. An item whose composite hash is taken (or whose user is gone) is undone on its own
-- and reported; the others stand. The unsigned tx_hash prefix is UNSIGNED_PREFIX in src/relayer/outbox.ts.
-- Each item: { userId, compositeHash, previousTxHash, encryptedPayload, period }; p_plans: { plan: monthly limit }.
-- One row per item, `item` being its 1-based position in p_items.
--
-- Locks are taken in one global order, so that batches running at once (other relayers, other processes) never wait
-- on each other in a cycle: the relayer's nonce row first (a second batch of the same relayer waits here, holding
-- nothing), then each user's rows in ascending user id (items are processed in that order, a user's own in theirs).
CREATE FUNCTION reserve_anchors(p_chain_id integer, p_relayer text, p_plans jsonb, p_default_limit integer,
                                p_items jsonb)
RETURNS TABLE (item integer, outcome text, anchor_id uuid, nonce bigint, quota_limit integer, quota_used integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
  v_user uuid;
  v_period text;
BEGIN
  PERFORM 1 FROM relayer_nonces WHERE chain_id = p_chain_id AND relayer_address = p_relayer FOR UPDATE;
  FOR v_item, item IN
    SELECT e.value, e.position FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e (value, position)
    ORDER BY (e.value->>'userId')::uuid, e.position
  LOOP
    v_user := (v_item->>'userId')::uuid;
    v_period := v_item->>'period';
    outcome := NULL; anchor_id := NULL; nonce := NULL; quota_used := NULL;
    SELECT COALESCE((p_plans ->> u.plan)::integer, p_default_limit) INTO quota_limit FROM users u WHERE u.id = v_user;
    IF NOT FOUND THEN
      -- The user was deleted since the request signed in.
      outcome := 'no_user';
      RETURN NEXT;
      CONTINUE;
    END IF;
    BEGIN
      IF quota_limit > 0 THEN
        INSERT INTO anchor_usage AS au (user_id, period, used) VALUES (v_user, v_period, 1)
        ON CONFLICT (user_id, period) DO UPDATE SET used = au.used + 1 WHERE au.used < quota_limit
        RETURNING au.used INTO quota_used;
      END IF;
      IF quota_used IS NULL THEN
        outcome := 'quota_exceeded';
        SELECT au.used INTO quota_used FROM anchor_usage au WHERE au.user_id = v_user AND au.period = v_period;
        quota_used := COALESCE(quota_used, 0);
      ELSE
        nonce := take_nonce(p_chain_id, p_relayer);
        INSERT INTO anchors (tx_hash, composite_hash, previous_tx_hash, encrypted_payload, user_id, status,
                             chain_id, relayer_address, nonce)
        VALUES ('unsigned:' || gen_random_uuid(), v_item->>'compositeHash', v_item->>'previousTxHash',
                v_item->>'encryptedPayload', v_user, 'pending', p_chain_id, p_relayer, nonce)
        RETURNING id INTO anchor_id;
        UPDATE users SET anchor_count = anchor_count + 1 WHERE id = v_user;
        outcome := 'reserved';
      END IF;
    EXCEPTION
      WHEN unique_violation THEN
        -- The composite hash is taken: everything this item did (count, nonce) is undone with its block.
        outcome := 'exists'; anchor_id := NULL; nonce := NULL; quota_used := NULL;
      WHEN foreign_key_violation THEN
        -- The user was deleted while this item was being stored.
        outcome := 'no_user'; anchor_id := NULL; nonce := NULL; quota_used := NULL;
    END;
    RETURN NEXT;
  END LOOP;
END $$;
--> statement-breakpoint

-- Stores signed transactions of reserved anchors before their broadcast. Each item: { anchorId, txHash, nonce, raw,
-- maxFee, maxPriority }. Returns the anchors it attached: an anchor someone else signed first (the monitor, finishing a
-- reservation whose request died) is left alone.
CREATE FUNCTION attach_signed(p_chain_id integer, p_relayer text, p_items jsonb) RETURNS SETOF uuid
LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
  v_anchor uuid;
BEGIN
  -- In anchor id order, like mark_mined: batches from several processes lock shared rows in one order.
  FOR v_item IN
    SELECT e.value FROM jsonb_array_elements(p_items) AS e (value) ORDER BY (e.value->>'anchorId')::uuid
  LOOP
    UPDATE anchors SET tx_hash = v_item->>'txHash'
    WHERE id = (v_item->>'anchorId')::uuid AND tx_hash LIKE 'unsigned:%'
    RETURNING id INTO v_anchor;
    IF FOUND THEN
      INSERT INTO relay_transactions (tx_hash, anchor_id, chain_id, relayer_address, nonce, raw_transaction,
                                      max_fee_per_gas, max_priority_fee_per_gas)
      VALUES (v_item->>'txHash', v_anchor, p_chain_id, p_relayer, (v_item->>'nonce')::bigint, v_item->>'raw',
              v_item->>'maxFee', v_item->>'maxPriority');
      RETURN NEXT v_anchor;
    END IF;
  END LOOP;
END $$;
--> statement-breakpoint

-- Records mined anchor transactions. Each item: { anchorId, txHash, blockNumber, status ('confirmed' or 'failed') }.
-- The mined hash may be a replacement of the one the anchor held; its other transactions become 'replaced'. Returns
-- the updated anchors.
CREATE FUNCTION mark_mined(p_items jsonb) RETURNS SETOF anchors
LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
  v_anchor anchors;
BEGIN
  -- In anchor id order: a relay and another process's monitor may record the same anchors at once, and rows locked in
  -- one order cannot deadlock.
  FOR v_item IN
    SELECT e.value FROM jsonb_array_elements(p_items) AS e (value) ORDER BY (e.value->>'anchorId')::uuid
  LOOP
    UPDATE anchors SET status = v_item->>'status', tx_hash = v_item->>'txHash',
           block_number = (v_item->>'blockNumber')::bigint, confirmed_at = COALESCE(confirmed_at, now()),
           updated_at = now()
    WHERE id = (v_item->>'anchorId')::uuid
    RETURNING * INTO v_anchor;
    IF FOUND THEN
      UPDATE relay_transactions
      SET status = CASE WHEN relay_transactions.tx_hash = v_item->>'txHash' THEN 'mined' ELSE 'replaced' END
      WHERE anchor_id = v_anchor.id AND status <> 'failed';
      RETURN NEXT v_anchor;
    END IF;
  END LOOP;
END $$;
