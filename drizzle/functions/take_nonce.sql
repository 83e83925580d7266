-- The relayer's nonce authority: the lowest unsent filler's nonce if there is one (reused, so no gap stays), else the
-- next fresh one. The caller's transaction holds the nonce row (or the filler row) until it ends.
CREATE OR REPLACE FUNCTION take_nonce(p_chain_id integer, p_relayer text) RETURNS bigint
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
