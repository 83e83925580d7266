CREATE TABLE "anchor_usage" (
	"user_id" uuid NOT NULL,
	"period" text NOT NULL,
	"used" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "anchor_usage_user_id_period_pk" PRIMARY KEY("user_id","period")
);
--> statement-breakpoint
CREATE TABLE "anchors" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tx_hash" text NOT NULL,
	"composite_hash" text NOT NULL,
	"previous_tx_hash" text NOT NULL,
	"encrypted_payload" text NOT NULL,
	"user_id" uuid,
	"status" text DEFAULT 'pending' NOT NULL,
	"block_number" bigint,
	"chain_id" integer NOT NULL,
	"relayer_address" text NOT NULL,
	"nonce" bigint NOT NULL,
	"confirmed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "anchors_tx_hash_unique" UNIQUE("tx_hash"),
	CONSTRAINT "anchors_composite_hash_unique" UNIQUE("composite_hash")
);
--> statement-breakpoint
CREATE TABLE "auth_exchange_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"trust" text NOT NULL,
	"code_challenge" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cloud_signatures" (
	"id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"label" text DEFAULT '' NOT NULL,
	"base64_png" text DEFAULT '' NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "cloud_signatures_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE TABLE "cloud_text_snippets" (
	"id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"label" text DEFAULT '' NOT NULL,
	"text" text DEFAULT '' NOT NULL,
	"font_size" double precision DEFAULT 12 NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "cloud_text_snippets_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE TABLE "magic_links" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"email" text NOT NULL,
	"code" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used" boolean DEFAULT false NOT NULL,
	"failed_attempts" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "magic_links_code_unique" UNIQUE("code")
);
--> statement-breakpoint
CREATE TABLE "oauth_flows" (
	"state_hash" text PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"nonce" text NOT NULL,
	"code_verifier" text NOT NULL,
	"app_code_challenge" text,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "relay_transactions" (
	"tx_hash" text PRIMARY KEY NOT NULL,
	"anchor_id" uuid,
	"chain_id" integer NOT NULL,
	"relayer_address" text NOT NULL,
	"nonce" bigint NOT NULL,
	"raw_transaction" text NOT NULL,
	"max_fee_per_gas" text NOT NULL,
	"max_priority_fee_per_gas" text NOT NULL,
	"status" text DEFAULT 'signed' NOT NULL,
	"broadcast_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "relayer_nonces" (
	"chain_id" integer NOT NULL,
	"relayer_address" text NOT NULL,
	"next_nonce" bigint NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "relayer_nonces_chain_id_relayer_address_pk" PRIMARY KEY("chain_id","relayer_address")
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"token" text NOT NULL,
	"trust" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sessions_token_unique" UNIQUE("token")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"auth_provider" text DEFAULT 'email' NOT NULL,
	"provider_id" text,
	"wallet_address" text,
	"anchor_count" integer DEFAULT 0 NOT NULL,
	"plan" text DEFAULT 'free' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_email_unique" UNIQUE("email"),
	CONSTRAINT "users_wallet_address_unique" UNIQUE("wallet_address")
);
--> statement-breakpoint
ALTER TABLE "anchor_usage" ADD CONSTRAINT "anchor_usage_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "anchors" ADD CONSTRAINT "anchors_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "auth_exchange_codes" ADD CONSTRAINT "auth_exchange_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cloud_signatures" ADD CONSTRAINT "cloud_signatures_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cloud_text_snippets" ADD CONSTRAINT "cloud_text_snippets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "relay_transactions" ADD CONSTRAINT "relay_transactions_anchor_id_anchors_id_fk" FOREIGN KEY ("anchor_id") REFERENCES "public"."anchors"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "anchors_previous_tx_hash_idx" ON "anchors" USING btree ("previous_tx_hash");--> statement-breakpoint
CREATE INDEX "anchors_user_id_idx" ON "anchors" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "anchors_pending_idx" ON "anchors" USING btree ("status") WHERE "anchors"."status" = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "anchors_relayer_nonce_idx" ON "anchors" USING btree ("chain_id","relayer_address","nonce");--> statement-breakpoint
CREATE INDEX "anchors_confirmed_block_idx" ON "anchors" USING btree ("block_number") WHERE "anchors"."status" = 'confirmed';--> statement-breakpoint
CREATE INDEX "magic_links_email_idx" ON "magic_links" USING btree ("email","created_at");--> statement-breakpoint
CREATE INDEX "relay_transactions_anchor_idx" ON "relay_transactions" USING btree ("anchor_id");--> statement-breakpoint
CREATE INDEX "relay_transactions_nonce_idx" ON "relay_transactions" USING btree ("chain_id","relayer_address","nonce");--> statement-breakpoint
CREATE INDEX "relay_transactions_open_idx" ON "relay_transactions" USING btree ("chain_id","relayer_address","nonce") WHERE "relay_transactions"."status" in ('signed', 'broadcast');--> statement-breakpoint
CREATE INDEX "sessions_user_id_idx" ON "sessions" USING btree ("user_id");