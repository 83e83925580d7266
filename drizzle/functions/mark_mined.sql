-- Records mined anchor transactions. Each item: { anchorId, txHash, blockNumber, status ('confirmed' or 'failed') }.
-- The mined hash may be a replacement of the one the anchor held; its other transactions become 'replaced'. Returns
-- the updated anchors. The transitions it makes (mined, reverted; minedHash, outmined) are listed in
-- src/relayer/outbox/transitions.ts.
CREATE OR REPLACE FUNCTION mark_mined(p_items jsonb) RETURNS SETOF anchors
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
