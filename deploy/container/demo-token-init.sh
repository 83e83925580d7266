#!/bin/sh
# The demonstration's PKI, once, in the `token` volume (deploy/compose.yaml's token-init): a SoftHSM2 token holding the
# signer CA's key (made on the token, never outside it), that key certified by a demonstration root whose own key is
# dropped once it has signed, and a time-stamping authority under a CA of its own with its revocation list. Production
# replaces all of it: a real token, a CA certificate from a root readers trust, a trusted TSA (docs/operations.md).
set -eu
if [ -f /token/ready ]; then
  echo "the token and the demonstration PKI are there"
  exit 0
fi
pin=$(cat /run/secrets/pkcs11_pin)
module=/usr/lib/softhsm/libsofthsm2.so
mkdir -p /token/tokens /token/tsa
printf 'directories.tokendir = /token/tokens\nobjectstore.backend = file\nlog.level = ERROR\n' >/token/softhsm2.conf
softhsm2-util --init-token --free --label anchors --pin "$pin" \
  --so-pin "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >/dev/null
pkcs11-tool --module "$module" --token-label anchors --login --pin "$pin" \
  --keypairgen --key-type EC:prime256v1 --label pdf-signing --id 01 >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat >ext.cnf <<'CNF'
[ signer_ca ]
basicConstraints = critical, CA:true, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[ tsa ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, timeStamping
crlDistributionPoints = URI:http://tsa:8318/ca.crl
CNF
# The signer CA: a CSR for the token's key through OpenSSL's PKCS#11 engine, certified by the demonstration root.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout root.key -out root.pem -days 3650 \
  -subj "/CN=docanchor demonstration root (not trusted)" \
  -addext "basicConstraints=critical,CA:true" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
openssl req -new -engine pkcs11 -keyform engine -key "pkcs11:token=anchors;object=pdf-signing;pin-value=$pin" \
  -subj "/CN=docanchor demonstration signer CA" -out ca.csr 2>/dev/null
openssl x509 -req -in ca.csr -CA root.pem -CAkey root.key -CAcreateserial -days 1825 -sha256 \
  -extfile ext.cnf -extensions signer_ca -out ca.pem 2>/dev/null
cat ca.pem root.pem >/token/pdf-signing-chain.pem

# The time-stamping authority: its own CA, its key and certificate, and the CA's (empty) revocation list.
cd /token/tsa
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 3650 \
  -subj "/CN=docanchor demonstration TSA CA (not trusted)" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tsa.key -out "$work/tsa.csr" \
  -subj "/CN=docanchor demonstration TSA" 2>/dev/null
openssl x509 -req -in "$work/tsa.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 1825 -sha256 \
  -extfile "$work/ext.cnf" -extensions tsa -out tsa.pem 2>/dev/null
cat >tsa.cnf <<'CNF'
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
serial = /token/tsa/serial
signer_cert = /token/tsa/tsa.pem
certs = /token/tsa/ca.pem
signer_key = /token/tsa/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
[ ca ]
default_ca = crl_ca
[ crl_ca ]
database = /token/tsa/index.txt
certificate = /token/tsa/ca.pem
private_key = /token/tsa/ca.key
default_md = sha256
default_crl_days = 3650
crlnumber = /token/tsa/crlnumber
CNF
echo 01 >serial
: >index.txt
echo 01 >crlnumber
openssl ca -gencrl -config tsa.cnf -out "$work/ca.crl.pem" 2>/dev/null
openssl crl -in "$work/ca.crl.pem" -outform DER -out ca.crl
touch /token/ready
echo "token 'anchors' with key pdf-signing, its chain in /token/pdf-signing-chain.pem, the TSA in /token/tsa"
