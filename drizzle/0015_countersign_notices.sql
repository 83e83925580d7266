CREATE TABLE "notice_emails" (
	"event_seq" bigint PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"leased_until" timestamp (3) with time zone,
	"sent_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "notify_countersigned" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "notice_emails" ADD CONSTRAINT "notice_emails_event_seq_events_seq_fk" FOREIGN KEY ("event_seq") REFERENCES "public"."events"("seq") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notice_emails" ADD CONSTRAINT "notice_emails_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "notice_emails_due_idx" ON "notice_emails" USING btree ("next_attempt_at") WHERE "notice_emails"."sent_at" IS NULL;