-- Records mined anchor transactions. Each item: { anchorId, txHash, blockNumber, blockHash, logIndex, status
-- ('confirmed' or 'failed'), contract }. The mined hash may be a replacement of the one the anchor held; its other
-- transactions become 'replaced'. Returns the updated anchors. The transitions it makes (mined, reverted; minedHash,
-- outmined) are listed in src/relayer/outbox/transitions.ts, with the events they record in the same transaction:
-- `anchor.confirmed` when the anchor was not confirmed or is now in another block (a reorg), `anchor.countersigned`
-- for the owner of the anchor it follows when first confirmed, `anchor.failed` when it first fails. Recording the
-- same block again records nothing.
CREATE OR REPLACE FUNCTION mark_mined(p_items jsonb) RETURNS SETOF anchors
LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
  v_was anchors;
  v_anchor anchors;
BEGIN
  -- In anchor id order: a relay and another process's monitor may record the same anchors at once, and rows locked in
  -- one order cannot deadlock.
  FOR v_item IN
    SELECT e.value FROM jsonb_array_elements(p_items) AS e (value) ORDER BY (e.value->>'anchorId')::uuid
  LOOP
    SELECT * INTO v_was FROM anchors WHERE id = (v_item->>'anchorId')::uuid FOR UPDATE;
    IF NOT FOUND THEN
      CONTINUE;
    END IF;
    UPDATE anchors SET status = v_item->>'status', tx_hash = v_item->>'txHash',
           block_number = (v_item->>'blockNumber')::bigint, block_hash = v_item->>'blockHash',
           log_index = (v_item->>'logIndex')::integer, confirmed_at = COALESCE(confirmed_at, now()),
           finalized_at = CASE WHEN block_hash IS NOT DISTINCT FROM v_item->>'blockHash' THEN finalized_at END,
           updated_at = now()
    WHERE id = v_was.id
    RETURNING * INTO v_anchor;
    UPDATE relay_transactions
    SET status = CASE WHEN relay_transactions.tx_hash = v_item->>'txHash' THEN 'mined' ELSE 'replaced' END
    WHERE anchor_id = v_anchor.id AND status <> 'failed';
    IF v_anchor.status = 'confirmed'
       AND (v_was.status <> 'confirmed' OR v_was.block_hash IS DISTINCT FROM v_anchor.block_hash) THEN
      PERFORM anchor_event(v_anchor.id, 'anchor.confirmed', v_item->>'contract', NULL);
      IF v_was.status <> 'confirmed' THEN
        PERFORM countersigned_event(v_anchor.id, v_item->>'contract');
      END IF;
    ELSIF v_anchor.status = 'failed' AND v_was.status <> 'failed' THEN
      PERFORM anchor_event(v_anchor.id, 'anchor.failed', v_item->>'contract', NULL);
    END IF;
    RETURN NEXT v_anchor;
  END LOOP;
END $$;
