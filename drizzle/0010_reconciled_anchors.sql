ALTER TABLE "anchors" DROP CONSTRAINT "anchors_payload_or_erased";--> statement-breakpoint
ALTER TABLE "anchors" ADD COLUMN "reconciled_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "anchors" ADD CONSTRAINT "anchors_payload_or_erased" CHECK (("anchors"."encrypted_payload" IS NULL) = ("anchors"."payload_erased_at" IS NOT NULL OR "anchors"."reconciled_at" IS NOT NULL));