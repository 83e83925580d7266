-- Stores signed transactions of reserved anchors before their broadcast. Each item: { anchorId, txHash, nonce, raw,
-- maxFee, maxPriority }. Returns the anchors it attached. An anchor someone else signed first (the monitor, finishing a
-- reservation whose request died) is left alone, and so is one that no longer holds the relayer and nonce its
-- transaction was signed for: a reconciliation with the chain may move an unsigned anchor off a nonce the chain
-- consumed while its request signs at the old one (the request answers the anchor as it stands, and the monitor signs
-- it at its new nonce).
CREATE OR REPLACE FUNCTION attach_signed(p_chain_id integer, p_relayer text, p_items jsonb) RETURNS SETOF uuid
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
      AND chain_id = p_chain_id AND relayer_address = p_relayer AND nonce = (v_item->>'nonce')::bigint
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
