#!/bin/sh
# deploy/compose.yaml's deploy-contract: DocumentAnchors on the demonstration chain, once, with the relayer authorized
# (`npm run deploy`'s command). anvil's first account deploys it as its first transaction, so it lands at the address
# the instances are configured with; a chain that has it already is left alone.
set -eu
rpc=${RPC_URL:-http://chain:8545}
call() {
  node -e '
    const [rpc, method, ...params] = process.argv.slice(1)
    fetch(rpc, { method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })
      .then((r) => r.json()).then((body) => console.log(body.result), () => process.exit(1))' "$rpc" "$@"
}
until call eth_chainId 2>/dev/null | grep -q '^0x'; do sleep 1; done
code=$(call eth_getCode "$CONTRACT_ADDRESS" latest)
case $code in
0x*) ;;
*)
  echo "the chain did not answer eth_getCode: $code" >&2
  exit 1
  ;;
esac
if [ "$code" != "0x" ]; then
  echo "DocumentAnchors is at $CONTRACT_ADDRESS"
  exit 0
fi
deployed=$(node /app/bin/deploy.js --rpc "$rpc" --private-key-file /run/secrets/deployer_private_key \
  --relayer "$RELAYER_ADDRESS" | grep -E '^0x[0-9a-fA-F]{40}$' | tail -1)
lower() { printf %s "$1" | tr 'A-F' 'a-f'; }
if [ "$(lower "$deployed")" != "$(lower "$CONTRACT_ADDRESS")" ]; then
  echo "DocumentAnchors landed at $deployed, not at CONTRACT_ADDRESS $CONTRACT_ADDRESS: the chain was not new" >&2
  exit 1
fi
echo "DocumentAnchors deployed at $deployed, relayer $RELAYER_ADDRESS authorized"
