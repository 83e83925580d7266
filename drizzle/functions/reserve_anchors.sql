-- Counts each anchor against its user's monthly quota (the user's own limit, set by an operator, before the plan's),
-- takes a nonce and stores the anchor holding it, item by item, in the caller's one transaction. A repeat of a
-- composite hash answers 'exists' before any quota is counted, so a client repeating a request learns its anchor's
-- state even when the month's quota is used up. An item whose composite hash is taken (or whose user is gone) is undone
-- on its own and reported; the others stand. The unsigned tx_hash prefix is UNSIGNED_PREFIX in src/db/schema.ts.
-- Each item: { userId, compositeHash, previousTxHash, encryptedPayload, period, attestation }, `attestation` being
-- null or { trust, verified, identityCommitment } (the service's attestation of the relaying account); p_plans:
-- { plan: monthly limit }. One row per item, `item` being its 1-based position in p_items.
--
-- Locks are taken in one global order, so that batches running at once (other relayers, other processes) never wait
-- on each other in a cycle: the relayer's nonce row first (a second batch of the same relayer waits here, holding
-- nothing), then each user's rows in ascending user id (items are processed in that order, a user's own in theirs).
CREATE OR REPLACE FUNCTION reserve_anchors(p_chain_id integer, p_relayer text, p_plans jsonb, p_default_limit integer,
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
    -- FOR KEY SHARE: the user's row is locked before its usage row, in the order an account's deletion locks them
    -- (users, then the cascade to anchor_usage), so a relay and a deletion wait for each other instead of deadlocking.
    SELECT COALESCE(u.monthly_limit, (p_plans ->> u.plan)::integer, p_default_limit) INTO quota_limit
    FROM users u WHERE u.id = v_user FOR KEY SHARE;
    IF NOT FOUND THEN
      -- The user was deleted since the request signed in.
      outcome := 'no_user';
      RETURN NEXT;
      CONTINUE;
    END IF;
    -- A composite hash anchored already is a repeat (or a conflict) whatever the quota: only a new anchor counts, and
    -- the caller answers it from the stored anchor. A race with an insert still ends in unique_violation below.
    IF EXISTS (SELECT 1 FROM anchors a WHERE a.composite_hash = v_item->>'compositeHash') THEN
      outcome := 'exists';
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
                             chain_id, relayer_address, nonce, identity_commitment, attested_trust, attested_verified)
        VALUES ('unsigned:' || gen_random_uuid(), v_item->>'compositeHash', v_item->>'previousTxHash',
                v_item->>'encryptedPayload', v_user, 'pending', p_chain_id, p_relayer, nonce,
                v_item->'attestation'->>'identityCommitment', v_item->'attestation'->>'trust',
                (v_item->'attestation'->>'verified')::boolean)
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
