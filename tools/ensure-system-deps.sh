#!/usr/bin/env bash
# Makes sure the system programs the end-to-end suite runs against are present: CFSSL 1.2.0
# (`cfssl`, `multirootca` from Debian's golang-cfssl), SoftHSMv2 (a real PKCS#11 module), OpenSC's
# pkcs11-tool, openssl (the independent verifier), curl + jq for the documented examples, PostgreSQL's
# server binaries (the certificate store's tests start throwaway clusters with initdb/pg_ctl), the
# sqlite3 CLI and HAProxy. Idempotent: does nothing when all are there.
set -euo pipefail
missing=()
command -v cfssl >/dev/null || missing+=(golang-cfssl)
command -v multirootca >/dev/null || missing+=(golang-cfssl)
command -v softhsm2-util >/dev/null || missing+=(softhsm2)
command -v pkcs11-tool >/dev/null || missing+=(opensc)
command -v openssl >/dev/null || missing+=(openssl)
# The docs examples (docs/api.md) are run as written, with curl and jq.
command -v curl >/dev/null || missing+=(curl)
command -v jq >/dev/null || missing+=(jq)
# docs/deploy.md's systemd unit is checked with systemd-analyze verify, its Prometheus YAML with yq.
command -v systemd-analyze >/dev/null || missing+=(systemd)
command -v yq >/dev/null || missing+=(yq)
# The certificate store: PostgreSQL server binaries (any version under /usr/lib/postgresql) and sqlite3.
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
command -v sqlite3 >/dev/null || missing+=(sqlite3)
# Several instances on one store behind a real load balancer (test/store-many-instances.test.ts).
# Debian installs it in /usr/sbin, which is not on every user's PATH.
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
# better-sqlite3 is compiled from source by npm ci (no prebuilt download here).
command -v g++ >/dev/null || missing+=(g++)
command -v make >/dev/null || missing+=(make)
command -v python3 >/dev/null || missing+=(python3)
[ ${#missing[@]} -eq 0 ] && exit 0
pkgs=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
if [ "$(id -u)" -ne 0 ]; then
  echo "certsmith tests need: $pkgs -- run: sudo apt-get update && sudo apt-get install -y $pkgs" >&2
  exit 1
fi
echo "installing system packages for the test suite: $pkgs" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs ca-certificates >/dev/null
