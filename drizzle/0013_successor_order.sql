-- The text of its day: each function's current text is in drizzle/functions/, applied after the migrations.
-- verify_index as 0008 left it, but the successors a verification lists are the first ones relayed in a total order
-- (when relayed, then the hash), so that the pages after them (readSuccessorPage, GET /api/verify/:txHash/successors)
-- follow on without a gap or a repeat, however many share a millisecond (issue 38: spam successors must not hide a
-- real countersignature).
CREATE OR REPLACE FUNCTION verify_index(p_tx_hash text, p_max_depth integer, p_max_successors integer)
RETURNS TABLE (
  kind text,
  tx_hash text,
  composite_hash text,
  encrypted_payload text,
  payload_erased boolean,
  identity_commitment text,
  attested_trust text,
  attested_verified boolean
)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN QUERY
    WITH RECURSIVE walk AS (
      SELECT a.tx_hash, a.previous_tx_hash, a.composite_hash, a.encrypted_payload,
             a.payload_erased_at IS NOT NULL AS payload_erased, a.identity_commitment,
             a.attested_trust, a.attested_verified, 1 AS depth
      FROM anchors a WHERE a.tx_hash = p_tx_hash
      UNION ALL
      SELECT a.tx_hash, a.previous_tx_hash, a.composite_hash, NULL, false, a.identity_commitment, a.attested_trust,
             a.attested_verified, w.depth + 1
      FROM anchors a JOIN walk w ON a.tx_hash = w.previous_tx_hash
      WHERE w.depth < p_max_depth
    )
    SELECT found.kind, found.tx_hash, found.composite_hash, found.encrypted_payload, found.payload_erased,
           found.identity_commitment, found.attested_trust, found.attested_verified
    FROM (
      SELECT 'chain' AS kind, w.tx_hash, w.composite_hash, w.encrypted_payload, w.payload_erased,
             w.identity_commitment, w.attested_trust, w.attested_verified, w.depth AS position
      FROM walk w
      UNION ALL
      (SELECT 'successor', a.tx_hash, a.composite_hash, NULL, false, a.identity_commitment, a.attested_trust,
              a.attested_verified, 0
        FROM anchors a
        WHERE a.previous_tx_hash = p_tx_hash AND a.status <> 'failed'
        ORDER BY a.created_at, a.tx_hash LIMIT p_max_successors)
    ) AS found
    ORDER BY found.kind, found.position;
END $$;
