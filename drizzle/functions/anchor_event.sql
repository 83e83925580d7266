-- Records an event of an anchor for its owner, in the caller's transaction (src/events/, docs/api.md "Events"); an
-- anchor without an owner (recovered from the chain, or its account deleted) has no one to tell. Its data is what a
-- receiver needs to check the chain itself, taken from the anchor as it is now; `p_extra` adds to it. p_contract: the
-- contract the anchor's event was read from, lower-case.
CREATE OR REPLACE FUNCTION anchor_event(p_anchor_id uuid, p_type text, p_contract text, p_extra jsonb)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  -- The transaction id first, then the event's seq: the feed serves an event once every transaction whose id is
  -- below its own has ended, which covers every event with a lower seq only if ids are taken before seqs.
  PERFORM pg_current_xact_id();
  INSERT INTO events (id, user_id, type, data)
  SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), a.user_id, p_type,
         jsonb_build_object(
           'txHash', a.tx_hash, 'compositeHash', a.composite_hash, 'previousTxHash', a.previous_tx_hash,
           'chainId', a.chain_id, 'contractAddress', p_contract, 'blockNumber', a.block_number,
           'blockHash', a.block_hash, 'logIndex', a.log_index
         ) || COALESCE(p_extra, '{}'::jsonb)
  FROM anchors a
  WHERE a.id = p_anchor_id AND a.user_id IS NOT NULL;
END $$;
