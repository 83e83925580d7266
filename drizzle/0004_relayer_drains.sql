CREATE TABLE "relayer_drains" (
	"chain_id" integer NOT NULL,
	"relayer_address" text NOT NULL,
	"since" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "relayer_drains_chain_id_relayer_address_pk" PRIMARY KEY("chain_id","relayer_address")
);
