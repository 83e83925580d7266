CREATE TABLE "pdf_signatures" (
	"anchor_id" uuid PRIMARY KEY NOT NULL,
	"digest" text NOT NULL,
	"cms" text NOT NULL,
	"timestamp_time" timestamp (3) with time zone NOT NULL,
	"timestamp_authority" text NOT NULL,
	"block_time" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "pdf_signatures" ADD CONSTRAINT "pdf_signatures_anchor_id_anchors_id_fk" FOREIGN KEY ("anchor_id") REFERENCES "public"."anchors"("id") ON DELETE cascade ON UPDATE no action;