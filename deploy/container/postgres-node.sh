#!/bin/sh
# A PostgreSQL node of deploy/compose.yaml: `primary` or `standby`, run as the entrypoint of the official postgres
# image (as root, like its own, which it replaces). On an empty volume the primary runs initdb and creates the
# service's role and database and the replication role, with passwords from the secrets; the standby clones the
# primary (pg_basebackup) and follows it by streaming. Either then runs PostgreSQL as the postgres user.
set -eu
role=$1
data=${PGDATA:-/var/lib/postgresql/data}
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; }

install -d -o postgres -g postgres -m 0700 "$data"
install -d -o postgres -g postgres /var/run/postgresql
if [ ! -s "$data/PG_VERSION" ]; then
  case $role in
  primary)
    as_postgres initdb -D "$data" -U postgres --auth-local=peer --auth-host=scram-sha-256 >/dev/null
    # The compose network only. HAProxy's check of which node is the primary (deploy/haproxy-postgres.cfg) logs in
    # as postgres without a password: keep the database network to the balancer and the instances.
    # The replication role also logs in to ask the other node whether it is a primary (below).
    cat >>"$data/pg_hba.conf" <<'HBA'
host anchor anchor samenet scram-sha-256
host replication replicator samenet scram-sha-256
host postgres replicator samenet scram-sha-256
host postgres postgres samenet trust
HBA
    as_postgres pg_ctl -D "$data" -o "-c listen_addresses=''" -w start >/dev/null
    # The passwords are read by psql itself, from the secrets: never on a command line that `ps` shows.
    as_postgres psql -q -v ON_ERROR_STOP=1 -d postgres <<'SQL'
\set anchor_password `cat /run/secrets/postgres_password`
\set replication_password `cat /run/secrets/replication_password`
CREATE ROLE anchor LOGIN PASSWORD :'anchor_password';
CREATE DATABASE anchor OWNER anchor;
CREATE ROLE replicator REPLICATION LOGIN PASSWORD :'replication_password';
SQL
    as_postgres pg_ctl -D "$data" -m fast -w stop >/dev/null
    ;;
  standby)
    until pg_isready -q -h postgres-primary; do sleep 1; done
    PGPASSWORD=$(cat /run/secrets/replication_password) \
      as_postgres pg_basebackup -h postgres-primary -U replicator -D "$data" -R -X stream
    ;;
  *)
    echo "postgres-node.sh: primary or standby, not $role" >&2
    exit 2
    ;;
  esac
fi
# A node about to start as a primary while the other one is a primary (this was the primary before a failover, and
# was started again) would split the data: it refuses, and waits to be rebuilt as the standby.
if [ ! -e "$data/standby.signal" ]; then
  peer=postgres-standby
  [ "$role" = standby ] && peer=postgres-primary
  other_is_primary=$(PGPASSWORD=$(cat /run/secrets/replication_password) PGCONNECT_TIMEOUT=3 \
    psql -h "$peer" -U replicator -d postgres -tAc 'SELECT NOT pg_is_in_recovery()' 2>/dev/null || true)
  if [ "$other_is_primary" = t ]; then
    echo "postgres-node.sh: $peer is the primary now; this node does not start as a second one. Make it $peer's" \
      "standby: empty its volume, pg_basebackup -R from $peer into it, start it." >&2
    exit 1
  fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups -- postgres -D "$data" \
  -c listen_addresses='*' -c wal_level=replica -c max_wal_senders=5 -c wal_keep_size=256MB -c hot_standby=on
