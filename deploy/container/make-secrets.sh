#!/bin/sh
# The secrets deploy/compose.yaml reads, as files in deploy/secrets/ (a directory only its owner can enter; the files
# are readable inside it by the containers' own users). Random ones for the service; the chain's keys are anvil's
# well-known development accounts 0 (deployer) and 1 (relayer), for the demonstration chain only. Kept when present.
set -eu
dir=$(cd "$(dirname "$0")/.." && pwd)/secrets
install -d -m 0700 "$dir"
write() {
  [ -s "$dir/$1" ] && return 0
  printf %s "$2" >"$dir/$1"
  chmod 0644 "$dir/$1"
}
random() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }
write jwt_secret "$(random 32)"
write metrics_token "$(random 32)"
write pkcs11_pin "$(random 8)"
write postgres_password "$(random 16)"
write replication_password "$(random 16)"
write database_url "postgres://anchor:$(cat "$dir/postgres_password")@postgres:5432/anchor"
write deployer_private_key 0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80
write relayer_private_key 0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d
echo "secrets in $dir"
