CREATE TABLE "signer_certificates" (
	"serial" text PRIMARY KEY NOT NULL,
	"user_id" uuid,
	"certificate" text,
	"not_after" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"revocation_reason" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "pdf_signatures" ALTER COLUMN "cms" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "pdf_signatures" ALTER COLUMN "timestamp_time" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "pdf_signatures" ALTER COLUMN "timestamp_authority" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "signer_certificates" ADD CONSTRAINT "signer_certificates_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "signer_certificates_user_idx" ON "signer_certificates" USING btree ("user_id");