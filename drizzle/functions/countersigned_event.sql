-- Tells the owners of the anchor an anchor countersigns (its previous transaction) that someone signed after them,
-- once, when it is first confirmed; not an owner who countersigned their own anchor.
CREATE OR REPLACE FUNCTION countersigned_event(p_anchor_id uuid, p_contract text)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_counter anchors;
  v_previous_id uuid;
BEGIN
  SELECT * INTO v_counter FROM anchors WHERE id = p_anchor_id;
  SELECT p.id INTO v_previous_id FROM anchors p
  WHERE p.tx_hash = v_counter.previous_tx_hash AND p.user_id IS DISTINCT FROM v_counter.user_id;
  IF v_previous_id IS NOT NULL THEN
    PERFORM anchor_event(v_previous_id, 'anchor.countersigned', p_contract, jsonb_build_object(
      'countersignature', jsonb_build_object(
        'txHash', v_counter.tx_hash, 'compositeHash', v_counter.composite_hash, 'blockNumber', v_counter.block_number
      )
    ));
  END IF;
END $$;
