-- The text of its day: each function's current text is in drizzle/functions/, applied after the migrations.
CREATE TABLE "deleted_account_usage" (
	"email_hash" text NOT NULL,
	"period" text NOT NULL,
	"used" integer NOT NULL,
	CONSTRAINT "deleted_account_usage_email_hash_period_pk" PRIMARY KEY("email_hash","period")
);
--> statement-breakpoint
ALTER TABLE "anchors" ALTER COLUMN "encrypted_payload" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "anchors" ADD COLUMN "payload_erased_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "anchors" ADD CONSTRAINT "anchors_payload_or_erased" CHECK (("anchors"."encrypted_payload" IS NULL) = ("anchors"."payload_erased_at" IS NOT NULL));--> statement-breakpoint
-- verify_index (0005) also says whether the requested anchor's ciphertext was erased with its signer's account, so a
-- verification can say so instead of showing no ciphertext without a reason.
DROP FUNCTION verify_index(text, integer, integer);--> statement-breakpoint
CREATE FUNCTION verify_index(p_tx_hash text, p_max_depth integer, p_max_successors integer)
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
        ORDER BY a.created_at LIMIT p_max_successors)
    ) AS found
    ORDER BY found.kind, found.position;
END $$;
